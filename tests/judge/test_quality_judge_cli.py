"""``metrics quality EPISODE|BATCH --profile A --profile B`` queues the IQ judge's jobs."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from annotation import UserError
from app.cli._quality_cmd import quality
from judge import QUALITY_KIND
from judge.models.loopback import FakeServer
from storage import BatchCellRecord, Project
from tests.judge.quality_judge_helpers import Verdicts, add_judges, make_episode


def test_an_episode_or_a_batch_queues_one_job_per_stored_episode(tmp_path: Path) -> None:
    root = tmp_path / "p"
    with Project.create(root) as p, FakeServer(Verdicts()) as srv:
        add_judges(p, srv, "judge-a", "judge-b")
        one, two = make_episode(p), make_episode(p, persona="expert")
        cells = [BatchCellRecord(0, run, "cook-patty", "novice", "oracle", "fixed", run)
                 for run in range(3)]  # fmt: skip
        batch = p.batches.create("iq", {"name": "iq"}, cells)
        p.batches.store_episode(batch, 0, 0, one)
        p.batches.store_episode(batch, 0, 2, two)  # run 1 is not stored yet
        empty = p.batches.create("later", {"name": "later"}, cells[:1])
    run = CliRunner().invoke
    args = ["--project", str(root), "--profile", "judge-a", "--profile", "judge-b"]
    out = run(quality, [one[:8], *args, "--batch", "first", "--spend-cap", "0.5"])
    assert out.exit_code == 0, out.output
    assert "queued 1 interaction-quality job(s) in batch first" in out.output
    out = run(quality, [batch[:8], *args])
    assert out.exit_code == 0 and "queued 2 interaction-quality job(s)" in out.output
    with Project.open(root) as p:
        jobs = p.jobs.query()
    assert {j.kind for j in jobs} == {QUALITY_KIND} and len(jobs) == 3
    assert jobs[0].payload == {"episode_id": one, "profiles": ["judge-a", "judge-b"],
                               "spend_cap_usd": 0.5}  # fmt: skip
    assert [j.payload["episode_id"] for j in jobs[1:]] == [one, two]
    for target, extra, match in (
        ("nothing-like-it", args, "neither an episode nor a batch"),
        (empty[:8], args, "has no stored episode yet"),
        (one, args[:4], "two different judge profiles"),
    ):
        out = run(quality, [target, *extra])
        assert out.exit_code != 0 and isinstance(out.exception, UserError), out.output
        assert match in str(out.exception)
    with pytest.raises(SystemExit):  # a profile is required
        quality.main([one, "--project", str(root)], standalone_mode=True)
