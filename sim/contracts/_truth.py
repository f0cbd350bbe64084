"""Three-valued truth for contract conditions, and the accepted events they may refer to.

A condition can be TRUE, FALSE or UNKNOWN. UNKNOWN is not a polite FALSE: it records that the
evidence was missing (an object was removed, an attribute is not represented, no event log),
so reports can show it distinctly. For scoring it still counts as *not satisfied* (Ego2World
B.6), which :func:`satisfied` encodes in one place.

Connectives follow strong Kleene logic: ``not U = U``; ``all`` is FALSE as soon as one part is
FALSE, otherwise UNKNOWN if one part is UNKNOWN; ``any`` dually. This keeps "FALSE because a
present object is wrong" apart from "cannot tell", even inside compound conditions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sim.world import Verdict


class Truth(StrEnum):
    T = "T"
    F = "F"
    U = "U"

    @staticmethod
    def of(value: bool) -> Truth:
        return Truth.T if value else Truth.F


def satisfied(value: Truth) -> bool:
    """Only TRUE satisfies a condition; UNKNOWN is missing evidence and fails the contract."""
    return value is Truth.T


def t_not(value: Truth) -> Truth:
    if value is Truth.U:
        return Truth.U
    return Truth.F if value is Truth.T else Truth.T


def t_all(values: Iterable[Truth]) -> Truth:
    seen = list(values)
    if Truth.F in seen:
        return Truth.F
    return Truth.U if Truth.U in seen else Truth.T


def t_any(values: Iterable[Truth]) -> Truth:
    seen = list(values)
    if Truth.T in seen:
        return Truth.T
    return Truth.U if Truth.U in seen else Truth.F


@dataclass(frozen=True)
class Event:
    """One accepted, grounded action of a task: verb plus resolved object and target ids.

    Accepted-event contracts are evaluated against the list of these, never against what the
    agent said, so a rejected attempt can not satisfy one. ``tick`` (when the action was
    accepted) only serves as the transition witness.
    """

    verb: str
    obj: str | None = None
    target: str | None = None
    tick: int | None = None

    @staticmethod
    def from_verdict(verdict: Verdict, tick: int | None = None) -> Event:
        """The event an accepted verdict records; a rejected verdict is not an event."""
        if not verdict.accepted:
            raise ValueError(f"rejected action is not an event: {verdict.action.describe()}")
        grounded = verdict.grounded
        return Event(
            verb=verdict.action.verb.value,
            obj=grounded.obj if grounded else None,
            target=grounded.target if grounded else None,
            tick=tick,
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verb": self.verb}
        for key in ("obj", "target", "tick"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out
