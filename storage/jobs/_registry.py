"""The one registry of job kinds: a job row names its kind, a worker looks it up here.

It lives next to the queue, on neutral ground: ``judge`` and ``sim`` each register their own
kinds when imported (``judge.video``, ``sim.episode``), and neither imports the other. The
worker process (composed in ``app``) names the modules that register the kinds it hosts, and
:func:`load_kind_modules` imports them before claiming. The diagnostic kinds (``diag.*``) and
``continuity.scan`` are in this package and always loaded.

A kind is registered once, with one decorator:

- ``@register("kind")`` on a job function ``(ctx) -> JobOutcome``: a local kind;
- ``@register("kind", remote=True)`` on a ``prepare(ctx, project)``: a remote kind
  (:mod:`storage.jobs._remote`), which a Ray driver can run away from the project and a local
  worker runs here through the same three parts (:func:`~storage.jobs._remote.run_here`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from annotation import UserError
from storage.jobs._remote import Prepare, run_here
from storage.jobs._types import JobFunction


@dataclass(frozen=True)
class JobKind:
    """A registered kind: how a local worker runs it, and, for a remote kind, its prepare."""

    name: str
    run: JobFunction
    prepare: Prepare | None = None
    #: the decorated function (the job function, or the prepare): what identifies a claim
    origin: Callable[..., Any] | None = None

    @property
    def remote(self) -> bool:
        return self.prepare is not None


JOB_KINDS: dict[str, JobKind] = {}
"""Kind name -> :class:`JobKind`, filled by :func:`register`."""

F = TypeVar("F", bound=Callable[..., Any])


class UnknownJobKindError(UserError, LookupError):
    """A job names a kind no loaded module registered."""


def register(kind: str, *, remote: bool = False) -> Callable[[F], F]:
    """Decorator: jobs of ``kind`` run with the decorated function, or, with ``remote=True``,
    are prepared by it (and run here through :func:`run_here` on a local worker).

    Raises:
        ValueError: another function already holds that kind (two modules claiming one name
            would make which one runs depend on import order).
    """

    def decorate(fn: F) -> F:
        held = JOB_KINDS.get(kind)
        if held is not None and held.origin is not fn:
            raise ValueError(f"job kind {kind!r} is already registered by {_name(held)}")
        if remote:
            run: JobFunction = partial(run_here, prepare=fn)
            JOB_KINDS[kind] = JobKind(kind, run, prepare=fn, origin=fn)
        else:
            JOB_KINDS[kind] = JobKind(kind, fn, origin=fn)
        return fn

    return decorate


def _name(kind: JobKind) -> str:
    return getattr(kind.origin, "__qualname__", repr(kind.origin))


def get_kind(name: str) -> JobKind:
    """The kind registered as ``name``.

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


def load_kind_modules(modules: Sequence[str] = ()) -> list[str]:
    """Import ``modules``, which register kinds; returns the ones not installed.

    Only a module that is itself missing is tolerated (a kind not shipped yet); a module that
    exists but fails to import (a missing dependency, a syntax error) is a bug and raises.
    """
    missing = []
    for name in modules:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
            missing.append(name)
    return missing
