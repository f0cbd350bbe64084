"""The registry of job kinds: a job row names its kind, a worker looks the function up here.

Modules that define kinds register them with :func:`register` when imported; a worker imports
:data:`KIND_MODULES` first (:func:`load_kind_modules`). Two diagnostic kinds live here because
they need nothing but the queue: ``diag.sleep`` (a cancellable job of known length, for health
checks and tests of leases and heartbeats) and ``diag.echo`` (finishes at once).
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Callable
from typing import TypeVar

from annotation import UserError
from judge._jobkind import JobContext, JobError, JobFunction, JobOutcome
from storage import Project

JOB_KINDS: dict[str, JobFunction] = {}
"""Kind name -> job function, filled by :func:`register`."""

KIND_MODULES = ["judge._kinds", "judge._video_job"]
"""Modules that register job kinds; a worker imports them all before claiming."""

F = TypeVar("F", bound=JobFunction)


class UnknownJobKindError(UserError, LookupError):
    """A job names a kind no loaded module registered."""


def register(kind: str) -> Callable[[F], F]:
    """Decorator: run jobs of ``kind`` with the decorated function.

    Raises:
        ValueError: another function already holds that kind (two modules claiming one name
            would make which one runs depend on import order).
    """

    def decorate(fn: F) -> F:
        held = JOB_KINDS.get(kind)
        if held is not None and held is not fn:
            raise ValueError(f"job kind {kind!r} is already registered by {held.__qualname__}")
        JOB_KINDS[kind] = fn
        return fn

    return decorate


def get_kind(name: str) -> JobFunction:
    """The function registered for ``name``.

    Raises:
        UnknownJobKindError: nothing registered it; the message lists what is registered.
    """
    try:
        return JOB_KINDS[name]
    except KeyError:
        known = ", ".join(sorted(JOB_KINDS)) or "none"
        raise UnknownJobKindError(
            f"unknown job kind {name!r} (this worker knows: {known}); is the module that "
            "registers it installed?"
        ) from None


def load_kind_modules(modules: list[str] | None = None) -> list[str]:
    """Import the modules that register kinds; returns the ones not installed yet.

    Only a module that is itself missing is tolerated (a kind not shipped yet); a module that
    exists but fails to import (a missing dependency, a syntax error) is a bug and raises.
    """
    missing = []
    for name in KIND_MODULES if modules is None else modules:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
            missing.append(name)
    return missing


# ---- diagnostic kinds ------------------------------------------------------------------------
_SLEEP_STEP_S = 0.05  # how quickly diag.sleep notices a cancellation


@register("diag.sleep")
def diag_sleep(ctx: JobContext) -> JobOutcome:
    """Sleep ``payload["seconds"]`` in small steps, reporting progress; result ``diag:<n>``."""
    try:
        seconds = float(ctx.payload.get("seconds", 0.0))
        n = int(ctx.payload.get("n", ctx.job_id))
    except (TypeError, ValueError):
        # The values themselves stay out of the message: payloads may carry secrets.
        raise JobError("diag.sleep: payload 'seconds' and 'n' must be numbers") from None
    start = time.monotonic()
    while (elapsed := time.monotonic() - start) < seconds:
        if ctx.cancelled():
            raise JobError("diag.sleep: cancelled")
        ctx.progress(elapsed / seconds, f"slept {elapsed:.1f} of {seconds:.1f} s")
        time.sleep(min(_SLEEP_STEP_S, seconds - elapsed))
    ref = f"diag:{n}"

    def write(_project: Project) -> str:
        return ref

    return JobOutcome(write=write)


@register("diag.echo")
def diag_echo(ctx: JobContext) -> JobOutcome:
    """Finish at once; the result reference is ``echo:`` plus the payload as JSON."""
    ref = "echo:" + json.dumps(dict(ctx.payload), sort_keys=True)

    def write(_project: Project) -> str:
        return ref

    return JobOutcome(write=write)
