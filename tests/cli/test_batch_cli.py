"""The issue's batch: 3 scenarios × 3 personas × 1 assistant × 5 runs through `workbench worker`
processes, one of them SIGKILLed mid-batch; every planned episode is stored exactly once and the
CLI's results table and drill-down say what the stored episodes say."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli._main import cli
from storage import Project

MANIFEST = {
    "format": "workbench-batch/1", "name": "pilot45",
    "scenarios": ["cook-patty", "cheeseburger", "prep-board"],
    "personas": ["novice", "expert", "balanced"], "assistants": ["oracle"], "runs": 5,
}  # fmt: skip
LEASE_S = 1.0


def start_worker(root: Path, log: Path) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "app.cli", "worker", "--project", str(root), "--drain",
           "--concurrency", "2", "--lease", str(LEASE_S)]  # fmt: skip
    with log.open("ab") as err:
        return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)


def wait_until(cond: Callable[[], bool], timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def cli_json(*args: str) -> dict[str, object]:
    res = CliRunner().invoke(cli, [*args, "--json"])
    assert res.exit_code == 0, res.output
    return dict(json.loads(res.output))


def test_batch_survives_a_sigkill_with_every_episode_stored_once(tmp_path: Path) -> None:
    root, log = tmp_path / "p", tmp_path / "worker.log"
    (tmp_path / "m.json").write_text(json.dumps(MANIFEST))
    queued = cli_json("batch", "run", str(tmp_path / "m.json"), "--project", str(root),
                      "--queue-only")  # fmt: skip
    batch_id = str(queued["batch"])
    assert len(queued["jobs"]) == 45  # type: ignore[arg-type]

    def stored() -> int:
        with Project.open(root) as p:
            return p.batches.status(batch_id)["stored"]

    def running() -> bool:
        with Project.open(root) as p:
            return p.batches.status(batch_id)["running"] >= 1

    # SIGKILL mid-episode, no goodbye; its leases just run out. Episodes take ~0.1 s, so a
    # kill can land between two; then the next worker gets one more try (at most a few).
    for _ in range(5):
        proc = start_worker(root, log)
        try:
            wait_until(lambda: stored() >= 8 and running())
        finally:
            proc.kill()
        proc.wait()
        if running():
            break
        time.sleep(LEASE_S)
    with Project.open(root) as p:
        at_kill = p.batches.status(batch_id)
        # nothing half-written: a stored episode is linked, an unlinked one does not exist
        assert len(p.episodes.list(reference=False)) == at_kill["stored"] < 45
        assert at_kill["running"] >= 1, "the kill should land while episodes run"
        killed = [c.job_id for c in p.batches.cells(batch_id)
                  if p.jobs.get(int(str(c.job_id))).status.value == "running"]  # fmt: skip
    second = start_worker(root, log)
    assert second.wait(timeout=300) == 0, log.read_text()[-2000:]

    with Project.open(root) as p:
        cells = p.batches.cells(batch_id)
        ids = [c.episode_id for c in cells]
        assert None not in ids and len(set(ids)) == 45
        assert sorted(e.id for e in p.episodes.list(reference=False)) == sorted(str(i) for i in ids)
        assert p.batches.status(batch_id)["done"] == 45
        for job_id in killed:  # the killed attempt spent one; the rerun finished it
            assert p.jobs.get(int(str(job_id))).attempts == 2
        success = {str(c.episode_id): p.episodes.metrics(str(c.episode_id))["success"]
                   for c in cells}  # fmt: skip
        runs = [[c for c in cells if c.run == r] for r in range(5)]

    status = cli_json("batch", "status", batch_id[:8], "--project", str(root))
    (row,) = status["rows"]  # type: ignore[misc]
    assert (row["assistant"], row["planned"], row["stored"]) == ("oracle", 45, 45)
    cell = row["metrics"]["success"]
    per_run = [statistics.fmean(success[str(c.episode_id)] for c in run) for run in runs]
    assert cell["mean"] == pytest.approx(statistics.fmean(per_run))
    assert cell["sd"] == pytest.approx(statistics.pstdev(per_run))
    # drill-down: each run's number names exactly the nine episodes behind it
    for r, run in enumerate(cell["runs"]):
        assert sorted(run["episodes"]) == sorted(str(c.episode_id) for c in runs[r])
        assert run["n"] == 9
    by = cli_json("metrics", batch_id, "--project", str(root), "--by", "scenario,persona")
    assert len(by["rows"]) == 9  # type: ignore[arg-type]
    some = str(cells[0].episode_id)
    one = cli_json("metrics", some, "--project", str(root))
    assert one["metrics"]["success"] == success[some]  # type: ignore[index]
