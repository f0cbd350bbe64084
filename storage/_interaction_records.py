"""Typed records of interactive episodes and batches (schema v6), validated on the way in.

Like the trace records in ``_episode_records``: frozen shapes that ``sim`` writes and the views
read, ``*_json`` fields kept as the writer's own JSON text (checked to parse, never
re-serialised), and a row function per record that refuses a bad field by name before anything
is written. The allowed values mirror the CHECK constraints of the v6 tables, so a refusal here
says which field is wrong instead of SQLite's "CHECK constraint failed".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from annotation import UserError
from storage._episode_records import EpisodeError, check_count, check_json

Speaker = Literal["user", "assistant"]
Party = Literal["assistant", "user", "agent"]
EventCategory = Literal["error", "question", "request", "plan_change"]
EventStatus = Literal["pending", "active", "resolved"]
Resolution = Literal[
    "accepted", "completed", "cancelled", "timeout", "episode_end", "not_reached", "asked",
    "announced", "window_closed",
]  # fmt: skip
CallOutcome = Literal["valid", "repaired", "silenced", "failed"]
AttributionParty = Literal["assistant", "user", "environment", "none"]
AttributionSource = Literal["proposed", "edited"]

SPEAKERS: tuple[Speaker, ...] = ("user", "assistant")
PARTIES: tuple[Party, ...] = ("assistant", "user", "agent")
EVENT_CATEGORIES: tuple[EventCategory, ...] = ("error", "question", "request", "plan_change")
EVENT_STATUSES: tuple[EventStatus, ...] = ("pending", "active", "resolved")
RESOLUTIONS: tuple[Resolution, ...] = (
    "accepted", "completed", "cancelled", "timeout", "episode_end", "not_reached", "asked",
    "announced", "window_closed",
)  # fmt: skip
CALL_OUTCOMES: tuple[CallOutcome, ...] = ("valid", "repaired", "silenced", "failed")
ATTRIBUTION_PARTIES: tuple[AttributionParty, ...] = ("assistant", "user", "environment", "none")


class BatchError(UserError, ValueError):
    """Bad input for a batch (unknown cell, duplicate episode, bad field); nothing was written."""


class BatchNotFoundError(BatchError):
    """No batch with that id (or unique id prefix) in this project."""


class AmbiguousBatchError(BatchError):
    """An id prefix that more than one batch starts with."""


@dataclass(frozen=True)
class TurnRecord:
    """One utterance of the public conversation at ``tick`` (when said, or when delivered).

    ``move`` is the user's conversational move (``accept``, ``ask`` …); ``flag`` the error type
    an assistant reply claims to have seen and ``flag_target`` the object it concerns (only
    assistant turns carry flags, and a silent flagged reply has ``text=''``). ``meta_json``
    holds what the views may want besides (the query tick of a late reply, …).
    """

    idx: int
    tick: int
    speaker: Speaker
    text: str
    move: str = ""
    flag: str | None = None
    flag_target: str | None = None
    meta_json: str = "{}"


@dataclass(frozen=True)
class EventRecord:
    """One scheduled out-of-plan event and the ticks of its life (IVG spec §3.3).

    ``status`` is pending (never triggered), active or resolved; ``resolution`` says how it
    ended. ``spec_json`` is the event as scheduled and ``data_json`` what the harness derived
    (a question's reference answer, a request's readiness tick t_c and window end H).
    """

    idx: int
    event_id: str
    category: EventCategory
    type: str
    spec_json: str
    status: EventStatus
    trigger_tick: int | None = None
    commit_tick: int | None = None
    resolve_tick: int | None = None
    resolution: Resolution | None = None
    accept_tick: int | None = None
    data_json: str = "{}"


@dataclass(frozen=True)
class ExchangeRecord:
    """A view or prompt sent to a participant at ``tick`` and what came back.

    ``received_json`` is None while the request is in flight (write the exchange again, whole,
    when the reply arrives); ``due_tick`` is when the reply reaches the episode under the
    latency model, ``latency_s`` what the call actually took.

    A model exchange (v13) also carries what it cost — ``tokens_in``, ``tokens_out`` and
    ``cost_usd`` over every request it made — and its ``outcome``: ``valid`` (the first reply
    was), ``repaired`` (valid only after a re-ask), ``silenced`` (still invalid when the repair
    budget ran out: the participant said nothing) or ``failed`` (the call raised). All None for
    an exchange no model answered. One logical call may span several rows (the tool agent
    stores each request): only the last row of the call has an outcome.
    """

    idx: int
    tick: int
    party: Party
    sent_json: str
    received_json: str | None
    latency_s: float | None = None
    due_tick: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    outcome: CallOutcome | None = None


@dataclass(frozen=True)
class BatchRecord:
    """A batch: its name, the manifest it was planned from, and how many cells it has.

    A cell is one scenario x persona x assistant x timing combination; each of its runs is one
    planned episode (:class:`BatchCellRecord`).
    """

    id: str
    name: str
    manifest: dict[str, Any]
    created: str
    cells: int


@dataclass(frozen=True)
class BatchCellRecord:
    """One planned episode of a batch: run ``run`` of cell ``cell``.

    ``job_id`` is the job that runs it and ``episode_id`` the episode stored for it; both are
    None when planned, and set by ``Batches.set_job`` and ``Batches.store_episode``.
    """

    cell: int
    run: int
    scenario: str
    persona: str
    assistant: str
    timing: str
    seed: int
    job_id: int | None = None
    episode_id: str | None = None


@dataclass(frozen=True)
class AttributionRecord:
    """Who an episode's failure is attributed to, why, and whether a person edited it."""

    episode_id: str
    party: AttributionParty
    reason: str
    source: AttributionSource
    updated: str


