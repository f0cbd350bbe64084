"""The job queue's runtime: kinds and their one registry, the worker, remote kinds and the Ray
driver. The ``jobs`` table itself is a repository (:mod:`storage._jobs`); this room runs what
it holds.

Where to add a job kind: a module of the package that owns the work registers it with
:func:`register` (``@register("my.kind")`` on ``(ctx) -> JobOutcome``, or
``@register("my.kind", remote=True)`` on a ``prepare`` that can run on a cluster) and
``app/cli`` names that module in the worker's ``kind_modules``. See ``docs/architecture.md``.
"""

# The built-in kinds register here, before anything of this package runs: Python imports this
# __init__ before any of its modules, the worker runtime included.
from storage.jobs._continuity_kind import continuity_scan_job
from storage.jobs._diag_kinds import diag_echo, diag_sleep, prepare_diag_task
from storage.jobs._ray_driver import ClusterUnavailableError
from storage.jobs._registry import (
    JOB_KINDS,
    JobKind,
    UnknownJobKindError,
    get_kind,
    load_kind_modules,
    register,
)
from storage.jobs._remote import Channel, Prepare, RemoteTask, run_here
from storage.jobs._storage_trouble import WorkerStoppedError
from storage.jobs._types import JobContext, JobError, JobFunction, JobOutcome
from storage.jobs._worker import WorkerStats, run_worker
from storage.jobs._worker_log import LogSink, stderr_log

__all__ = [
    "JOB_KINDS",
    "Channel",
    "ClusterUnavailableError",
    "JobContext",
    "JobError",
    "JobFunction",
    "JobKind",
    "JobOutcome",
    "LogSink",
    "Prepare",
    "RemoteTask",
    "UnknownJobKindError",
    "WorkerStats",
    "WorkerStoppedError",
    "continuity_scan_job",
    "diag_echo",
    "diag_sleep",
    "get_kind",
    "load_kind_modules",
    "prepare_diag_task",
    "register",
    "run_here",
    "run_worker",
    "stderr_log",
]
