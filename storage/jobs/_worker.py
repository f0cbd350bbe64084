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
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from storage._jobs import Job
from storage._project import Project
from storage.jobs._registry import JOB_KINDS, UnknownJobKindError, get_kind, load_kind_modules
from storage.jobs._types import JobError, JobOutcome

LogSink = Callable[[dict[str, Any]], None]

PROGRESS_MIN_INTERVAL_S = 0.25  # at most ~4 progress writes per second per job
PROGRESS_LOG_INTERVAL_S = 1.0  # progress is debug noise; one line a second per job is plenty
_LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40}


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


def stderr_log(*, debug: bool = False) -> LogSink:
    """A log sink writing one JSON object per line to stderr (debug lines only if asked)."""
    floor = _LEVELS["debug" if debug else "info"]
    lock = threading.Lock()

    def sink(record: dict[str, Any]) -> None:
        if _LEVELS.get(str(record.get("level")), 20) < floor:
            return
        line = json.dumps(record, default=str)
        with lock:  # whole lines only, even with several threads logging
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    return sink


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
    """
    missing = load_kind_modules(kind_modules)
    for name in kinds or []:
        get_kind(name)
    control = Project.open(project_root)  # also makes a wrong folder fail before any thread
    ident, stop = worker_id or make_worker_id(), stop or threading.Event()
    w = _Worker(project_root, ident, drain, lease_s, poll_s, stop, kinds, log or stderr_log())
    if ray is not None:
        from storage.jobs._ray_driver import RayExecutor, connect

        try:
            w.execute = RayExecutor(connect(ray, cpus=ray_cpus), Path(project_root), w.emit)
        except BaseException:
            control.close()
            raise
    with control, _logging_to(w):
        for name in missing:
            w.emit("warning", "worker.kinds_missing", module=name)
        settings = dict(concurrency=concurrency, drain=drain, lease_s=lease_s, kinds=kinds,
                        ray=ray)  # fmt: skip
        w.emit("info", "worker.start", **settings, registered=sorted(JOB_KINDS))
        runners = [
            threading.Thread(target=w.runner, name=f"job-runner-{i}", daemon=True)
            for i in range(concurrency)
        ]
        beat = threading.Thread(target=w.heartbeats, name="job-heartbeat", daemon=True)
        for t in [beat, *runners]:
            t.start()
        while any(t.is_alive() for t in runners) and not w.stop.wait(0.1):
            pass
        reason = "stop" if w.stop.is_set() else "drained"
        if w.stop.is_set():
            w.wind_down(control, runners, grace_s)
        w.beat_stop.set()
        beat.join(timeout=5.0)
        w.emit("info", "worker.stop", reason=reason, **asdict(w.stats))
    return w.stats


class _Running:
    """A running job (its runner, the heartbeat and stop share it) and its function's context."""

    def __init__(self, worker: _Worker, job: Job, project: Project) -> None:
        self.job_id = job.id
        self.payload: Mapping[str, Any] = MappingProxyType(job.payload)
        self.project_root = worker.root
        self.job = job
        self.owner = job.lease_owner or worker.id  # this claim's token: never another claim's
        self.lock = threading.Lock()
        self.gone: str | None = None  # cancelled | lost | released: no longer ours to finish
        self.finishing = False  # its runner is writing the outcome: stop must not release it
        # Wall-clock time, not monotonic: a suspended machine's monotonic clock may stand still
        # while the lease, kept in wall time in the database, runs out.
        self.last_beat = time.time()  # the lease runs until last_beat + lease_s
        self.last_write = self.last_log = 0.0
        self.pending: tuple[float, str | None, float | None] | None = None
        self.project = project  # the runner's connection, for cancelled()
        self.where: str | None = None  # where the work runs, when not here (a cluster node)
        self.where_written = True
        self._worker = worker

    def progress(self, fraction: float, note: str = "", cost_usd: float | None = None) -> None:
        # Only remembered here; the heartbeat thread writes it, so a busy database never
        # stalls the job function, and writes stay throttled however often this is called.
        with self.lock:
            self.pending = (round(min(max(fraction, 0.0), 1.0), 4), note or None, cost_usd)

    def cancelled(self) -> bool:
        if self.gone is not None:
            return True
        # Two thirds of the lease without a renewal (heartbeats come every third): we were
        # suspended, or the heartbeat thread is starved. Renew now, before spending more.
        if time.time() - self.last_beat >= 2 * self._worker.lease_s / 3:
            self._worker.renew(self.project, self)
        return self.gone is not None

    def log(self, event: str, **fields: Any) -> None:
        self._worker.emit("info", event, self.job, **fields)

    def ran_on(self, where: str) -> None:
        """Where the job's work runs (a cluster node): written with the next heartbeat, or
        with the result (no commit of its own: a short task would pay one for a label)."""
        with self.lock:
            self.where, self.where_written = where, False


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
    active: dict[int, _Running] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)  # guards stats and active
    #: runs a claimed job's kind: here by default, or on a cluster (storage.jobs._ray_driver)
    execute: Callable[[str, _Running], JobOutcome] = field(
        default=lambda kind, rec: get_kind(kind).run(rec)
    )

    # ---- logging and counting ----------------------------------------------------------------
    def emit(self, level: str, event: str, job: Job | None = None, /, **fields: Any) -> None:
        ts = datetime.now(UTC).isoformat(timespec="milliseconds")
        record: dict[str, Any] = {"ts": ts, "level": level, "event": event, "worker": self.id}
        record |= {"job": job.id if job else None, "kind": job.kind if job else None, **fields}
        with suppress(Exception):  # a broken log sink (closed stderr) must not stop jobs
            self.log(record)

    def count(self, name: str) -> None:
        with self._lock:
            setattr(self.stats, name, getattr(self.stats, name) + 1)

    # ---- runner threads ------------------------------------------------------------------
    def runner(self) -> None:
        try:
            with Project.open(self.root) as project:
                self._claim_loop(project)
        except BaseException as e:  # a bug in the loop itself: say so; leases will expire
            self.emit("error", "worker.crashed", error=_err(e), traceback=traceback.format_exc())

    def _claim_loop(self, project: Project) -> None:
        while not self.stop.is_set():
            try:
                job = project.jobs.claim(self.id, self.lease_s, self.kinds)
                idle = job is None and self.drain and not self._pending(project)
            except Exception as e:  # locked past the busy timeout, disk trouble: try later
                self.emit("error", "worker.claim_error", error=_err(e))
                self.stop.wait(self.poll_s)
                continue
            if job is None:
                if idle:
                    return
                self.stop.wait(self.poll_s)
                continue
            rec = _Running(self, job, project)
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

    def _run(self, project: Project, rec: _Running) -> None:
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
            self._fail(project, rec, e if isinstance(e, JobError) else JobError(str(e)))
            return
        except Exception as e:  # a bug in the job function: never retried, always explained
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
            self.emit("error", "job.crashed", job, error=_err(e), traceback=traceback.format_exc())
            self._fail(project, rec, JobError(f"writing the result failed: {_err(e)}"), begun=True)
            return
        if not ok:
            self._not_ours(project, rec)
            return
        self.count("done")
        took = round(time.monotonic() - start, 3)
        # The result ref may quote the payload: not logged.
        self.emit("info", "job.done", job, seconds=took, cost_usd=outcome.cost_usd)

    def _fail(self, project: Project, rec: _Running, err: JobError, *, begun: bool = False) -> None:
        job, error, retry = rec.job, str(err), err.retry
        if not begun and not self._begin_finish(project, rec):
            return
        try:
            ok = project.jobs.fail(
                job.id, rec.owner, error, retry=retry, rate_limited=err.rate_limited,
                backoff_s=err.backoff_s,
            )  # fmt: skip
        except Exception as e:
            # Nothing recorded: the lease expires and the job runs again, so it is not lost.
            self.emit("error", "job.fail_error", job, error=error, fail_error=_err(e))
            return
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

    def _begin_finish(self, project: Project, rec: _Running) -> bool:
        """Claim the right to write the outcome, unless stop or a heartbeat got there first."""
        with rec.lock:
            gone = rec.gone
            rec.finishing = gone is None
        if gone is not None:
            self._not_ours(project, rec)
        return gone is None

    def _not_ours(self, project: Project, rec: _Running) -> None:
        """The job's outcome was dropped: say why, once."""
        if rec.gone is None:
            self.mark_gone(rec, _why_gone(project, rec.job.id), force=True)
        else:
            self.emit("debug", "job.discarded", rec.job, reason=rec.gone)

    def mark_gone(self, rec: _Running, reason: str, *, force: bool = False) -> None:
        with rec.lock:
            if rec.gone is not None or (rec.finishing and not force):
                return
            rec.gone = reason
        self.count(reason)
        if reason == "cancelled":
            self.emit("info", "job.cancelled", rec.job)
        else:
            self.emit("warning", "job.lost", rec.job, why="lease taken over or job removed")

    def release(self, project: Project, rec: _Running) -> None:
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

    # ---- heartbeat thread ----------------------------------------------------------------
    def heartbeats(self) -> None:
        try:
            with Project.open(self.root) as project:
                while not self.beat_stop.wait(min(0.1, self.lease_s / 6)):
                    with self._lock:
                        recs = list(self.active.values())
                    for rec in recs:
                        self._beat(project, rec)
        except BaseException as e:  # without heartbeats leases expire: others take over
            self.emit("error", "worker.crashed", error=_err(e), traceback=traceback.format_exc())

    def renew(
        self,
        project: Project,
        rec: _Running,
        progress: tuple[float | None, str | None, float | None] = (None, None, None),
    ) -> bool:
        """Renew one lease now on ``project`` (the heartbeat thread's connection, or the
        runner's from :meth:`_Running.cancelled`), with any progress to write. False if the
        claim is no longer ours (then the job is marked gone) or the database could not say."""
        fraction, note, cost = progress
        with rec.lock:
            where = None if rec.where_written else rec.where
        try:
            ok = project.jobs.heartbeat(
                rec.job.id,
                rec.owner,
                self.lease_s,
                progress=fraction,
                note=note,
                cost_usd=cost,
                ran_on=where,
            )
        except Exception as e:  # cannot tell: carry on; the lease has slack for a few misses
            self.emit("warning", "job.heartbeat_error", rec.job, error=_err(e))
            return False
        if not ok:
            self.mark_gone(rec, _why_gone(project, rec.job.id))
            return False
        with rec.lock:
            rec.last_beat = time.time()
            rec.where_written = rec.where_written or where is not None
        return True

    def _beat(self, project: Project, rec: _Running) -> None:
        """Renew ``rec``'s lease every third of it, and write its progress (throttled) and,
        once, where its work runs."""
        now = time.time()
        with rec.lock:
            if rec.gone is not None or rec.finishing:
                return
            pending = rec.pending
            show = pending is not None and now - rec.last_write >= PROGRESS_MIN_INTERVAL_S
            due = now - rec.last_beat >= self.lease_s / 3 or not rec.where_written
            if not show and not due:
                return
            if show:
                rec.pending = None
        if not self.renew(project, rec, pending if show and pending else (None, None, None)):
            return
        if show and pending:
            rec.last_write = now
            if now - rec.last_log >= PROGRESS_LOG_INTERVAL_S:
                rec.last_log = now
                self.emit("debug", "job.progress", rec.job, progress=pending[0], note=pending[1])


