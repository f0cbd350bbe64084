"""The job worker in-process: cancel, retry, crashes, lost leases, graceful stop and its logs."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from storage import (
    JobContext,
    JobError,
    JobFunction,
    JobOutcome,
    Jobs,
    JobStatus,
    Project,
    ProjectError,
    UnknownJobKindError,
    WorkerStats,
    get_kind,
    load_kind_modules,
    register,
    run_worker,
)

Log = list[dict[str, Any]]
AddKind = Callable[[str, JobFunction], None]
SECRET = "sk-live-DO-NOT-LOG-4242"


class Worker:
    """``run_worker`` on a thread, with its log captured and a stop button."""

    def __init__(self, root: Path, **options: Any) -> None:
        self.log: Log = []
        self.stop = threading.Event()
        self.stats: WorkerStats | None = None
        options = {"poll_s": 0.05, "lease_s": 0.6, **options}

        def main() -> None:
            self.stats = run_worker(root, stop=self.stop, log=self.log.append, **options)

        self.thread = threading.Thread(target=main, daemon=True)
        self.thread.start()

    def join(self, timeout: float = 10.0) -> WorkerStats:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "worker did not exit"
        assert self.stats is not None
        return self.stats

    def events(self, name: str) -> Log:
        return [r for r in self.log if r["event"] == name]


def quiet(record: dict[str, Any]) -> None:
    pass


def wait_for(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def job(root: Path, job_id: int) -> Any:
    with Project.open(root) as p:
        return p.jobs.get(job_id)


def enqueue(root: Path, kind: str, payloads: list[dict[str, Any]], **kw: Any) -> list[int]:
    with Project.open(root) as p:
        return p.jobs.enqueue(kind, payloads, **kw)


def test_cancel_mid_run_stops_within_a_heartbeat(project_root: Path) -> None:
    (jid,) = enqueue(project_root, "diag.sleep", [{"seconds": 30, "n": 1}])
    w = Worker(project_root, drain=True)
    # Progress reaches the database through heartbeats while the job runs.
    wait_for(lambda: job(project_root, jid).progress > 0)
    assert "slept" in (job(project_root, jid).progress_note or "")
    with Project.open(project_root) as p:
        t0 = time.monotonic()
        assert p.jobs.cancel([jid]) == 1
    stats = w.join()
    # Not a speed check: the job would sleep 30 s had the cancel been ignored.
    assert time.monotonic() - t0 < 15
    done = job(project_root, jid)
    assert done.status is JobStatus.CANCELLED and done.result_ref is None
    assert stats.cancelled == 1 and stats.done == 0 and stats.failed == 0
    assert len(w.events("job.cancelled")) == 1


def test_retryable_error_then_success_on_second_attempt(
    project_root: Path, test_kind: AddKind
) -> None:
    calls: list[float] = []

    def flaky(ctx: JobContext) -> JobOutcome:
        calls.append(time.monotonic())
        if len(calls) == 1:
            raise JobError("endpoint said 503", retry=True, backoff_s=0.3)

        def write(p: Project) -> str:  # runs in the completing transaction, once
            p.db.table("meta").insert({"key": f"flaky-{ctx.job_id}", "value": "ok"})
            return f"meta:flaky-{ctx.job_id}"

        return JobOutcome(write=write, cost_usd=0.25)

    test_kind("test.flaky", flaky)
    (jid,) = enqueue(project_root, "test.flaky", [{}], max_attempts=3)
    log: Log = []
    stats = run_worker(project_root, drain=True, poll_s=0.05, log=log.append)
    done = job(project_root, jid)
    assert done.status is JobStatus.DONE and done.attempts == 2
    assert done.result_ref == f"meta:flaky-{jid}" and done.cost_usd == 0.25
    with Project.open(project_root) as p:
        assert p.db.table("meta").get(f"flaky-{jid}")["value"] == "ok"
    assert calls[1] - calls[0] >= 0.3  # drain waited out the backoff instead of exiting
    assert (stats.claimed, stats.retried, stats.done, stats.failed) == (2, 1, 1, 0)
    (retry,) = [r for r in log if r["event"] == "job.retry"]
    assert retry["error"] == "endpoint said 503" and retry["backoff_s"] == 0.3


def test_plain_exception_fails_the_job_and_the_worker_keeps_going(
    project_root: Path, test_kind: AddKind
) -> None:
    def boom(ctx: JobContext) -> JobOutcome:
        raise ValueError("boom at step 3")

    test_kind("test.boom", boom)
    (bad,) = enqueue(project_root, "test.boom", [{}], max_attempts=3, priority=1)
    good = enqueue(project_root, "diag.echo", [{"n": 1}, {"n": 2}])
    log: Log = []
    stats = run_worker(project_root, drain=True, poll_s=0.05, log=log.append)
    failed = job(project_root, bad)
    assert failed.status is JobStatus.FAILED and failed.attempts == 1  # a bug is not retried
    assert failed.error == "ValueError: boom at step 3"
    assert [job(project_root, j).result_ref for j in good] == ['echo:{"n": 1}', 'echo:{"n": 2}']
    assert (stats.failed, stats.done) == (1, 2)
    (crash,) = [r for r in log if r["event"] == "job.crashed"]
    assert "boom at step 3" in crash["traceback"] and crash["job"] == bad


def test_lost_lease_drops_the_result(project_root: Path, test_kind: AddKind) -> None:
    def stubborn(ctx: JobContext) -> JobOutcome:
        while not ctx.cancelled():
            time.sleep(0.02)

        def write(p: Project) -> str:
            p.db.table("meta").insert({"key": "stubborn", "value": "written"})
            return "meta:stubborn"

        return JobOutcome(write=write)  # ignores cancelled(): the worker must drop this

    test_kind("test.stubborn", stubborn)
    (jid,) = enqueue(project_root, "test.stubborn", [{}])
    w = Worker(project_root)
    wait_for(lambda: job(project_root, jid).status is JobStatus.RUNNING)
    with Project.open(project_root) as p:  # another worker, an hour later, takes it over
        assert Jobs(p.db, clock=lambda: time.time() + 3600).claim("thief", 30) is not None
    wait_for(lambda: bool(w.events("job.discarded")) or bool(w.events("job.done")))
    w.stop.set()
    stats = w.join()
    assert stats.lost == 1 and stats.done == 0
    after = job(project_root, jid)
    assert after.status is JobStatus.RUNNING and (after.lease_owner or "").startswith("thief/")
    with Project.open(project_root) as p:
        assert "stubborn" not in {r["key"] for r in p.db.table("meta").rows}


def test_graceful_stop_releases_a_running_job_without_spending_its_attempt(
    project_root: Path,
) -> None:
    (jid,) = enqueue(project_root, "diag.sleep", [{"seconds": 30}], max_attempts=1)
    w = Worker(project_root, grace_s=0.2)
    wait_for(lambda: job(project_root, jid).status is JobStatus.RUNNING)
    t0 = time.monotonic()
    w.stop.set()
    stats = w.join()
    assert time.monotonic() - t0 < 15  # the job sleeps 30 s unless it is handed back
    back = job(project_root, jid)
    assert back.status is JobStatus.QUEUED and back.attempts == 0 and back.lease_owner is None
    assert stats.released == 1 and stats.lost == 0
    assert w.events("worker.stop")[0]["reason"] == "stop"
    with Project.open(project_root) as p:  # claimable at once, and not failed for attempts
        again = p.jobs.claim("next", 5)
        assert again is not None and again.id == jid and again.attempts == 1


def test_graceful_stop_lets_a_short_job_finish(project_root: Path) -> None:
    (jid,) = enqueue(project_root, "diag.sleep", [{"seconds": 0.4, "n": 7}])
    w = Worker(project_root, grace_s=5.0)
    wait_for(lambda: job(project_root, jid).status is JobStatus.RUNNING)
    w.stop.set()
    stats = w.join()
    assert job(project_root, jid).result_ref == "diag:7"
    assert stats.done == 1 and stats.released == 0


def test_jobs_run_concurrently_and_kinds_filter_what_is_claimed(project_root: Path) -> None:
    sleeps = enqueue(project_root, "diag.sleep", [{"seconds": 0.6, "n": n} for n in range(4)])
    (echo,) = enqueue(project_root, "diag.echo", [{}])
    stats = run_worker(
        project_root, concurrency=4, drain=True, poll_s=0.05, kinds=["diag.sleep"], log=quiet
    )
    # concurrency, shown by the stored times rather than a stopwatch: some jobs overlapped
    spans = sorted((job(project_root, j).started_at or "", job(project_root, j).finished_at or "")
                   for j in sleeps)  # fmt: skip
    assert any(spans[k + 1][0] < spans[k][1] for k in range(len(spans) - 1))
    assert stats.done == 4
    assert {job(project_root, j).result_ref for j in sleeps} == {f"diag:{n}" for n in range(4)}
    assert job(project_root, echo).status is JobStatus.QUEUED  # not ours: left alone


def test_default_log_is_json_lines_without_payload_values(
    project_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    enqueue(project_root, "diag.sleep", [{"seconds": 0.3, "n": 1, "api_key": SECRET}])
    enqueue(project_root, "diag.echo", [{"token": SECRET}])
    enqueue(project_root, "diag.sleep", [{"seconds": SECRET}])  # fails validation
    run_worker(project_root, drain=True, poll_s=0.05)
    text = capsys.readouterr().err
    records = [json.loads(line) for line in text.splitlines()]
    assert SECRET not in text
    for r in records:
        assert {"ts", "level", "event", "worker", "job", "kind"} <= r.keys()
    events = [r["event"] for r in records]
    assert events[0] in ("worker.start", "worker.kinds_missing") and events[-1] == "worker.stop"
    assert events.count("job.claimed") == 3 and events.count("job.done") == 2
    assert events.count("job.failed") == 1 and "job.progress" not in events  # debug: off
    claimed = [r for r in records if r["event"] == "job.claimed"]
    assert claimed[0]["payload_keys"] == ["api_key", "n", "seconds"]


def test_progress_logs_are_debug_and_throttled(project_root: Path) -> None:
    enqueue(project_root, "diag.sleep", [{"seconds": 1.3, "n": 1}])
    log: Log = []
    run_worker(project_root, drain=True, poll_s=0.05, log=log.append)
    progress = [r for r in log if r["event"] == "job.progress"]
    assert 1 <= len(progress) <= 2 and all(r["level"] == "debug" for r in progress)


def test_kind_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert get_kind("diag.sleep") is get_kind("diag.sleep")
    with pytest.raises(UnknownJobKindError, match=r"'no\.such' .*diag\.echo, diag\.sleep"):
        get_kind("no.such")
    with pytest.raises(ValueError, match="already registered"):
        register("diag.sleep")(lambda ctx: JobOutcome(write=lambda p: None))
    # A kind module not installed yet is skipped; one that is broken inside is a bug.
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "wb_broken_kinds.py").write_text("import wb_missing_dependency\n")
    assert load_kind_modules(["judge", "wb_kinds_not_shipped"]) == ["wb_kinds_not_shipped"]
    with pytest.raises(ModuleNotFoundError, match="wb_missing_dependency"):
        load_kind_modules(["wb_broken_kinds"])


def test_bad_arguments_fail_before_any_thread(project_root: Path, tmp_path: Path) -> None:
    with pytest.raises(UnknownJobKindError):
        run_worker(project_root, drain=True, kinds=["no.such"])
    with pytest.raises(ProjectError):
        run_worker(tmp_path / "nowhere", drain=True)


def test_library_log_records_and_warnings_become_json_lines(
    project_root: Path, test_kind: AddKind, capfd: pytest.CaptureFixture[str]
) -> None:
    """What the model client logs ("reply carried no token usage …") and warnings a library
    raises reach the worker's log as JSON records, never as plain text between them."""
    import logging
    import warnings

    def chatty(ctx: JobContext) -> JobOutcome:
        client_log = logging.getLogger("judge.models._client")
        client_log.warning("reply carried no token usage; booking it")
        warnings.warn("a library deprecation", DeprecationWarning, stacklevel=1)
        return JobOutcome(write=lambda p: None)

    test_kind("test.chatty", chatty)
    enqueue(project_root, "test.chatty", [{}])
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        run_worker(project_root, drain=True, poll_s=0.05)
    err = capfd.readouterr().err
    records = [json.loads(line) for line in err.splitlines()]  # every line is JSON
    messages = {r.get("message") for r in records if r["event"] == "log"}
    assert "reply carried no token usage; booking it" in messages
    assert any("a library deprecation" in (m or "") for m in messages)


