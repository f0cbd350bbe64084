"""A job while a worker runs it: what its runner, the heartbeat thread and stop share, and the
context (:class:`storage.JobContext`) its function is handed.

Kept apart from the worker's loops (:mod:`storage.jobs._worker`) because the Ray driver drives
the same record from its own thread; it reaches its worker only through :class:`Host`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from storage._jobs import Job
    from storage._project import Project


class Host(Protocol):
    """What a running job needs of its worker."""

    root: Path
    id: str
    lease_s: float

    def renew(self, project: Project, rec: Running) -> bool: ...

    def emit(self, level: str, event: str, job: Job | None = None, /, **fields: Any) -> None: ...


class Running:
    """A running job (its runner, the heartbeat and stop share it) and its function's context."""

    def __init__(self, worker: Host, job: Job, project: Project) -> None:
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

    @property
    def lease_ends(self) -> float:
        """When the lease runs out unless renewed (wall time, as the database keeps it)."""
        return self.last_beat + self._worker.lease_s

    def log(self, event: str, **fields: Any) -> None:
        self._worker.emit("info", event, self.job, **fields)

    def ran_on(self, where: str) -> None:
        """Where the job's work runs (a cluster node): written with the next heartbeat, or
        with the result (no commit of its own: a short task would pay one for a label)."""
        with self.lock:
            self.where, self.where_written = where, False
