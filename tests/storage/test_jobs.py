"""The job queue: atomic claims, leases, completion ownership, failure, cancel and retry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from storage import Jobs, JobStatus, Project


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def env(tmp_path: Path) -> Iterator[tuple[Project, Jobs, Clock]]:
    clock = Clock()
    with Project.create(tmp_path / "p") as p:
        yield p, Jobs(p.db, clock=clock), clock


def claimed(jobs: Jobs, worker: str, lease_s: float) -> str:
    """Claim the next job; its owner token."""
    job = jobs.claim(worker, lease_s)
    assert job is not None and job.lease_owner is not None
    return job.lease_owner


def test_claim_in_order_and_complete_writes_result_atomically(
    env: tuple[Project, Jobs, Clock],
) -> None:
    p, jobs, _ = env
    ids = jobs.enqueue("diag.echo", [{"n": k} for k in range(3)], batch="b1")
    first = jobs.claim("w1", lease_s=30)
    assert first is not None and first.id == ids[0] and first.attempts == 1
    assert first.status is JobStatus.RUNNING and (first.lease_owner or "").startswith("w1/")

    def result() -> str:
        p.db.table("meta").insert({"key": "result-1", "value": "x"})
        return "meta:result-1"

    assert not jobs.complete(first.id, "w1", result)  # the worker's id is not the claim's token
    assert jobs.complete(first.id, first.lease_owner or "", result, cost_usd=0.5)
    done = jobs.get(first.id)
    assert done.status is JobStatus.DONE and done.result_ref == "meta:result-1"
    assert done.cost_usd == 0.5 and done.lease_owner is None
    assert jobs.counts(batch="b1") == {
        "queued": 2, "running": 0, "done": 1, "failed": 0, "cancelled": 0
    }  # fmt: skip


def test_failed_write_rolls_back_and_job_stays_running(env: tuple[Project, Jobs, Clock]) -> None:
    p, jobs, _ = env
    (jid,) = jobs.enqueue("diag.echo", [{}])
    owner = claimed(jobs, "w1", 30)

    def broken() -> str:
        p.db.table("meta").insert({"key": "half", "value": "written"})
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        jobs.complete(jid, owner, broken)
    assert p.db.table("meta").count_where("key = 'half'") == 0
    assert jobs.get(jid).status is JobStatus.RUNNING


def test_expired_lease_is_reclaimed_and_old_owner_cannot_complete(
    env: tuple[Project, Jobs, Clock],
) -> None:
    _, jobs, clock = env
    (jid,) = jobs.enqueue("diag.echo", [{}])
    first = claimed(jobs, "w1", 10)
    assert jobs.claim("w2", lease_s=10) is None  # lease still live
    clock.t += 11
    again = jobs.claim("w2", lease_s=10)
    assert again is not None and again.id == jid and again.attempts == 2
    assert not jobs.heartbeat(jid, first, 10)
    assert not jobs.complete(jid, first, lambda: "dup")  # the dead worker's late result
    assert jobs.complete(jid, again.lease_owner or "", lambda: "ok")
    assert jobs.get(jid).result_ref == "ok"


def test_job_that_keeps_losing_its_worker_fails_with_reason(
    env: tuple[Project, Jobs, Clock],
) -> None:
    _, jobs, clock = env
    (jid,) = jobs.enqueue("diag.echo", [{}], max_attempts=2)
    for worker in ("w1", "w2"):
        assert jobs.claim(worker, 5) is not None
        clock.t += 6
    assert jobs.claim("w3", 5) is None
    job = jobs.get(jid)
    assert job.status is JobStatus.FAILED and "gave up after 2 attempt(s)" in (job.error or "")
    assert "w2" in (job.error or "")


def test_fail_with_retry_backs_off_then_gives_up(env: tuple[Project, Jobs, Clock]) -> None:
    _, jobs, clock = env
    (jid,) = jobs.enqueue("diag.echo", [{}], max_attempts=2, retry_backoff_s=5)
    owner = claimed(jobs, "w1", 30)
    assert jobs.fail(jid, owner, "HTTP 500 from the endpoint", retry=True)
    assert jobs.get(jid).status is JobStatus.QUEUED
    assert jobs.claim("w1", 30) is None  # backing off: the job's own retry_backoff_s
    clock.t += 6
    owner = claimed(jobs, "w1", 30)
    jobs.fail(jid, owner, "HTTP 500 again", retry=True)
    job = jobs.get(jid)
    assert (
        job.status is JobStatus.FAILED and job.error == "gave up after 2 attempt(s): HTTP 500 again"
    )


def test_cancel_and_retry_per_job_and_batch(env: tuple[Project, Jobs, Clock]) -> None:
    _, jobs, _ = env
    a = jobs.enqueue("diag.echo", [{}, {}], batch="A")
    b = jobs.enqueue("diag.echo", [{}], batch="B")
    running = jobs.claim("w1", 30)
    assert running is not None and running.id == a[0]
    assert jobs.cancel(batch="A") == 2
    # the running one learns at its heartbeat
    assert not jobs.heartbeat(a[0], running.lease_owner or "", 30)
    assert jobs.is_cancelled(a[0])
    assert jobs.get(b[0]).status is JobStatus.QUEUED
    assert jobs.retry([a[1]]) == 1
    assert jobs.get(a[1]).status is JobStatus.QUEUED and jobs.get(a[0]).status.value == "cancelled"
    assert jobs.retry(batch="A") == 1
    assert [j.status for j in jobs.query(batch="A")] == [JobStatus.QUEUED, JobStatus.QUEUED]


def test_claim_filters_by_kind_and_release_keeps_attempts(
    env: tuple[Project, Jobs, Clock],
) -> None:
    _, jobs, _ = env
    jobs.enqueue("judge.video", [{}])
    (echo,) = jobs.enqueue("diag.echo", [{}])
    got = jobs.claim("w1", 30, kinds=["diag.echo"])
    assert got is not None and got.id == echo
    assert jobs.release(echo, got.lease_owner or "")
    again = jobs.get(echo)
    assert again.status is JobStatus.QUEUED and again.attempts == 0


def test_each_claim_has_its_own_owner_token(env: tuple[Project, Jobs, Clock]) -> None:
    """One worker (one id) suspended past its lease re-claims its own job in another thread:
    the first claim's heartbeat and completion are refused, so the job runs to one result."""
    _, jobs, clock = env
    (jid,) = jobs.enqueue("diag.echo", [{}])
    first = claimed(jobs, "host:1:ab", 10)
    clock.t += 11  # suspended past the lease
    second = claimed(jobs, "host:1:ab", 10)  # the same worker, another of its threads
    assert first != second and first.split("/")[0] == second.split("/")[0]
    assert not jobs.heartbeat(jid, first, 10)
    assert not jobs.complete(jid, first, lambda: "first")
    assert jobs.complete(jid, second, lambda: "second")
    assert jobs.get(jid).result_ref == "second"


