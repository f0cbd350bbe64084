"""The job queue: rows in ``jobs`` claimed by workers under a lease.

A worker claims a job atomically (one ``BEGIN IMMEDIATE`` transaction picks the next runnable
row and stamps it with an owner token made for this claim alone, ``worker-id/random``, and a
lease expiry), renews the lease with heartbeats, and finishes it with :meth:`Jobs.complete`,
which writes the job's result and marks it done in the same transaction, but only if the claim
still owns the lease. A worker that dies stops heartbeating; once its lease expires the job is
claimable again, so nothing is lost, and the ownership check on completion means nothing is
written twice. Because every claim has its own token, a worker suspended past its lease (a
closed laptop lid, ``kill -STOP``) that resumes and re-claims the job in another of its threads
cannot also go on with the old claim: the old claim's heartbeats and completion are refused.

Jobs that keep failing or keep losing their worker end as ``failed`` with the reason; whenever a
job ends, any run it left ``running`` is ended with it. Retry backoffs and attempts are settings
of each job. Money is what the job's recorded calls cost over every attempt.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import sqlite_utils

from storage._db import write
from storage._history import now
from storage._judge import JudgeRuns

DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_RETRY_BACKOFF_S = 20.0  # a timeout or a 5xx: try again soon
DEFAULT_RATE_LIMIT_BACKOFF_S = 60.0  # "too many requests": give the provider a minute


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class Job:
    """A job row as a typed record."""

    id: int
    batch: str | None
    kind: str
    payload: dict[str, Any]
    status: JobStatus
    lease_owner: str | None
    lease_expires: float | None
    attempts: int
    max_attempts: int
    progress: float
    progress_note: str | None
    error: str | None
    result_ref: str | None
    cost_usd: float
    created_at: str | None
    started_at: str | None
    finished_at: str | None
    retry_backoff_s: float = DEFAULT_RETRY_BACKOFF_S
    rate_limit_backoff_s: float = DEFAULT_RATE_LIMIT_BACKOFF_S
    calls: int = 0  # recorded model calls over every attempt
    ran_on: str | None = None  # the worker's host, or the cluster node of its task

    def backoff_s(self, *, rate_limited: bool) -> float:
        """How long a retryable failure of this job waits before it runs again."""
        return self.rate_limit_backoff_s if rate_limited else self.retry_backoff_s


# The calls a job recorded, over every attempt (per job: the indexes make each a short seek).
_CALLS = "FROM judge_runs r JOIN judge_calls c ON c.run_id = r.id WHERE r.job_id = jobs.id"
# Cost is the recorded calls' sum where the job recorded any; otherwise what it last reported.
_SELECT = (
    f"SELECT jobs.*, (SELECT COALESCE(SUM(c.cost_usd), 0) {_CALLS}) AS recorded_cost, "
    f"(SELECT COUNT(*) {_CALLS}) AS recorded_calls FROM jobs"
)


def _job(row: dict[str, Any]) -> Job:
    return Job(
        id=row["id"],
        batch=row["batch"],
        kind=row["kind"],
        payload=json.loads(row["payload"]),
        status=JobStatus(row["status"]),
        lease_owner=row["lease_owner"],
        lease_expires=row["lease_expires"],
        attempts=row["attempts"] or 0,
        max_attempts=row["max_attempts"] or 1,
        progress=row["progress"] or 0.0,
        progress_note=row["progress_note"],
        error=row["error"],
        result_ref=row["result_ref"],
        cost_usd=(row["recorded_cost"] if row.get("recorded_calls") else (row["cost_usd"] or 0.0)),
        created_at=row["created_at"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        retry_backoff_s=row["retry_backoff_s"],
        rate_limit_backoff_s=row["rate_limit_backoff_s"],
        calls=row.get("recorded_calls") or 0,
        ran_on=row.get("ran_on"),
    )


def make_owner(worker: str) -> str:
    """The lease owner of one claim: the worker's id and a token no other claim shares."""
    return f"{worker}/{secrets.token_hex(4)}"


def owner_worker(owner: str | None) -> str | None:
    """The worker id part of a lease owner (where to look when a lease is stuck)."""
    return owner.rsplit("/", 1)[0] if owner else None


