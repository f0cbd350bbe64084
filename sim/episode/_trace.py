"""The trace of an episode as the engine produces it, before any sink stores it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sim.contracts import RUN_STATUSES as CONTRACT_RUN_STATUSES
from sim.world import Action, Anomaly, Verdict

#: the spec's run statuses (C.4.4), plus ``cancelled`` (stopped from outside: the user, Ctrl+C,
#: SIGTERM) and ``failed`` (the run raised: an endpoint, an external agent, a bug)
RUN_STATUSES = (*CONTRACT_RUN_STATUSES, "cancelled", "failed")


@dataclass(frozen=True)
class TickEntry:
    """One tick: state hash after it, what changed, the controller, keyframe graph if any."""

    tick: int
    state_hash: str
    diff: dict[str, Any]
    controller: dict[str, Any]
    graph: dict[str, Any] | None = None


@dataclass
class ActionEntry:
    """One submitted action; ``outcome`` arrives when an accepted action has been carried out."""

    idx: int
    tick: int
    source: str
    action: Action
    verdict: Verdict | None = None
    outcome: str | None = None
    finished_tick: int | None = None

    @property
    def accepted(self) -> bool:
        return self.verdict is not None and self.verdict.accepted


@dataclass(frozen=True)
class AnomalyEntry:
    idx: int
    tick: int
    anomaly: Anomaly
    trigger: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EpisodeResult:
    """How a run ended and what it scored; ``end_reason`` says why in words when it did not run
    its course (the error of a ``failed`` run, what an agent that gave up said, what cancelled
    it), else None."""

    status: str
    ticks: int
    conditions: tuple[Any, ...]  # sim.contracts.ConditionResult
    metrics: dict[str, float]
    success: bool
    end_reason: str | None = None
