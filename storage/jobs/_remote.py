"""Job kinds that can run away from the project: prepared by the one process that holds the
project's SQLite file, executed anywhere (a local thread, a Ray worker on another machine),
finished back in the holder's transaction.

A remote kind splits its job function in three:

- ``prepare(ctx, project) -> RemoteTask | JobOutcome``: on the worker or driver, with the
  project open: reads what the job needs into plain, picklable ``inputs``, names the files it
  must read (by sha256, with the local path: a cluster sends each file once) and the
  environment variables it needs (an API key's *name*: its value reaches the task only through
  the task's runtime environment, never an argument, an object or the project). A job with
  nothing left to do returns its :class:`JobOutcome` directly.
- ``task.fn(inputs, files, channel) -> result``: a module-level function, so it pickles by
  reference; no SQLite, no project: ``files`` maps each name to a local path the executor made
  readable, and ``channel`` takes progress, streamed events and answers ``cancelled()``.
- ``task.finish(result) -> JobOutcome``: back on the holder, whose ``write`` stores the result
  in the transaction that marks the job done (exactly once, as for a local job).

``task.on_event(project, event)`` stores each streamed event as it arrives (a judge's call
records: a task that dies mid-video keeps its trail and its spend), on the holder's job
connection. :func:`run_here` runs the three parts in this process: the local worker uses it, so
a kind has one implementation whether it runs on a laptop or a cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from storage._project import Project
from storage.jobs._types import JobContext, JobError, JobOutcome


class Channel(Protocol):
    """What a task may tell its holder while it runs, and ask it."""

    def progress(self, fraction: float, note: str = "", cost_usd: float | None = None) -> None: ...

    def event(self, event: Any) -> None:
        """Send a picklable record to the holder's ``on_event`` (in order, each once)."""
        ...

    def cancelled(self) -> bool: ...


TaskFn = Callable[[Mapping[str, Any], Mapping[str, Path], Channel], Any]


@dataclass(frozen=True)
class RemoteTask:
    fn: TaskFn
    inputs: Mapping[str, Any]
    finish: Callable[[Any], JobOutcome]
    files: Mapping[str, tuple[str, Path]] = field(default_factory=dict)  # name -> (sha256, path)
    env: tuple[str, ...] = ()  # names of the environment variables the task reads
    on_event: Callable[[Project, Any], None] | None = None
    #: called on the holder when the task failed (raised, died, was cancelled), with the
    #: JobError the job fails with, before it is raised: e.g. end a judge run as failed
    on_failure: Callable[[Project, JobError], None] | None = None
    cpus: float = 1.0  # what one task occupies on an executor


Prepare = Callable[[JobContext, Project], "RemoteTask | JobOutcome"]
"""A remote kind's first part, registered with ``register(kind, remote=True)``
(:mod:`storage.jobs._registry`)."""


class _LocalChannel:
    def __init__(self, ctx: JobContext, project: Project, task: RemoteTask) -> None:
        self._ctx, self._project, self._task = ctx, project, task

    def progress(self, fraction: float, note: str = "", cost_usd: float | None = None) -> None:
        self._ctx.progress(fraction, note, cost_usd)

    def event(self, event: Any) -> None:
        if self._task.on_event is not None:
            self._task.on_event(self._project, event)

    def cancelled(self) -> bool:
        return self._ctx.cancelled()


def run_here(ctx: JobContext, prepare: Prepare) -> JobOutcome:
    """Prepare, execute and finish a remote kind in this process (the local worker's way)."""
    with Project.open(ctx.project_root) as project:
        task = prepare(ctx, project)
        if isinstance(task, JobOutcome):
            return task
        files = {name: path for name, (_sha, path) in task.files.items()}
        try:
            result = task.fn(task.inputs, files, _LocalChannel(ctx, project, task))
        except JobError as err:
            failed(project, task, err)
            raise
        except Exception as err:  # a bug in the task: the job crashes as a local one would
            failed(project, task, JobError(f"crashed: {type(err).__name__}: {err}"))
            raise
    return task.finish(result)


def failed(project: Project, task: RemoteTask, err: JobError) -> None:
    """Tell the task's ``on_failure`` (never let it hide the failure itself)."""
    if task.on_failure is not None:
        with suppress(Exception):
            task.on_failure(project, err)
