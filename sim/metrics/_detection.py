"""Detection recall and error prevention (spec §4.2, App. D.2).

Per run, pooled (micro) over its episodes, never a mean of per-episode ratios:

    R         = Σ_i N_i^detected  / Σ_i N_i^triggered
    P_prevent = Σ_i N_i^prevented / Σ_i N_i^triggered

An event whose trigger never fired is excluded from numerator and denominator alike.

Window (gap §9.1, the reading that fits every row of the spec's table): it opens at the trigger
and closes ``commit + DETECTION_GRACE_TICKS`` if the erroneous action committed, else at the
event's resolution; both ends inclusive. An event neither committed nor resolved when the trace
ends keeps its window open to the end of the trace.

Detected: a flag the grader accepts (same type, and no target or a target among the event's) or
a correct user error call on this event, delivered inside the window. Credited once per event; a
flag may credit every event it matches.

Prevented: detected at a tick before commit (or the action never committed), and the user
accepted the guidance before commit (or never committed and accepted).

False flags: flags inside no window of an event they match. Counted (the RL reward uses them);
they do not change R.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sim.metrics._aggregate import RunValue, ratio
from sim.metrics._errors import MetricsError, check_count, check_order, check_tick

DETECTION_GRACE_TICKS = 30
"""Ticks after commit a correct diagnosis still counts (the upstream rule of the RL appendix)."""


@dataclass(frozen=True)
class ErrorEvent:
    """One scheduled error event as the trace recorded it (ticks, or ``None`` = never happened).

    Attributes:
        event_id: unique within the episode.
        type: the error type the grader expects a flag to name (e.g. ``unattended_cooking``).
        targets: entity ids a flag may name; a flag with no target matches any.
        trigger_tick: the event's trigger condition was reached; ``None`` → excluded.
        commit_tick: the erroneous action became irreversible (point of no return).
        resolve_tick: the event stopped holding the user (its window's end if never committed).
        accept_tick: the user accepted the assistant's guidance and got its queue back.
    """

    event_id: str
    type: str
    targets: tuple[str, ...] = ()
    trigger_tick: int | None = None
    commit_tick: int | None = None
    resolve_tick: int | None = None
    accept_tick: int | None = None

    def __post_init__(self) -> None:
        name = f"ErrorEvent {self.event_id!r}"
        for field in ("trigger_tick", "commit_tick", "resolve_tick", "accept_tick"):
            check_tick(name, field, getattr(self, field), optional=True)
        if self.trigger_tick is None:
            for field in ("commit_tick", "resolve_tick", "accept_tick"):
                if getattr(self, field) is not None:
                    raise MetricsError(f"{name}.{field} is set but trigger_tick is None")
        for field in ("commit_tick", "resolve_tick", "accept_tick"):
            check_order(name, "trigger_tick", self.trigger_tick, field, getattr(self, field))
        if not isinstance(self.targets, tuple):
            raise MetricsError(f"{name}.targets must be a tuple of entity ids")

    @property
    def triggered(self) -> bool:
        return self.trigger_tick is not None

    def window(self) -> tuple[int, int | None] | None:
        """[open, close] inclusive; close ``None`` = open to the end of the trace."""
        if self.trigger_tick is None:
            return None
        if self.commit_tick is not None:
            return self.trigger_tick, self.commit_tick + DETECTION_GRACE_TICKS
        return self.trigger_tick, self.resolve_tick

    def in_window(self, tick: int) -> bool:
        span = self.window()
        return span is not None and span[0] <= tick and (span[1] is None or tick <= span[1])


@dataclass(frozen=True)
class AssistantFlag:
    """An event flag the assistant raised. ``tick`` is its delivery tick (when it took effect)."""

    tick: int
    type: str
    target: str | None = None

    def __post_init__(self) -> None:
        check_tick("AssistantFlag", "tick", self.tick)

    def accepted_for(self, event: ErrorEvent) -> bool:
        """The event-specific grader: same type, and no target or one of the event's targets."""
        return self.type == event.type and (self.target is None or self.target in event.targets)


@dataclass(frozen=True)
class ErrorCall:
    """The simulated user judged the assistant's diagnosis of ``event_id`` (``correct`` or not)."""

    tick: int
    event_id: str
    correct: bool

    def __post_init__(self) -> None:
        check_tick("ErrorCall", "tick", self.tick)


@dataclass(frozen=True)
class DetectionEpisode:
    """The detection input of one episode: its error events, the flags and the error calls."""

    episode_id: str
    events: tuple[ErrorEvent, ...] = ()
    flags: tuple[AssistantFlag, ...] = ()
    calls: tuple[ErrorCall, ...] = ()

    def __post_init__(self) -> None:
        ids = [e.event_id for e in self.events]
        if len(set(ids)) != len(ids):
            raise MetricsError(f"DetectionEpisode {self.episode_id!r}.events repeat an event_id")
        for call in self.calls:
            if call.event_id not in ids:
                raise MetricsError(
                    f"DetectionEpisode {self.episode_id!r}: ErrorCall.event_id "
                    f"{call.event_id!r} names no event of the episode"
                )


@dataclass(frozen=True)
class EventOutcome:
    """One event's grade; ``detect_tick`` is the first crediting tick in its window."""

    event_id: str
    triggered: bool
    detected: bool
    prevented: bool
    detect_tick: int | None


@dataclass(frozen=True)
class DetectionResult:
    """One episode's grades and its false-flag count."""

    episode_id: str
    outcomes: tuple[EventOutcome, ...]
    false_flags: int

    def __post_init__(self) -> None:
        check_count("DetectionResult", "false_flags", self.false_flags)

    @property
    def triggered(self) -> int:
        return sum(o.triggered for o in self.outcomes)

    @property
    def detected(self) -> int:
        return sum(o.detected for o in self.outcomes)

    @property
    def prevented(self) -> int:
        return sum(o.prevented for o in self.outcomes)


def _grade(event: ErrorEvent, episode: DetectionEpisode) -> EventOutcome:
    if not event.triggered:
        return EventOutcome(event.event_id, False, False, False, None)
    ticks = [f.tick for f in episode.flags if f.accepted_for(event) and event.in_window(f.tick)]
    ticks += [
        c.tick
        for c in episode.calls
        if c.event_id == event.event_id and c.correct and event.in_window(c.tick)
    ]
    first = min(ticks, default=None)
    commit, accept = event.commit_tick, event.accept_tick
    in_time = first is not None and (commit is None or first < commit)
    accepted = accept is not None and (commit is None or accept < commit)
    return EventOutcome(event.event_id, True, first is not None, in_time and accepted, first)


def grade_detection(episode: DetectionEpisode) -> DetectionResult:
    """Grade every event of one episode and count its false flags (see the module doc)."""
    outcomes = tuple(_grade(e, episode) for e in episode.events)
    false_flags = sum(
        not any(f.accepted_for(e) and e.in_window(f.tick) for e in episode.events)
        for f in episode.flags
    )
    return DetectionResult(episode.episode_id, outcomes, false_flags)


def _pooled(results: Iterable[DetectionResult], prevented: bool) -> RunValue:
    rows = list(results)
    hits = sum(r.prevented if prevented else r.detected for r in rows)
    total = sum(r.triggered for r in rows)
    return ratio(hits, total, (r.episode_id for r in rows if r.triggered))


def detection_recall(results: Iterable[DetectionResult]) -> RunValue:
    """R = Σ detected / Σ triggered over a run's episodes; ``None`` if nothing triggered."""
    return _pooled(results, prevented=False)


def prevention_rate(results: Iterable[DetectionResult]) -> RunValue:
    """P_prevent = Σ prevented / Σ triggered over a run's episodes; ``None`` if none triggered."""
    return _pooled(results, prevented=True)
