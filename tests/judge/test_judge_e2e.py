"""The judge end to end: queue → worker process → loopback OpenAI-compatible server → stored runs.

Two acceptance checks of issue 3 live here: the API key never reaches a file of the project or a
log line, and against a fault-injecting server every job ends done or failed with a reason a
user can act on, with bounded retries and the spend cap never exceeded.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from judge import ModelProfile, queue_judge, save_profile
from judge.models.loopback import Delay, Drop, FakeServer, Malformed, Reply, Status
from judge.video.loopback import wire_responder
from storage import JobStatus, JudgeRuns, Project, import_cases, run_worker

KEY = "sk-test-DO-NOT-LEAK-4f9c2b7e"
REPO = Path(__file__).resolve().parents[2]


def make_project(root: Path, cases_dir: Path) -> Path:
    with Project.create(root) as p:
        import_cases(p, cases_dir)
    return root


def test_api_key_never_lands_in_project_files_or_logs(tmp_path: Path, cases_dir: Path) -> None:
    project = make_project(tmp_path / "p", cases_dir)
    with FakeServer(wire_responder(), expected_key=KEY) as srv:
        with Project.open(project) as p:
            save_profile(
                p.profiles,
                ModelProfile(name="loop", base_url=srv.base_url, model="fake-vlm",
                             api_key_env="WB_TEST_API_KEY", price_in_per_mtok=0.5,
                             price_out_per_mtok=2.0),
            )  # fmt: skip
            queue_judge(p, [v.id for v in p.videos()], profile="loop")
        env = os.environ | {"WB_TEST_API_KEY": KEY}
        out = subprocess.run(
            [sys.executable, "-m", "app.cli", "worker", "--project", str(project),
             "--drain", "--concurrency", "3", "-v"],
            env=env, cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        used = {r.authorization for r in srv.chat_requests}
    assert out.returncode == 0, out.stderr[-2000:]
    assert used == {f"Bearer {KEY}"}  # the key was really used ...
    with Project.open(project) as p:
        assert p.jobs.counts()["done"] == 3
        from storage import to_csv, to_json

        exports = to_csv(p) + to_json(p)
    logs = out.stdout + out.stderr
    assert '"event": "job.done"' in logs or '"event":"job.done"' in logs
    assert KEY not in logs and KEY not in exports  # ... and never written down
    leaked = [f for f in project.rglob("*") if f.is_file() and KEY.encode() in f.read_bytes()]
    assert leaked == []


# ---- faults ---------------------------------------------------------------------------------

CAP = 0.05


def faulty_responder() -> Any:
    """Behaviour chosen by the requested model name, so one server serves every profile."""
    good = wire_responder()
    counts: dict[str, int] = {}
    lock = threading.Lock()

    def respond(body: dict[str, Any], n: int) -> Any:
        model = body["model"]
        with lock:
            counts[model] = counts.get(model, 0) + 1
            k = counts[model]
        if model == "flaky":  # two rate limits, then fine
            return Status(429, retry_after=0.05) if k <= 2 else good(body, n)
        return {
            "rate-limited": Status(429, retry_after=0.05),
            "broken": Status(500),
            "hangs-up": Drop(),
            "garbled": Malformed("{not json"),
            "off-schema": Reply("submit_plan_task", {"subgoals": "none"}),
            "slow": Delay(2.0, Reply("submit_plan_task", {"subgoals": []})),
        }.get(model) or good(body, n)

    return respond


PROFILES = {
    # name: (model, expected outcome, fragment of the failure reason)
    "ok": ("fake-vlm", "done", ""),
    "flaky": ("flaky", "done", ""),
    "rate-limited": ("rate-limited", "failed", "rate limited"),
    "broken": ("broken", "failed", "500"),
    "hangs-up": ("hangs-up", "failed", "lost the connection"),
    "garbled": ("garbled", "failed", "did not match"),
    "off-schema": ("off-schema", "failed", "did not match"),
    "slow": ("slow", "failed", "no reply within"),
    "unknown-model": ("no-such-model", "failed", "not found"),
    "wrong-key": ("fake-vlm", "failed", "refused the API key"),
    "pricey": ("fake-vlm", "failed", "spend cap reached"),
}


def test_every_job_ends_done_or_failed_with_a_reason(
    tmp_path: Path, cases_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WB_TEST_API_KEY", KEY)
    monkeypatch.setenv("WB_WRONG_KEY", "sk-wrong")
    project = make_project(tmp_path / "p", cases_dir)
    models = {"fake-vlm", "flaky", "rate-limited", "broken", "hangs-up", "garbled",
              "off-schema", "slow"}  # fmt: skip
    with FakeServer(faulty_responder(), expected_key=KEY, models=models) as srv:
        with Project.open(project) as p:
            video = p.videos("stack_blocks")[0].id
            for name, (model, _, _) in PROFILES.items():
                save_profile(
                    p.profiles,
                    ModelProfile(
                        name=name, base_url=srv.base_url, model=model,
                        api_key_env="WB_WRONG_KEY" if name == "wrong-key" else "WB_TEST_API_KEY",
                        timeout_s=0.5, max_retries=1, schema_retries=1,
                        price_in_per_mtok=2000.0 if name == "pricey" else 0.1,
                        price_out_per_mtok=8000.0 if name == "pricey" else 0.4,
                        max_output_tokens=4, spend_cap_usd=CAP,
                    ),
                )  # fmt: skip
                queue_judge(
                    p, [video], profile=name, batch=name, max_attempts=2,
                    retry_backoff_s=0.05, rate_limit_backoff_s=0.05,
                )  # fmt: skip
            # and a video whose file was damaged after import: a clear, permanent failure
            broken_video = p.videos("tidy_cups")[0]
            p.video_path(broken_video).write_bytes(b"\0" * 100)
            queue_judge(p, [broken_video.id], profile="ok", batch="bad-file", max_attempts=2)
        stats = run_worker(project, concurrency=4, drain=True, lease_s=10, log=lambda _r: None)
        requests = len(srv.chat_requests)
    with Project.open(project) as p:
        runs = JudgeRuns(p.db)
        for name, (_, expected, reason) in PROFILES.items():
            (job,) = p.jobs.query(batch=name)
            assert job.status.value == expected, (name, job.error)
            if expected == "failed":
                assert job.error and reason in job.error, (name, job.error)
                assert KEY not in job.error
            for run in runs.runs(job.payload["video_id"]):
                assert run.cost_usd <= CAP + 1e-12, (name, run.cost_usd)
        (bad,) = p.jobs.query(batch="bad-file")
        assert bad.status is JobStatus.FAILED and bad.error and ".mp4" in bad.error
        assert bad.attempts == 1  # permanent: not retried
        done_runs = [r for r in runs.runs(video) if r.status == "done"]
        assert len(done_runs) == 2  # "ok" and "flaky", once each: nothing duplicated
    # bounded: ≤ attempts × (transport retries + 1) × (schema re-asks + 1) per stage, in all
    assert requests < 400 and stats.claimed <= 2 * (len(PROFILES) + 1)
