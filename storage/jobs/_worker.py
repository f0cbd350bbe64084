"""The job worker: threads that claim jobs, run their functions and write results exactly once.

Runner threads (one SQLite connection each: connections are not shared across threads for
writes) loop claim -> run -> complete/fail. One heartbeat thread renews every running job's
lease and writes its progress; a refused heartbeat (cancelled, or taken over) makes the job's
``cancelled()`` true, and whatever it returns is dropped, since completion checks ownership in
the transaction that writes the result. On stop, running jobs get a grace period, then go back
to the queue without spending an attempt. Logs are JSON lines with payload keys, never values;
Python ``logging`` records and warnings from the libraries a job uses become such lines too.

Each claim has its own lease owner token (:func:`storage.make_owner`), and leases are kept in
wall-clock time: after the process was suspended (SIGSTOP, a closed lid) the first thing a job
asks, ``cancelled()``, sees that its lease ran out and renews it synchronously; if another claim
took the job meanwhile, the renewal is refused and the job stops before its next model call.

When the storage fails, not the job (a full disk: :mod:`storage.jobs._storage_trouble`), the job
goes back to the queue after its backoff without spending an attempt and claims back off; a few
such failures in a row stop the worker with a :class:`annotation.UserError` that says why. Log
lines and errors stored with a job are redacted (:func:`annotation.redact`).
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from annotation import redact
from storage._jobs import Job
from storage._project import Project
from storage.jobs._heartbeat import NO_PROGRESS, Progress, beat, heartbeats, renew, why_gone
from storage.jobs._heartbeat import err_text as _err
from storage.jobs._registry import JOB_KINDS, UnknownJobKindError, get_kind, load_kind_modules
from storage.jobs._running import Running
from storage.jobs._storage_trouble import StorageWatch, open_project, storage_trouble
from storage.jobs._types import JobError, JobOutcome
from storage.jobs._worker_log import LogSink, logging_to, redacted, stderr_log


@dataclass
class WorkerStats:
    """What one :func:`run_worker` call did (``failed``: final failures; requeued: ``retried``)."""

    claimed: int = 0
    done: int = 0
    failed: int = 0
    retried: int = 0
    lost: int = 0
    cancelled: int = 0
    released: int = 0


def make_worker_id() -> str:
    """``host:pid:random``: unique per process, and says where to look when a lease is stuck."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def run_worker(
    project_root: Path,
    *,
    concurrency: int = 1,
    drain: bool = False,
    lease_s: float = 30.0,
    poll_s: float = 0.5,
    grace_s: float = 10.0,
    stop: threading.Event | None = None,
    worker_id: str | None = None,
    kinds: list[str] | None = None,
    log: LogSink | None = None,
    kind_modules: Sequence[str] = (),
    ray: str | None = None,
    ray_cpus: int | None = None,
) -> WorkerStats:
    """Run jobs from the project's queue until ``stop`` is set (or, with ``drain``, until
    nothing is left that could become claimable).

    Args:
        project_root: The project folder.
        concurrency: Jobs run at once (one thread and one connection each).
        drain: Exit once no job of our kinds is queued (backoff included) or running.
        lease_s: Lease length; heartbeats renew it every ``lease_s / 3``.
        poll_s: Wait between claims while the queue is empty.
        grace_s: After ``stop``, how long running jobs may finish before they are released.
        stop: Set it to stop (the CLI sets it from SIGTERM/SIGINT).
        worker_id: Defaults to :func:`make_worker_id`.
        kinds: Claim only these kinds (default: any kind; unknown kinds fail with a reason).
        log: Receives every log record (default: JSON lines on stderr, info and up).
        kind_modules: Modules to import first so that they register their kinds (the CLI's
            worker passes ``judge``); kinds already registered stay, and the diagnostic kinds
            are always there.
        ray: Run remote kinds as tasks on the Ray cluster at this address (``local``: start
            one here, with ``ray_cpus`` CPUs); ``concurrency`` is then the most tasks in
            flight. This process stays the only one that opens the project
            (:mod:`storage.jobs._ray_driver`).

    Returns:
        Counts of what happened.

    Raises:
        ProjectError: ``project_root`` is not a project.
        UnknownJobKindError: ``kinds`` names a kind no loaded module registers.
        DiskFullError: the disk holding the project is full (at the start, or claims and jobs
            kept failing for it: the worker stopped, its jobs back in the queue or under a
            lease that runs out).
        WorkerStoppedError: the same for a read-only, damaged or unwritable project.
    """
    missing = load_kind_modules(kind_modules)
    for name in kinds or []:
        get_kind(name)
    control = open_project(Path(project_root))  # a wrong folder fails before any thread
    ident, stop = worker_id or make_worker_id(), stop or threading.Event()
    w = _Worker(project_root, ident, drain, lease_s, poll_s, stop, kinds, log or stderr_log())
    if ray is not None:
        from storage.jobs._ray_driver import RayExecutor, connect

        try:
            w.execute = RayExecutor(connect(ray, cpus=ray_cpus), Path(project_root), w.emit)
        except BaseException:
            control.close()
            raise
    with control, logging_to(w.emit):
        for name in missing:
            w.emit("warning", "worker.kinds_missing", module=name)
        settings = dict(concurrency=concurrency, drain=drain, lease_s=lease_s, kinds=kinds,
                        ray=ray)  # fmt: skip
        w.emit("info", "worker.start", **settings, registered=sorted(JOB_KINDS))
        runners = [
            threading.Thread(target=w.runner, name=f"job-runner-{i}", daemon=True)
            for i in range(concurrency)
        ]
        beat = threading.Thread(target=heartbeats, args=(w,), name="job-heartbeat", daemon=True)
        for t in [beat, *runners]:
            t.start()
        while any(t.is_alive() for t in runners) and not w.stop.wait(0.1):
            pass
        reason = "stop" if w.stop.is_set() else "drained"
        if w.stop.is_set():
            w.wind_down(control, runners, grace_s)
        w.beat_stop.set()
        beat.join(timeout=5.0)
        reason = "storage" if (halted := w.storage.error()) is not None else reason
        w.stats.released += w.storage.hand_back(control)  # every thread has ended: no lock
        w.emit("info", "worker.stop", reason=reason, **asdict(w.stats))
    if halted is not None:
        raise halted
    return w.stats