def test_rate_limit_waits_the_longer_backoff_and_settings_are_checked(
    env: tuple[Project, Jobs, Clock],
) -> None:
    _, jobs, clock = env
    (jid,) = jobs.enqueue("diag.echo", [{}], retry_backoff_s=1, rate_limit_backoff_s=50)
    owner = claimed(jobs, "w", 30)
    assert jobs.fail(jid, owner, "HTTP 429", retry=True, rate_limited=True)
    clock.t += 10
    assert jobs.claim("w", 30) is None
    clock.t += 41
    assert jobs.claim("w", 30) is not None
    with pytest.raises(ValueError, match="max_attempts"):
        jobs.enqueue("diag.echo", [{}], max_attempts=0)
    with pytest.raises(ValueError, match="retry_backoff_s"):
        jobs.enqueue("diag.echo", [{}], retry_backoff_s=-1)


def test_a_v4_project_upgrades_with_its_jobs_and_their_spend(tmp_path: Path) -> None:
    """v5 adds per-job retry settings (defaults for old jobs) and counts spend from calls."""
    from storage._db import connect, migrate
    from storage._schema import MIGRATIONS

    root = tmp_path / "old"
    root.mkdir()
    db = connect(root / "project.sqlite")
    migrate(db, MIGRATIONS[:4], root / "project.sqlite")
    db.table("jobs").insert(
        {"id": 1, "kind": "judge.video", "payload": "{}", "status": "failed", "cost_usd": 0.01}
    )
    db.table("judge_runs").insert({"id": 1, "job_id": 1, "status": "running"})
    db.table("judge_calls").insert_all(
        [{"id": i, "run_id": 1, "seq": i, "cost_usd": 0.02} for i in range(3)]
    )
    db.close()
    with Project.open(root) as p:
        job = p.jobs.get(1)
        assert (job.retry_backoff_s, job.rate_limit_backoff_s) == (20.0, 60.0)
        assert job.calls == 3 and job.cost_usd == pytest.approx(0.06)  # calls, not the heartbeat
        assert p.jobs.spend() == pytest.approx(0.06)