def test_a_job_learns_its_lease_was_taken_before_its_next_call(
    project_root: Path, test_kind: AddKind, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Suspended past its lease while another claim took the job, with no heartbeat since (the
    heartbeat thread starved here): the job's own cancelled() renews, is refused, and says stop
    before the next model call. Without that check it would go on paying for a lost job."""
    import storage.jobs._worker as worker_module

    monkeypatch.setattr(worker_module._Worker, "_beat", lambda self, project, rec: None)
    seen: dict[str, bool] = {}

    def victim(ctx: JobContext) -> JobOutcome:
        seen["fresh"] = ctx.cancelled()
        with Project.open(ctx.project_root) as p:  # meanwhile, an hour later, a thief claims it
            seen["stolen"] = Jobs(p.db, clock=lambda: time.time() + 3600).claim("t", 30) is not None
        seen["lease looks fresh"] = ctx.cancelled()  # no reason to ask the database yet
        ctx.last_beat -= 3600  # type: ignore[attr-defined]  # as after an hour's suspension
        seen["after the suspension"] = ctx.cancelled()
        return JobOutcome(write=lambda p: "mine")

    test_kind("test.victim", victim)
    (jid,) = enqueue(project_root, "test.victim", [{}])
    w = Worker(project_root, lease_s=30)
    wait_for(lambda: "after the suspension" in seen)
    w.stop.set()
    stats = w.join()
    assert seen == {
        "fresh": False, "stolen": True, "lease looks fresh": False, "after the suspension": True,
    }  # fmt: skip
    assert stats.lost == 1 and stats.done == 0
    assert (job(project_root, jid).lease_owner or "").startswith("t/")
