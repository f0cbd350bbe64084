"""``workbench worker`` as a process (SIGKILL, SIGTERM) and ``workbench jobs``."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli._main import cli
from storage import JobStatus, Project

LEASE_S = 2.0
RECLAIM_SLACK_S = 3.0  # once a dead worker's lease ends, a live worker takes the job soon


def start_worker(root: Path, log: Path, *extra: str) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "app.cli", "worker", "--project", str(root), *extra]
    with log.open("wb") as err:  # the child keeps its own handle
        return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)


def pid_of(worker_id: str) -> int:
    return int(worker_id.rsplit(":", 2)[1])


def wait_for(cond: Callable[[], bool], timeout: float, sample: Callable[[], None]) -> None:
    deadline = time.monotonic() + timeout
    while True:
        sample()
        if cond():
            return
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


@pytest.mark.slow
def test_sigkill_three_times_loses_and_duplicates_nothing(
    project_root: Path, tmp_path: Path
) -> None:
    rng = random.Random(3)
    payloads = [{"seconds": round(rng.uniform(0.2, 0.4), 3), "n": n} for n in range(50)]
    killed: set[int] = set()
    logs: list[Path] = []
    procs: list[subprocess.Popen[bytes]] = []
    with Project.open(project_root) as p:
        p.jobs.enqueue("diag.sleep", payloads, batch="kill", max_attempts=10)

        def sample() -> None:
            """Every running job has a live lease, unless its worker was killed: then it is
            taken over soon after the lease ends."""
            now = time.time()
            for j in p.jobs.query(status=JobStatus.RUNNING):
                assert j.lease_owner is not None and j.lease_expires is not None
                if pid_of(j.lease_owner) in killed:
                    assert now < j.lease_expires + RECLAIM_SLACK_S, f"job {j.id} abandoned"
                else:
                    assert j.lease_expires > now, f"job {j.id}: live worker, dead lease"

        def done() -> int:
            return p.jobs.counts(batch="kill")["done"]

        def start(*extra: str) -> subprocess.Popen[bytes]:
            logs.append(tmp_path / f"worker-{len(logs)}.log")
            procs.append(start_worker(project_root, logs[-1], *extra))
            return procs[-1]

        def busy(proc: subprocess.Popen[bytes]) -> bool:
            running = p.jobs.query(status=JobStatus.RUNNING)
            return any(pid_of(j.lease_owner or "::0") == proc.pid for j in running)

        common = ("--concurrency", "4", "--lease", str(LEASE_S))
        try:
            for threshold in (8, 20, 32):
                proc = start(*common)
                wait_for(lambda: done() >= threshold and busy(proc), 30, sample)  # noqa: B023
                proc.send_signal(signal.SIGKILL)  # mid-job, mid-heartbeat, maybe mid-commit
                proc.wait()
                killed.add(proc.pid)
            final = start(*common, "--drain")
            wait_for(lambda: final.poll() is not None, 60, sample)
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        assert final.returncode == 0, logs[-1].read_text()

        jobs = p.jobs.query(batch="kill")
        assert p.jobs.counts(batch="kill") == {
            "queued": 0, "running": 0, "done": 50, "failed": 0, "cancelled": 0
        }  # fmt: skip
        assert sorted(j.result_ref or "" for j in jobs) == sorted(f"diag:{n}" for n in range(50))
        assert sum(j.attempts > 1 for j in jobs) >= 3  # each kill interrupted at least one job

    # Exactly once: no job was completed by two workers (a killed worker may have committed
    # a completion without getting to log it, so some jobs have no done line at all).
    done_lines: Counter[int] = Counter()
    for log in logs:
        lines = log.read_text().splitlines()
        for i, line in enumerate(lines):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                assert log != logs[-1] and i == len(lines) - 1  # cut off by SIGKILL
                continue
            if record["event"] == "job.done":
                done_lines[record["job"]] += 1
    assert max(done_lines.values()) == 1
    assert sum(done_lines.values()) >= 50 - 3 * 4


def test_sigterm_releases_the_running_job_and_exits_zero(
    project_root: Path, tmp_path: Path
) -> None:
    with Project.open(project_root) as p:
        (jid,) = p.jobs.enqueue("diag.sleep", [{"seconds": 60}], max_attempts=1)
        proc = start_worker(project_root, tmp_path / "w.log", "--grace", "0.3")
        try:
            deadline = time.monotonic() + 20
            while p.jobs.get(jid).status is not JobStatus.RUNNING:
                assert time.monotonic() < deadline
                time.sleep(0.05)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=10) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
        back = p.jobs.get(jid)
        assert back.status is JobStatus.QUEUED and back.attempts == 0
    events = [json.loads(line)["event"] for line in (tmp_path / "w.log").read_text().splitlines()]
    assert "job.released" in events and events[-1] == "worker.stop"


def test_jobs_status_cancel_and_retry(project_root: Path) -> None:
    with Project.open(project_root) as p:
        a = p.jobs.enqueue("diag.echo", [{"n": n} for n in range(3)], batch="a")
        b = p.jobs.enqueue("diag.echo", [{"n": n} for n in range(2)], batch="b")
        owner = p.jobs.claim("w", 30).lease_owner  # a[0]
        p.jobs.fail(a[0], owner, "endpoint unreachable")
    runner = CliRunner()
    project = ["--project", str(project_root)]

    res = runner.invoke(cli, ["jobs", "status", *project, "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["counts"] == {"queued": 4, "running": 0, "done": 0, "failed": 1, "cancelled": 0}
    assert data["failed"] == [
        {"id": a[0], "kind": "diag.echo", "batch": "a", "attempts": 1,
         "error": "endpoint unreachable", "ran_on": "w"}  # the claiming worker's host
    ]  # fmt: skip
    assert data["ran_on"] == {}  # where *finished* jobs ran: none yet
    res = runner.invoke(cli, ["jobs", "status", *project, "--batch", "b", "--json"])
    assert json.loads(res.output)["counts"]["queued"] == 2

    res = runner.invoke(cli, ["jobs", "cancel", *project, "--batch", "a"])
    assert res.exit_code == 0 and "cancelled 2 job(s)" in res.output  # the failed one stays
    res = runner.invoke(cli, ["jobs", "cancel", *project, str(b[1])])
    assert "cancelled 1 job(s)" in res.output
    res = runner.invoke(cli, ["jobs", "retry", *project, "--batch", "a"])
    assert "queued 3 job(s) again" in res.output

    res = runner.invoke(cli, ["jobs", "status", *project])
    assert res.exit_code == 0
    assert "queued: 4" in res.output and "cancelled: 1" in res.output

    res = runner.invoke(cli, ["jobs", "retry", *project])
    assert res.exit_code == 2 and "either --batch or job ids" in res.output


def test_user_errors_exit_2(project_root: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["worker", "--project", str(tmp_path / "nowhere"), "--drain"])
    assert res.exit_code == 2 and "not a workbench project" in res.output
    res = runner.invoke(cli, ["worker", "--project", str(project_root), "--kind", "no.such"])
    assert res.exit_code == 2 and "unknown job kind 'no.such'" in res.output
    res = runner.invoke(cli, ["jobs", "status", "--project", str(tmp_path / "nowhere")])
    assert res.exit_code == 2