@dataclass
class _Worker:
    root: Path
    id: str
    drain: bool
    lease_s: float
    poll_s: float
    stop: threading.Event
    kinds: list[str] | None
    log: LogSink
    stats: WorkerStats = field(default_factory=WorkerStats)
    beat_stop: threading.Event = field(default_factory=threading.Event)
    active: dict[int, Running] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)  # guards stats and active
    storage: StorageWatch = field(init=False)  # storage failures in a row, of every thread
    #: runs a claimed job's kind: here by default, or on a cluster (storage.jobs._ray_driver)
    execute: Callable[[str, Running], JobOutcome] = field(
        default=lambda kind, rec: get_kind(kind).run(rec)
    )

    def __post_init__(self) -> None:
        self.storage = StorageWatch(self.root, self.poll_s, self.stop, self.emit)

    # ---- logging and counting ----------------------------------------------------------------
    def emit(self, level: str, event: str, job: Job | None = None, /, **fields: Any) -> None:
        ts = datetime.now(UTC).isoformat(timespec="milliseconds")
        record: dict[str, Any] = {"ts": ts, "level": level, "event": event, "worker": self.id}
        record |= {"job": job.id if job else None, "kind": job.kind if job else None, **fields}
        with suppress(Exception):  # a broken log sink (closed stderr) must not stop jobs
            self.log(redacted(record))  # an error may quote the key an endpoint refused

    def count(self, name: str) -> None:
        with self._lock:
            setattr(self.stats, name, getattr(self.stats, name) + 1)

    # ---- runner threads ------------------------------------------------------------------
    def runner(self) -> None:
        try:
            with Project.open(self.root) as project:
                self._claim_loop(project)
        except BaseException as e:  # a bug in the loop itself: say so; leases will expire
            self.storage.halt_if_storage(e)  # the project cannot even be opened: stop all
            self.emit("error", "worker.crashed", error=_err(e), traceback=traceback.format_exc())

    def _claim_loop(self, project: Project) -> None:
        while not self.stop.is_set():
            try:
                job = project.jobs.claim(self.id, self.lease_s, self.kinds)
                idle = job is None and self.drain and not self._pending(project)
            except Exception as e:  # locked past the busy timeout, disk trouble: try later
                self.emit("error", "worker.claim_error", error=_err(e))
                if not self.storage.failed(e):  # a full disk backs off, then stops the worker
                    self.stop.wait(self.poll_s)
                continue
            if job is None:
                if idle:
                    return
                self.stop.wait(self.poll_s)
                continue
            rec = Running(self, job, project)
            with self._lock:
                self.active[job.id] = rec
            try:
                self._run(project, rec)
            finally:
                with self._lock:
                    self.active.pop(job.id, None)

    def _pending(self, project: Project) -> bool:
        """Could a job of ours still become claimable? Queued ones may wait out a backoff;
        running ones may be a dead worker's whose lease has yet to expire."""
        return project.jobs.pending(self.kinds) > 0

    def _run(self, project: Project, rec: Running) -> None:
        job = rec.job
        self.count("claimed")
        keys = sorted(job.payload)  # never the values: a payload may hold a secret
        self.emit("info", "job.claimed", job, attempt=job.attempts, payload_keys=keys)
        if self.stop.is_set():  # claimed just as we were told to stop: give it back untouched
            self.release(project, rec)
            return
        start = time.monotonic()
        try:
            outcome = self.execute(job.kind, rec)
            if not isinstance(outcome, JobOutcome):
                raise TypeError(f"the {job.kind} function returned {type(outcome).__name__}")
        except (JobError, UnknownJobKindError) as e:  # expected failures: no traceback
            if self._storage_fault(project, rec, e):
                return  # a job that said "failed" because its storage did: put back
            self._fail(project, rec, e if isinstance(e, JobError) else JobError(str(e)))
            return
        except Exception as e:  # a bug in the job function: never retried, always explained
            if self._storage_fault(project, rec, e):
                return
            self.emit("error", "job.crashed", job, error=_err(e), traceback=traceback.format_exc())
            self._fail(project, rec, JobError(_err(e)))
            return
        if not self._begin_finish(project, rec):
            return
        try:
            ok = project.jobs.complete(
                job.id,
                rec.owner,
                lambda: outcome.write(project),
                cost_usd=outcome.cost_usd,
                ran_on=rec.where,
            )
        except Exception as e:  # writing the result failed and was rolled back
            if self._storage_fault(project, rec, e, begun=True):
                return
            self.emit("error", "job.crashed", job, error=_err(e), traceback=traceback.format_exc())
            self._fail(project, rec, JobError(f"writing the result failed: {_err(e)}"), begun=True)
            return
        if not ok:
            self._not_ours(project, rec)
            return
        self.count("done")
        self.storage.ok()
        took = round(time.monotonic() - start, 3)
        # The result ref may quote the payload: not logged.
        self.emit("info", "job.done", job, seconds=took, cost_usd=outcome.cost_usd)

    def _storage_fault(
        self, project: Project, rec: Running, err: BaseException, *, begun: bool = False
    ) -> bool:
        """If ``err`` is the storage's failure, not the job's: put the job back after the
        queue's retry backoff without spending its attempt (a disk full for an hour must not
        fail a batch for good), count the failure (it may stop the worker), and say True."""
        why = storage_trouble(err, self.root)
        if why is None:
            return False
        job, error = rec.job, redact(f"{why}: {_err(err)}")
        if begun or self._begin_finish(project, rec):
            wait = job.retry_backoff_s
            try:
                ok = project.jobs.release(job.id, rec.owner, wait_s=wait, error=error)
            except Exception as e:  # the database cannot take even that: handed back later
                self.storage.not_recorded(rec, error, e)
                ok = None
            if ok is False:
                self._not_ours(project, rec)
            elif ok:
                self.count("retried")
                self.emit("warning", "job.retry", job, error=error, backoff_s=wait,
                          attempt=job.attempts, attempt_spent=False)  # fmt: skip
        self.storage.failed(err)
        return True

    def _fail(self, project: Project, rec: Running, err: JobError, *, begun: bool = False) -> None:
        # stored with the job and shown by `jobs status`: an endpoint's error may quote the key
        job, error, retry = rec.job, redact(str(err)), err.retry
        if not begun and not self._begin_finish(project, rec):
            return
        try:
            ok = project.jobs.fail(
                job.id, rec.owner, error, retry=retry, rate_limited=err.rate_limited,
                backoff_s=err.backoff_s,
            )  # fmt: skip
        except Exception as e:
            self.storage.not_recorded(rec, error, e)
            return
        self.storage.ok()  # the failure was the job's own, and it was recorded
        if not ok:
            self._not_ours(project, rec)
        elif retry and job.attempts < job.max_attempts:  # attempts cannot change while ours
            self.count("retried")
            wait = err.backoff_s
            if wait is None:
                wait = job.backoff_s(rate_limited=err.rate_limited)
            self.emit(
                "warning", "job.retry", job, error=error, backoff_s=wait, attempt=job.attempts
            )
        else:
            self.count("failed")
            self.emit("error", "job.failed", job, error=error, attempt=job.attempts)

    def _begin_finish(self, project: Project, rec: Running) -> bool:
        """Claim the right to write the outcome, unless stop or a heartbeat got there first."""
        with rec.lock:
            gone = rec.gone
            rec.finishing = gone is None
        if gone is not None:
            self._not_ours(project, rec)
        return gone is None

    def _not_ours(self, project: Project, rec: Running) -> None:
        """The job's outcome was dropped: say why, once."""
        if rec.gone is None:
            self.mark_gone(rec, why_gone(project, rec.job.id), force=True)
        else:
            self.emit("debug", "job.discarded", rec.job, reason=rec.gone)

    def mark_gone(self, rec: Running, reason: str, *, force: bool = False) -> None:
        with rec.lock:
            if rec.gone is not None or (rec.finishing and not force):
                return
            rec.gone = reason
        self.count(reason)
        if reason == "cancelled":
            self.emit("info", "job.cancelled", rec.job)
        else:
            self.emit("warning", "job.lost", rec.job, why="lease taken over or job removed")

    def release(self, project: Project, rec: Running) -> None:
        """Put an unfinished job back in the queue, keeping its attempt."""
        with rec.lock:
            if rec.finishing or rec.gone is not None:
                return
            rec.gone = "released"
        try:
            project.jobs.release(rec.job.id, rec.owner)
        except Exception as e:  # its lease still expires, so another worker gets it later
            self.emit("error", "job.release_error", rec.job, error=_err(e))
            return
        self.count("released")
        self.emit("info", "job.released", rec.job)

    def wind_down(self, control: Project, runners: list[threading.Thread], grace_s: float) -> None:
        """After stop: let running jobs finish for ``grace_s``, then release the rest."""
        deadline = time.monotonic() + grace_s
        while any(t.is_alive() for t in runners) and time.monotonic() < deadline:
            time.sleep(0.05)
        with self._lock:
            left = list(self.active.values())
        for rec in left:
            self.release(control, rec)
        for t in runners:  # released jobs see cancelled(); give them a moment to notice
            t.join(timeout=max(0.0, 2.0 - (time.monotonic() - deadline)))
        if any(t.is_alive() for t in runners):
            self.emit("warning", "worker.abandoned", why="a job function ignores cancelled()")

    # ---- heartbeat thread (storage.jobs._heartbeat) ----------------------------------------
    def running_now(self) -> list[Running]:
        with self._lock:
            return list(self.active.values())

    def _beat(self, project: Project, rec: Running) -> None:
        beat(self, project, rec)

    def renew(self, project: Project, rec: Running, progress: Progress = NO_PROGRESS) -> bool:
        """Renew one lease now (see :func:`storage.jobs._heartbeat.renew`)."""
        return renew(self, project, rec, progress)