def one_of(allowed: Sequence[str], value: object, field: str, error: type[UserError]) -> str:
    """``value`` if it is one of ``allowed``, or an error listing them, naming the field."""
    if not isinstance(value, str) or value not in allowed:
        raise error(f"{field}: {value!r} is not one of {', '.join(allowed)}")
    return value


def _text(value: object, field: str, *, nullable: bool = False) -> None:
    if value is None and nullable:
        return
    if not isinstance(value, str):
        raise EpisodeError(f"{field}: expected text, got {value!r:.80}")


# ---- rows: validated on the way in -------------------------------------------------------
def turn_row(t: TurnRecord, k: int) -> tuple[Any, ...]:
    where = f"turns[{k}]"
    if not isinstance(t, TurnRecord):
        raise EpisodeError(f"{where}: expected a TurnRecord, got {type(t).__name__}")
    check_count(t.idx, f"{where}.idx")
    check_count(t.tick, f"{where}.tick")
    one_of(SPEAKERS, t.speaker, f"{where}.speaker", EpisodeError)
    _text(t.text, f"{where}.text")
    _text(t.move, f"{where}.move")
    _text(t.flag, f"{where}.flag", nullable=True)
    _text(t.flag_target, f"{where}.flag_target", nullable=True)
    if t.flag is not None and t.speaker != "assistant":
        raise EpisodeError(f"{where}.flag: only an assistant turn carries a flag")
    if t.flag_target is not None and t.flag is None:
        raise EpisodeError(f"{where}.flag_target: a target needs a flag")
    check_json(t.meta_json, f"{where}.meta_json")
    return (t.idx, t.tick, t.speaker, t.text, t.move, t.flag, t.flag_target, t.meta_json)


