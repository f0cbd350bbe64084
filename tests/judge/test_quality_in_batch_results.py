"""Interaction quality in a batch's results: a batch runs, the IQ judge grades its episodes as
jobs, and the table's quality column pools every graded round's Q_r per run — recomputed from
stored verdicts with no further call."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

import judge  # noqa: F401  (adds the quality items to results tables)
from judge import quality_scores, queue_quality
from judge.models.loopback import FakeServer
from sim.batch import parse_manifest, queue_batch, results_table
from sim.metrics import round_score
from storage import Project, run_worker
from tests.judge.quality_judge_helpers import Verdicts, add_judges


def test_quality_column_pools_rounds_per_run(tmp_path: Path) -> None:
    root = tmp_path / "p"
    manifest = parse_manifest({
        "format": "workbench-batch/1", "name": "q", "scenarios": ["cook-patty"],
        "personas": ["novice", "expert"], "assistants": ["oracle"], "runs": 2,
    })  # fmt: skip
    # judge-b fails situational relevance on every second round: the runs differ, and a
    # round's Q_r is the mean of its two judges
    mixed = {("judge-b", k): "P F P NA P P NA NA NA P" for k in range(0, 40, 2)}
    verdicts = Verdicts(mixed)
    with FakeServer(verdicts) as srv:
        with Project.create(root) as p:
            batch_id, _ = queue_batch(p, manifest)
            add_judges(p, srv, "judge-a", "judge-b")
        run_worker(root, drain=True, kind_modules=["sim.batch"], log=lambda _r: None)
        with Project.open(root) as p:
            before = results_table(p, batch_id).rows[0].summaries["quality"]
            assert before.mean is None  # not graded yet: nothing to score, not 0
            cells = p.batches.cells(batch_id)
            queue_quality(p, [str(c.episode_id) for c in cells], profiles=["judge-a", "judge-b"])
        stats = run_worker(root, drain=True, kind_modules=["judge"], log=lambda _r: None)
        assert stats.done == 4 and stats.failed == 0
        calls = len(verdicts.calls)
        with Project.open(root) as p:
            q = results_table(p, batch_id).rows[0].summaries["quality"]
            per_run = []
            for r in range(2):
                rounds = quality_scores(p, [str(c.episode_id) for c in cells if c.run == r]).rounds
                per_run.append(
                    statistics.fmean(s for x in rounds if (s := round_score(x)) is not None)
                )
            assert q.mean == pytest.approx(statistics.fmean(per_run))
            assert q.sd == pytest.approx(statistics.pstdev(per_run))
            assert q.mean is not None and 0 < q.mean < 1
            assert sorted(q.episodes) == sorted(str(c.episode_id) for c in cells)
        assert len(verdicts.calls) == calls  # the table came from stored verdicts only
