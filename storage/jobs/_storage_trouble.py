"""When the project's storage, not the job, is what failed: a full disk, a read-only or damaged
database. The worker's answer differs from a job's own failure in two ways.

A job whose work failed only because its result could not be written would succeed as it is
once there is space again: it goes back to the queue for the queue's retry backoff, like after a
model's timeout, but spends no attempt, so a long-full disk never fails a job for good. A
worker whose claims (or jobs) keep failing for such a reason cannot do anything useful until
someone frees space or repairs the project, so after a few tries, each waiting twice as long as
the last, it stops and says why instead of spinning on the queue until it is killed.

"Database is locked" is not storage trouble: another writer holds the lock, and waiting is the
answer. Reads keep working on a full disk, so "nothing to claim" proves nothing either way.
"""

from __future__ import annotations

import contextlib
import errno
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from annotation import DiskFullError, UserError, disk_full
from storage._project import Project

if TYPE_CHECKING:
    from storage.jobs._running import Running

#: consecutive storage failures (claims or jobs, all threads) after which the worker stops
STORAGE_FAILURES_BEFORE_STOP = 6
MAX_STORAGE_WAIT_S = 8.0  # the longest wait between two tries
_LOW_SPACE_BYTES = 1 << 20  # an I/O error with less than this free is a full disk

# SQLite's primary result codes that mean the file, not the request, is the problem
_SQLITE_STORAGE = {8: "the project is read-only", 10: "the disk could not be written",
                   11: "the project database is damaged", 14: "the project cannot be opened",
                   26: "the project database is damaged"}  # fmt: skip
_OS_STORAGE = {errno.EROFS: "the project is read-only", errno.EIO: "the disk could not be written"}


class WorkerStoppedError(UserError, RuntimeError):
    """The worker stopped because the project's storage kept failing (not a full disk, which
    is a :class:`annotation.DiskFullError`); the message says why and what to do."""


def storage_trouble(err: BaseException, root: Path) -> str | None:
    """Why ``err`` is the storage's failure, in words, or None if it is not (a locked database,
    a job's own error)."""
    if disk_full(err) or (_io_error(err) and _low_space(root)):
        return f"the disk holding {root} is full"
    for e in _chain(err):
        code = getattr(e, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF in _SQLITE_STORAGE:
            return f"{_SQLITE_STORAGE[code & 0xFF]} ({root}: {e})"
        if isinstance(e, OSError) and e.errno in _OS_STORAGE:
            return f"{_OS_STORAGE[e.errno]} ({root}: {e})"
    return None


def open_project(root: Path) -> Project:
    """The worker's first connection: a disk too full to open the project on (SQLite cannot
    make its shared-memory file) is said in words, not as a bug."""
    try:
        return Project.open(root)
    except Exception as e:
        why = storage_trouble(e, root)
        if why is None:
            raise
        raise stopped_error(why, 0) from e


def storage_wait_s(failures: int, poll_s: float) -> float:
    """How long to wait after the ``failures``-th storage failure in a row: doubling from the
    worker's poll interval, at most :data:`MAX_STORAGE_WAIT_S`."""
    return float(min(max(poll_s, 0.01) * 2.0 ** max(failures - 1, 0), MAX_STORAGE_WAIT_S))


def stopped_error(reason: str, failures: int) -> UserError:
    """The error the worker stops with, after ``failures`` storage failures in a row (0: it
    could not even open the project)."""
    stopped = (f"{reason}: the worker stopped after {failures} failed tries" if failures
               else f"{reason}: the worker cannot start")  # fmt: skip
    again = "start it again (its jobs wait in the queue: none is lost)"
    if reason.startswith("the disk holding"):
        return DiskFullError(f"{stopped}; free some space and {again}")
    return WorkerStoppedError(f"{stopped}; fix the project, then {again}")


@dataclass
class StorageWatch:
    """A worker's count of storage failures in a row, shared by its threads: each failure backs
    off the thread that met it, and the last one stops the worker (``stop`` is set, and
    :meth:`error` is what :func:`storage.run_worker` raises once every thread has ended)."""

    root: Path
    poll_s: float
    stop: threading.Event
    emit: Callable[..., Any]  # the worker's log line: emit(level, event, **fields)
    failures: int = 0
    _halted: tuple[str, int] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    #: claimed jobs whose failure could not be recorded either: handed back at the end
    _held: dict[int, Running] = field(default_factory=dict)

    def failed(self, err: BaseException) -> bool:
        """Count ``err`` if the storage, not the job, failed; then wait (this thread), or stop
        the worker after :data:`STORAGE_FAILURES_BEFORE_STOP` in a row. False if it was not
        the storage: nothing counted, nothing waited."""
        why = storage_trouble(err, self.root)
        if why is None:
            return False
        with self._lock:
            self.failures += 1
            n = self.failures
            last = n >= STORAGE_FAILURES_BEFORE_STOP
            if last and self._halted is None:
                self._halted = (why, n)
        if last:
            self.emit("error", "worker.storage_stop", why=why, failures=n)
            self.stop.set()
        else:
            wait = storage_wait_s(n, self.poll_s)
            self.emit("warning", "worker.storage_error", why=why, failures=n, wait_s=wait)
            self.stop.wait(wait)
        return True

    def halt_if_storage(self, err: BaseException) -> None:
        """A thread cannot go on at all (it could not open the project): if the storage is why,
        stop the worker now."""
        why = storage_trouble(err, self.root)
        if why is not None:
            with self._lock:
                self._halted = self._halted or (why, self.failures)
            self.stop.set()

    def ok(self) -> None:
        """A job finished, or failed for its own reason: the storage works (again)."""
        with self._lock:
            self.failures = 0

    def not_recorded(self, rec: Running, error: str, err: BaseException) -> None:
        """Nothing could be written for the claimed job ``rec``: :meth:`hand_back` tries again
        when the worker stops; until then (or if that fails too) its lease holds it, and once
        the lease runs out any worker takes it. Never lost."""
        with self._lock:
            self._held[rec.job.id] = rec
        self.emit("error", "job.fail_error", rec.job, error=error, fail_error=_text(err))

    def hand_back(self, project: Project) -> int:
        """The worker has stopped: give back the jobs :meth:`not_recorded` holds; how many
        went back. The journal's checkpointed pages are the space a full disk can still give,
        so they are freed first; a job the database still refuses waits for its lease."""
        with self._lock:
            held = list(self._held.values())
        if held:
            with contextlib.suppress(Exception):
                project.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        released = 0
        for rec in held:
            try:  # not ours any more (its lease ran out, another claim took it): False
                ok = project.jobs.release(rec.job.id, rec.owner)
            except Exception as e:
                self.emit("warning", "job.left_leased", rec.job, error=_text(e),
                          claimable_after=round(rec.lease_ends, 3))  # fmt: skip
                continue
            if ok:
                released += 1
                self.emit("info", "job.released", rec.job)
        return released

    def error(self) -> UserError | None:
        """What the worker stops with, if the storage stopped it."""
        with self._lock:
            halted = self._halted
        return None if halted is None else stopped_error(*halted)


def _chain(err: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    current: BaseException | None = err
    while current is not None and current not in out and len(out) < 20:
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def _io_error(err: BaseException) -> bool:
    return any(
        (getattr(e, "sqlite_errorcode", None) or 0) & 0xFF == 10
        or (isinstance(e, OSError) and e.errno == errno.EIO)
        for e in _chain(err)
    )


def _low_space(root: Path) -> bool:
    try:
        return shutil.disk_usage(root).free < _LOW_SPACE_BYTES
    except OSError:
        return False


def _text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"