def event_row(e: EventRecord, k: int) -> tuple[Any, ...]:
    where = f"events[{k}]"
    if not isinstance(e, EventRecord):
        raise EpisodeError(f"{where}: expected an EventRecord, got {type(e).__name__}")
    check_count(e.idx, f"{where}.idx")
    if not isinstance(e.event_id, str) or not e.event_id:
        raise EpisodeError(f"{where}.event_id: expected a non-empty id, got {e.event_id!r}")
    one_of(EVENT_CATEGORIES, e.category, f"{where}.category", EpisodeError)
    _text(e.type, f"{where}.type")
    check_json(e.spec_json, f"{where}.spec_json")
    one_of(EVENT_STATUSES, e.status, f"{where}.status", EpisodeError)
    if e.resolution is not None:
        one_of(RESOLUTIONS, e.resolution, f"{where}.resolution", EpisodeError)
    for name in ("trigger_tick", "commit_tick", "resolve_tick", "accept_tick"):
        check_count(getattr(e, name), f"{where}.{name}", nullable=True)
    # The metrics measure from the trigger tick: a later tick without one, or before it, is a
    # harness bug that would otherwise surface as a negative reaction time.
    if e.resolution == "not_reached" and e.trigger_tick is not None:
        raise EpisodeError(
            f"{where}.trigger_tick: an event resolved not_reached was never triggered, "
            f"got {e.trigger_tick}"
        )
    for name in ("commit_tick", "resolve_tick", "accept_tick"):
        value = getattr(e, name)
        if value is None:
            continue
        if e.trigger_tick is None:
            raise EpisodeError(f"{where}.{name}: {value} for an event never triggered")
        if value < e.trigger_tick:
            raise EpisodeError(
                f"{where}.{name}: {value} is before the trigger tick {e.trigger_tick}"
            )
    check_json(e.data_json, f"{where}.data_json")
    return (
        e.idx, e.event_id, e.category, e.type, e.spec_json, e.status, e.trigger_tick,
        e.commit_tick, e.resolve_tick, e.resolution, e.accept_tick, e.data_json,
    )  # fmt: skip


def exchange_row(x: ExchangeRecord, k: int) -> tuple[Any, ...]:
    where = f"exchanges[{k}]"
    if not isinstance(x, ExchangeRecord):
        raise EpisodeError(f"{where}: expected an ExchangeRecord, got {type(x).__name__}")
    check_count(x.idx, f"{where}.idx")
    check_count(x.tick, f"{where}.tick")
    one_of(PARTIES, x.party, f"{where}.party", EpisodeError)
    check_json(x.sent_json, f"{where}.sent_json")
    check_json(x.received_json, f"{where}.received_json", nullable=True)
    latency = _amount(x.latency_s, f"{where}.latency_s", "seconds")
    check_count(x.due_tick, f"{where}.due_tick", nullable=True)
    check_count(x.tokens_in, f"{where}.tokens_in", nullable=True)
    check_count(x.tokens_out, f"{where}.tokens_out", nullable=True)
    cost = _amount(x.cost_usd, f"{where}.cost_usd", "US$")
    if x.outcome is not None:
        one_of(CALL_OUTCOMES, x.outcome, f"{where}.outcome", EpisodeError)
    return (
        x.idx, x.tick, x.party, x.sent_json, x.received_json, latency, x.due_tick, x.tokens_in,
        x.tokens_out, cost, x.outcome,
    )  # fmt: skip


def _amount(value: object, field: str, unit: str) -> float | None:
    """A finite number >= 0 (seconds, dollars) as a float, or None."""
    if value is None:
        return None
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value < 0
    ):
        raise EpisodeError(f"{field}: expected {unit} >= 0 or None, got {value!r}")
    return float(value)


def cell_row(c: BatchCellRecord, k: int) -> tuple[Any, ...]:
    where = f"cells[{k}]"
    if not isinstance(c, BatchCellRecord):
        raise BatchError(f"{where}: expected a BatchCellRecord, got {type(c).__name__}")
    for name in ("cell", "run"):
        value = getattr(c, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise BatchError(f"{where}.{name}: expected an int >= 0, got {value!r}")
    for name in ("scenario", "persona", "assistant", "timing"):
        value = getattr(c, name)
        if not isinstance(value, str) or not value.strip():
            raise BatchError(f"{where}.{name}: expected a non-empty name, got {value!r}")
    if not isinstance(c.seed, int) or isinstance(c.seed, bool):
        raise BatchError(f"{where}.seed: expected an int, got {c.seed!r}")
    if c.job_id is not None:
        raise BatchError(f"{where}.job_id: set by set_job once the job is queued, not planned")
    if c.episode_id is not None:
        raise BatchError(f"{where}.episode_id: set by store_episode, not planned")
    return (c.cell, c.run, c.scenario, c.persona, c.assistant, c.timing, c.seed)


def check_reason(reason: object) -> str:
    if not isinstance(reason, str):
        raise BatchError(f"reason: expected text, got {reason!r:.80}")
    return reason