class Jobs:
    """Enqueue, claim, heartbeat, complete, fail, cancel and retry jobs."""

    def __init__(self, db: sqlite_utils.Database, clock: Callable[[], float] = time.time) -> None:
        self._db = db
        self._clock = clock

    # ---- producers -----------------------------------------------------------------------
    def enqueue(
        self,
        kind: str,
        payloads: Iterable[dict[str, Any]],
        *,
        batch: str | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        priority: int = 100,
        retry_backoff_s: float = DEFAULT_RETRY_BACKOFF_S,
        rate_limit_backoff_s: float = DEFAULT_RATE_LIMIT_BACKOFF_S,
    ) -> list[int]:
        """Queue one job per payload (one transaction); returns their ids.

        ``max_attempts`` bounds the attempts (a worker that dies spends one too);
        ``retry_backoff_s`` is the wait before a retryable failure runs again, and
        ``rate_limit_backoff_s`` the wait after the provider said "too many requests".
        """
        for name, value in (("retry_backoff_s", retry_backoff_s),
                            ("rate_limit_backoff_s", rate_limit_backoff_s)):  # fmt: skip
            if not value >= 0:
                raise ValueError(f"{name} must be ≥ 0 seconds, not {value!r}")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, not {max_attempts}")
        ids = []
        with write(self._db):
            for payload in payloads:
                tbl = self._db.table("jobs")
                tbl.insert(
                    {
                        "batch": batch,
                        "kind": kind,
                        "payload": json.dumps(payload, sort_keys=True),
                        "status": JobStatus.QUEUED.value,
                        "priority": priority,
                        "attempts": 0,
                        "max_attempts": max_attempts,
                        "not_before": 0.0,
                        "progress": 0.0,
                        "cost_usd": 0.0,
                        "created_at": now(),
                        "retry_backoff_s": float(retry_backoff_s),
                        "rate_limit_backoff_s": float(rate_limit_backoff_s),
                    }
                )
                assert tbl.last_pk is not None
                ids.append(int(tbl.last_pk))
        return ids

    # ---- workers -------------------------------------------------------------------------
    def claim(self, worker: str, lease_s: float, kinds: Iterable[str] | None = None) -> Job | None:
        """Atomically take the next runnable job: queued (and past its backoff), or running
        under an expired lease. A job whose attempts are used up fails instead of running.

        The returned job's ``lease_owner`` is this claim's own token: pass it (not ``worker``)
        to :meth:`heartbeat`, :meth:`complete`, :meth:`fail` and :meth:`release`.
        """
        t = self._clock()
        kind_list = list(kinds) if kinds is not None else None
        kind_sql = ""
        args: list[Any] = [t, t]
        if kind_list is not None:
            kind_sql = f" AND kind IN ({','.join('?' * len(kind_list))})"
            args += kind_list
        with write(self._db):
            while True:
                row = self._db.execute(
                    "SELECT id, attempts, max_attempts, status, lease_owner FROM jobs "
                    "WHERE ((status = 'queued' AND not_before <= ?) "
                    "OR (status = 'running' AND lease_expires < ?))" + kind_sql + " "
                    "ORDER BY priority, id LIMIT 1",
                    args,
                ).fetchone()
                if row is None:
                    return None
                job_id, attempts, max_attempts, status, owner = row
                if attempts >= max_attempts:
                    reason = (
                        f"gave up after {attempts} attempt(s): its worker "
                        f"({owner_worker(owner)}) stopped without finishing (killed, crashed, "
                        "suspended or lost power)"
                        if status == "running"
                        else f"gave up after {attempts} attempt(s)"
                    )
                    self._finish(job_id, JobStatus.FAILED, error=reason)
                    continue
                self._db.execute(
                    "UPDATE jobs SET status = 'running', lease_owner = ?, lease_expires = ?, "
                    "heartbeat_at = ?, attempts = attempts + 1, started_at = ?, progress = 0, "
                    "ran_on = ? WHERE id = ?",
                    [make_owner(worker), t + lease_s, t, now(), worker.split(":", 1)[0], job_id],
                )
                # the row alone: a claim needs no spend, and the write lock is still held
                return _job(dict(self._db.table("jobs").get(job_id)))

    def heartbeat(
        self,
        job_id: int,
        worker: str,
        lease_s: float,
        *,
        progress: float | None = None,
        note: str | None = None,
        cost_usd: float | None = None,
        ran_on: str | None = None,
    ) -> bool:
        """Renew the lease (and report progress, and where the work runs). ``worker`` is the
        claim's owner token. False
        if the claim no longer owns the job (cancelled, or the lease expired and another claim
        took it, in another worker or in this one): it should stop at once."""
        t = self._clock()
        sets = ["lease_expires = ?", "heartbeat_at = ?"]
        args: list[Any] = [t + lease_s, t]
        for col, val in (("progress", progress), ("progress_note", note), ("cost_usd", cost_usd),
                         ("ran_on", ran_on)):  # fmt: skip
            if val is not None:
                sets.append(f"{col} = ?")
                args.append(val)
        with write(self._db):
            cur = self._db.execute(
                f"UPDATE jobs SET {', '.join(sets)} "
                "WHERE id = ? AND lease_owner = ? AND status = 'running'",
                [*args, job_id, worker],
            )
            return cur.rowcount == 1

    def set_ran_on(self, job_id: int, worker: str, where: str) -> bool:
        """Say where the claim's work runs (a cluster node); False if the claim is not ours."""
        with write(self._db):
            cur = self._db.execute(
                "UPDATE jobs SET ran_on = ? "
                "WHERE id = ? AND lease_owner = ? AND status = 'running'",
                [where, job_id, worker],
            )
            return cur.rowcount == 1

    def complete(
        self,
        job_id: int,
        worker: str,
        write_result: Callable[[], str | None],
        *,
        cost_usd: float = 0.0,
        ran_on: str | None = None,
    ) -> bool:
        """Write the result and mark the job done in one transaction, if still owned
        (``ran_on``: where its work ran, when not where it was claimed).

        ``write_result`` runs inside the transaction (it writes through the same connection)
        and returns a reference to what it wrote. Returns False, writing nothing, if the job
        is no longer this worker's.
        """
        with write(self._db):
            if not self._owned(job_id, worker):
                return False
            ref = write_result()
            # a job done on a later attempt should not keep showing an earlier attempt's error
            where = {} if ran_on is None else {"ran_on": ran_on}
            self._finish(
                job_id, JobStatus.DONE, result_ref=ref, cost_usd=cost_usd, progress=1.0,
                error=None, progress_note=None, **where,
            )  # fmt: skip
            return True

    def fail(
        self,
        job_id: int,
        worker: str,
        error: str,
        *,
        retry: bool = False,
        rate_limited: bool = False,
        backoff_s: float | None = None,
        cost_usd: float | None = None,
    ) -> bool:
        """Record a failure. ``retry=True`` puts the job back while attempts remain, after
        the job's own backoff (``rate_limit_backoff_s`` if ``rate_limited``, else
        ``retry_backoff_s``; ``backoff_s`` overrides both); otherwise it ends failed with
        ``error`` as the reason."""
        with write(self._db):
            if not self._owned(job_id, worker):
                return False
            row = self._db.execute(
                "SELECT attempts, max_attempts, retry_backoff_s, rate_limit_backoff_s "
                "FROM jobs WHERE id = ?",
                [job_id],
            ).fetchone()
            extra = {} if cost_usd is None else {"cost_usd": cost_usd}
            if backoff_s is None:
                backoff_s = float(row[3] if rate_limited else row[2])
            if retry and row[0] < row[1]:
                self._db.table("jobs").update(
                    job_id,
                    {
                        "status": JobStatus.QUEUED.value,
                        "lease_owner": None,
                        "lease_expires": None,
                        "not_before": self._clock() + backoff_s,
                        "error": error,
                        **extra,
                    },
                )
            else:
                if retry:  # retryable, but the attempts are used up: say so
                    error = f"gave up after {row[0]} attempt(s): {error}"
                self._finish(job_id, JobStatus.FAILED, error=error, **extra)
            return True

    def release(
        self, job_id: int, worker: str, *, wait_s: float = 0.0, error: str | None = None
    ) -> bool:
        """Give a claimed job back untouched (a worker shutting down), keeping its attempt.
        False if the job was no longer this worker's.

        ``wait_s`` keeps it from running again sooner, and ``error`` says why: the worker's
        storage failed, not the job (a full disk), and such a failure spends no attempt.
        """
        with write(self._db):
            if not self._owned(job_id, worker):
                return False
            self._db.execute(
                "UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_expires = NULL, "
                "attempts = MAX(attempts - 1, 0), not_before = ?, error = COALESCE(?, error) "
                "WHERE id = ?",
                [self._clock() + max(wait_s, 0.0), error, job_id],
            )
            return True

    def pending(self, kinds: Iterable[str] | None = None) -> int:
        """Queued (backoff included) or running jobs: what a draining worker waits for."""
        ks = list(kinds) if kinds is not None else None
        sql = "SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'running')"
        if ks is not None:
            sql += f" AND kind IN ({','.join('?' * len(ks))})"
        return int(self._db.execute(sql, ks or []).fetchone()[0])

    # ---- users ---------------------------------------------------------------------------
    def cancel(self, job_ids: Iterable[int] = (), *, batch: str | None = None) -> int:
        """Cancel queued or running jobs (a running one stops at its next heartbeat)."""
        where, args = self._select(job_ids, batch)
        with write(self._db):
            ids = [
                r[0]
                for r in self._db.execute(
                    f"SELECT id FROM jobs WHERE status IN ('queued', 'running') AND ({where})",
                    args,
                ).fetchall()
            ]
            self._finish(ids, JobStatus.CANCELLED)
            return len(ids)

    def retry(self, job_ids: Iterable[int] = (), *, batch: str | None = None) -> int:
        """Queue failed or cancelled jobs again with fresh attempts."""
        where, args = self._select(job_ids, batch)
        with write(self._db):
            cur = self._db.execute(
                "UPDATE jobs SET status = 'queued', attempts = 0, not_before = 0, error = NULL, "
                "lease_owner = NULL, lease_expires = NULL, progress = 0, finished_at = NULL "
                f"WHERE status IN ('failed', 'cancelled') AND ({where})",
                args,
            )
            return int(cur.rowcount)

    def get(self, job_id: int) -> Job:
        row = self._db.execute(_SELECT + " WHERE jobs.id = ?", [job_id])
        found = [dict(zip([d[0] for d in row.description], r, strict=True)) for r in row]
        if not found:
            raise LookupError(f"no job {job_id}")
        return _job(found[0])

    def query(self, *, batch: str | None = None, status: JobStatus | None = None) -> list[Job]:
        """Jobs, oldest first, optionally of one batch or status."""
        clauses, args = [], []
        if batch is not None:
            clauses.append("jobs.batch = ?")
            args.append(batch)
        if status is not None:
            clauses.append("jobs.status = ?")
            args.append(status.value)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        cur = self._db.execute(_SELECT + where + " ORDER BY jobs.id", args)
        names = [d[0] for d in cur.description]
        return [_job(dict(zip(names, r, strict=True))) for r in cur]

    def spend(self, *, batch: str | None = None, job_id: int | None = None) -> float:
        """US$ of every recorded model call of the project's jobs (of one batch, or one job),
        over every attempt: what the endpoint was asked to do is what was paid for."""
        sql = (
            "SELECT COALESCE(SUM(c.cost_usd), 0) FROM judge_calls c "
            "JOIN judge_runs r ON r.id = c.run_id WHERE r.job_id IS NOT NULL"
        )
        args: list[Any] = []
        if batch is not None:
            sql += " AND r.job_id IN (SELECT id FROM jobs WHERE batch = ?)"
            args.append(batch)
        if job_id is not None:
            sql += " AND r.job_id = ?"
            args.append(job_id)
        return float(self._db.execute(sql, args).fetchone()[0])

    def counts(self, *, batch: str | None = None) -> dict[str, int]:
        """Jobs per status (every status present, zero if none)."""
        sql = "SELECT status, COUNT(*) FROM jobs" + (" WHERE batch = ?" if batch else "")
        got = dict(self._db.execute(sql + " GROUP BY status", [batch] if batch else []).fetchall())
        return {s.value: int(got.get(s.value, 0)) for s in JobStatus}

    def batches(self) -> list[str]:
        """Batch names, newest first."""
        rows = self._db.execute(
            "SELECT batch FROM jobs WHERE batch IS NOT NULL GROUP BY batch ORDER BY MAX(id) DESC"
        ).fetchall()
        return [str(b) for (b,) in rows]

    def is_cancelled(self, job_id: int) -> bool:
        row = self._db.execute("SELECT status FROM jobs WHERE id = ?", [job_id]).fetchone()
        return row is not None and row[0] == JobStatus.CANCELLED.value

    # ---- helpers -------------------------------------------------------------------------
    def _owned(self, job_id: int, worker: str) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM jobs WHERE id = ? AND lease_owner = ? AND status = 'running'",
            [job_id, worker],
        ).fetchone()
        return row is not None

    def _finish(self, job_ids: int | list[int], status: JobStatus, **values: Any) -> None:
        """End jobs (one UPDATE), and with them any run they left running, in the same
        transaction."""
        ids = [job_ids] if isinstance(job_ids, int) else job_ids
        if not ids:
            return
        sets = {"status": status.value, "lease_owner": None, "lease_expires": None,
                "finished_at": now(), **values}  # fmt: skip
        self._db.execute(
            f"UPDATE jobs SET {', '.join(f'{k} = ?' for k in sets)} "
            f"WHERE id IN ({','.join('?' * len(ids))})",
            [*sets.values(), *ids],
        )
        if status is JobStatus.DONE:  # the result's own run is done; others were earlier tries
            why, abandoned = "abandoned: the job finished on another attempt", True
        elif status is JobStatus.CANCELLED:
            why, abandoned = "cancelled", True
        else:
            why, abandoned = f"job failed: {values.get('error') or 'no reason given'}", False
        JudgeRuns(self._db).end_for_jobs(ids, why, abandoned=abandoned)

    @staticmethod
    def _select(job_ids: Iterable[int], batch: str | None) -> tuple[str, list[Any]]:
        ids = list(job_ids)
        if batch is not None:
            return "batch = ?", [batch]
        if not ids:
            return "0", []
        return f"id IN ({','.join('?' * len(ids))})", ids
