"""Workers under faults: suspended past their lease (SIGSTOP), killed on every attempt (SIGKILL),
and the money they spent, counted from the calls the loopback endpoint answered.

The worker is a real ``workbench worker`` process, the endpoint a real HTTP server on 127.0.0.1
playing a judge, and the project a real SQLite file. Timing decides only *where* a fault lands,
never what is asserted.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from app.cli._main import cli
from judge import ModelProfile, queue_judge, save_profile
from judge.models.loopback import Delay, FakeServer, Reply
from judge.video.loopback import wire_responder
from storage import JobStatus, JudgeRuns, Project, import_cases

KEY = "sk-test-faults-0b1c"
PRICE_IN, PRICE_OUT = 3.0, 15.0  # US$ per million tokens
LEASE_S = 1.5
CALL_S = 0.12  # each reply takes this long, so a video's ~17 calls span a couple of seconds

pytestmark = pytest.mark.slow


def slow_judge() -> Callable[[dict[str, Any], int], Delay]:
    play = wire_responder()

    def respond(body: dict[str, Any], n: int) -> Delay:
        reply: Reply = play(body, n)
        return Delay(CALL_S, reply)

    return respond


def setup_project(root: Path, cases_dir: Path, srv: FakeServer, *, max_attempts: int) -> list[int]:
    with Project.create(root) as p:
        import_cases(p, cases_dir)
        save_profile(
            p.profiles,
            ModelProfile(
                name="vlm", base_url=srv.base_url, model="fake-vlm", api_key_env="WB_TEST_API_KEY",
                timeout_s=60, max_retries=0, schema_retries=1, price_in_per_mtok=PRICE_IN,
                price_out_per_mtok=PRICE_OUT, max_output_tokens=64, spend_cap_usd=1.0,
            ),
        )  # fmt: skip
        videos = [v.id for v in p.videos()]
        _, ids = queue_judge(
            p, videos, profile="vlm", batch="b", max_attempts=max_attempts, retry_backoff_s=0.1,
        )  # fmt: skip
    return ids


def start_worker(root: Path, log: Path, concurrency: int) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "app.cli", "worker", "--project", str(root), "--drain",
           "--concurrency", str(concurrency), "--lease", str(LEASE_S)]  # fmt: skip
    env = {**os.environ, "WB_TEST_API_KEY": KEY}
    with log.open("ab") as err:
        return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)


def wait_until(cond: Callable[[], bool], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def recorded_calls_usd(root: Path) -> float:
    with Project.open(root) as p:
        return float(
            p.db.execute("SELECT COALESCE(SUM(cost_usd), 0) FROM judge_calls").fetchone()[0]
        )


def status_json(root: Path) -> dict[str, Any]:
    res = CliRunner().invoke(cli, ["judge", "status", "--project", str(root), "--json"])
    assert res.exit_code == 0, res.output
    return dict(json.loads(res.output))


def assert_json_lines(log: Path) -> None:
    for line in log.read_text().splitlines():
        json.loads(line)  # every worker log line is one JSON object


def test_suspended_worker_resumes_without_paying_twice(tmp_path: Path, cases_dir: Path) -> None:
    """SIGSTOP past the lease, three rounds, at concurrency > jobs: the idle threads of the same
    worker re-claim the suspended jobs on resume; the old claims must stop at once."""
    rng = random.Random(10)
    root, log = tmp_path / "p", tmp_path / "worker.log"
    with FakeServer(slow_judge(), expected_key=KEY, models={"fake-vlm"}) as srv:
        ids = setup_project(root, cases_dir, srv, max_attempts=6)
        proc = start_worker(root, log, concurrency=len(ids) + 2)
        try:
            for _ in range(3):
                seen = len(srv.answered)
                wait_until(lambda s=seen: len(srv.answered) >= s + rng.randint(2, 8))
                proc.send_signal(signal.SIGSTOP)
                time.sleep(LEASE_S * 2.2)  # every lease of this worker has now run out
                proc.send_signal(signal.SIGCONT)
            assert proc.wait(timeout=180) == 0
        finally:
            proc.kill()
        billed = srv.billed_usd(PRICE_IN, PRICE_OUT)
    with Project.open(root) as p:
        runs = JudgeRuns(p.db)
        for jid in ids:
            job = p.jobs.get(jid)
            assert job.status is JobStatus.DONE, (jid, job.error)
            mine = [r for r in runs.runs(job.payload["video_id"]) if r.job_id == jid]
            assert [r.status for r in mine].count("done") == 1, [r.status for r in mine]
            assert "running" not in {r.status for r in mine}
        assert p.jobs.spend() == pytest.approx(billed, abs=1e-9)
    assert billed > 0 and recorded_calls_usd(root) == pytest.approx(billed, abs=1e-9)
    assert status_json(root)["cost_usd"] == pytest.approx(billed, abs=1e-6)
    assert_json_lines(log)


def test_job_killed_on_every_attempt_ends_failed_and_paid_for(
    tmp_path: Path, cases_dir: Path
) -> None:
    root, log = tmp_path / "p", tmp_path / "worker.log"
    with FakeServer(slow_judge(), expected_key=KEY, models={"fake-vlm"}) as srv:
        (jid, *rest) = setup_project(root, cases_dir, srv, max_attempts=2)
        with Project.open(root) as p:  # one job is enough: the others are cancelled
            p.jobs.cancel(rest)
        for attempt in (1, 2):
            proc = start_worker(root, log, concurrency=1)

            def calls_of_attempt(n: int = attempt) -> bool:
                with Project.open(root) as p:
                    job = p.jobs.get(jid)
                    row = p.db.execute(
                        "SELECT COUNT(*) FROM judge_calls c JOIN judge_runs r ON r.id = c.run_id "
                        "WHERE r.job_id = ?", [jid],
                    ).fetchone()  # fmt: skip
                    return job.attempts == n and row[0] >= 3 * n

            try:
                wait_until(calls_of_attempt)
            finally:
                proc.kill()  # SIGKILL: no goodbye, the lease just runs out
                proc.wait()
            time.sleep(LEASE_S + 0.2)
        final = start_worker(root, log, concurrency=1)
        assert final.wait(timeout=60) == 0
    with Project.open(root) as p:
        job = p.jobs.get(jid)
        assert job.status is JobStatus.FAILED and "gave up after 2 attempt(s)" in (job.error or "")
        runs = [r for r in JudgeRuns(p.db).runs(job.payload["video_id"]) if r.job_id == jid]
        assert len(runs) == 2 and {r.status for r in runs} <= {"failed", "abandoned"}
        recorded = recorded_calls_usd(root)
        assert recorded > 0 and job.cost_usd == pytest.approx(recorded, abs=1e-12)
        assert sum(r.cost_usd for r in runs) == pytest.approx(recorded, abs=1e-12)
    assert status_json(root)["cost_usd"] == pytest.approx(recorded, abs=1e-6)
    assert_json_lines(log)