class _JsonLogHandler(logging.Handler):
    """Python ``logging`` records (the model client's, a library's) as the worker's JSON lines:
    without it they reach stderr as plain text, between the JSON lines a reader parses."""

    def __init__(self, worker: _Worker) -> None:
        super().__init__(logging.WARNING)  # httpx logs every request at INFO: not worth a line
        self._worker = worker

    def emit(self, record: logging.LogRecord) -> None:
        level = {logging.DEBUG: "debug", logging.INFO: "info", logging.WARNING: "warning"}.get(
            record.levelno, "error"
        )
        with suppress(Exception):  # a record whose message cannot be formatted is dropped
            self._worker.emit(level, "log", logger=record.name, message=record.getMessage())


@contextmanager
def _logging_to(worker: _Worker) -> Iterator[None]:
    """Route ``logging`` and ``warnings`` into the worker's log while it runs."""
    handler = _JsonLogHandler(worker)
    root = logging.getLogger()
    root.addHandler(handler)
    logging.captureWarnings(True)
    try:
        yield
    finally:
        logging.captureWarnings(False)
        root.removeHandler(handler)


def _why_gone(project: Project, job_id: int) -> str:
    """Why a job stopped being ours: a user cancelled it, or (any other case) it was lost."""
    try:
        return "cancelled" if project.jobs.is_cancelled(job_id) else "lost"
    except Exception:
        return "lost"


def _err(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"
