"""The registry of job kinds: a job row names its kind, a worker looks the function up here.

It lives next to the queue, on neutral ground: ``judge`` and ``sim`` each register their own
kinds when imported (``judge.video``, episode batches), and neither imports the other. The
worker process (composed in ``app``) names the modules that register the kinds it hosts, and
:func:`load_kind_modules` imports them before claiming. The diagnostic kinds (``diag.sleep``,
``diag.echo``) are in :mod:`storage._diag_kinds`, which the worker runtime always loads.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import TypeVar

from annotation import UserError
from storage._jobkind import JobFunction

JOB_KINDS: dict[str, JobFunction] = {}
"""Kind name -> job function, filled by :func:`register`."""

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
