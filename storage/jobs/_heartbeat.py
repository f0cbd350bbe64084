"""The worker's heartbeat: one thread renews the lease of every job the worker runs and writes
their progress, so that a busy database never stalls a job function and progress writes stay
throttled however often a job reports.

A lease is renewed every third of its length; a refused renewal (the job was cancelled, or its
lease ran out and another claim took it) marks the job gone, and whatever it returns is dropped.
A renewal that fails for another reason (a locked or full database) is only a warning: the lease
has slack for a few misses. :meth:`storage.jobs._running.Running.cancelled` renews through the
same :func:`renew` when it finds the heartbeat late (a suspended machine).
"""

from __future__ import annotations

import threading
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from storage._project import Project

if TYPE_CHECKING:
    from storage._jobs import Job
    from storage.jobs._running import Running

PROGRESS_MIN_INTERVAL_S = 0.25  # at most ~4 progress writes per second per job
PROGRESS_LOG_INTERVAL_S = 1.0  # progress is debug noise; one line a second per job is plenty
Progress = tuple[float | None, str | None, float | None]  # fraction, note, cost so far
NO_PROGRESS: Progress = (None, None, None)


class Beating(Protocol):
    """What the heartbeat needs of its worker."""

    root: Path
    lease_s: float
    beat_stop: threading.Event

    def running_now(self) -> list[Running]: ...

    def _beat(self, project: Project, rec: Running) -> None: ...  # tests starve it

    def mark_gone(self, rec: Running, reason: str, *, force: bool = False) -> None: ...

    def emit(self, level: str, event: str, job: Job | None = None, /, **fields: Any) -> None: ...


def heartbeats(worker: Beating) -> None:
    """The heartbeat thread's loop, on its own connection, until ``worker.beat_stop``."""
    try:
        with Project.open(worker.root) as project:
            while not worker.beat_stop.wait(min(0.1, worker.lease_s / 6)):
                for rec in worker.running_now():
                    worker._beat(project, rec)  # the worker's own: a test may starve it
    except BaseException as e:  # without heartbeats leases expire: others take over
        worker.emit("error", "worker.crashed", error=err_text(e), traceback=traceback.format_exc())


def renew(
    worker: Beating, project: Project, rec: Running, progress: Progress = NO_PROGRESS
) -> bool:
    """Renew one lease now on ``project`` (the heartbeat thread's connection, or the
    runner's from :meth:`Running.cancelled`), with any progress to write. False if the
    claim is no longer ours (then the job is marked gone) or the database could not say."""
    fraction, note, cost = progress
    with rec.lock:
        where = None if rec.where_written else rec.where
    try:
        ok = project.jobs.heartbeat(
            rec.job.id,
            rec.owner,
            worker.lease_s,
            progress=fraction,
            note=note,
            cost_usd=cost,
            ran_on=where,
        )
    except Exception as e:  # cannot tell: carry on; the lease has slack for a few misses
        worker.emit("warning", "job.heartbeat_error", rec.job, error=err_text(e))
        return False
    if not ok:
        worker.mark_gone(rec, why_gone(project, rec.job.id))
        return False
    with rec.lock:
        rec.last_beat = time.time()
        rec.where_written = rec.where_written or where is not None
    return True


def beat(worker: Beating, project: Project, rec: Running) -> None:
    """Renew ``rec``'s lease every third of it, and write its progress (throttled) and,
    once, where its work runs."""
    now = time.time()
    with rec.lock:
        if rec.gone is not None or rec.finishing:
            return
        pending = rec.pending
        show = pending is not None and now - rec.last_write >= PROGRESS_MIN_INTERVAL_S
        due = now - rec.last_beat >= worker.lease_s / 3 or not rec.where_written
        if not show and not due:
            return
        if show:
            rec.pending = None
    if not renew(worker, project, rec, pending if show and pending else NO_PROGRESS):
        return
    if show and pending:
        rec.last_write = now
        if now - rec.last_log >= PROGRESS_LOG_INTERVAL_S:
            rec.last_log = now
            worker.emit("debug", "job.progress", rec.job, progress=pending[0], note=pending[1])


def why_gone(project: Project, job_id: int) -> str:
    """Why a job stopped being ours: a user cancelled it, or (any other case) it was lost."""
    try:
        return "cancelled" if project.jobs.is_cancelled(job_id) else "lost"
    except Exception:
        return "lost"


def err_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"
