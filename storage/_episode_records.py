"""Typed records of simulation episodes: what the episode engine writes and the trace views read.

Storage does not import ``sim``, so these are the shapes both sides agree on. Fields named
``*_json`` hold JSON text exactly as the engine serialised it: storage checks that it parses but
never re-serialises it, so a hashed text (the task contract) keeps its hash and a 10,000-tick
episode is not parsed and dumped twice on its way to disk. The row functions at the end check
every field before anything is written, so bad input fails naming the field, with nothing stored.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, TypeVar

from annotation import UserError

Truth = Literal["T", "F", "U"]
_E = TypeVar("_E", bound=StrEnum)


class EpisodeError(UserError, ValueError):
    """Bad input for an episode (unknown value, bad JSON, wrong state); nothing was written."""


class EpisodeNotFoundError(EpisodeError):
    """No episode with that id (or unique id prefix) in this project."""


class AmbiguousEpisodeError(EpisodeError):
    """An id prefix that more than one episode starts with."""


class EpisodeStatus(StrEnum):
    """Where an episode ended (spec C.4.4, plus ``cancelled``: stopped from outside — the user,
    Ctrl+C, SIGTERM — and ``failed``: the run raised an error, v13); all stay counted.

    Every end but ``running`` is final; the episode's ``end_reason`` says why in words when it
    did not simply run its course (the error, what the agent that gave up said, what stopped it).
    """

    RUNNING = "running"
    COMPLETED = "completed"
    EXECUTION_BLOCKED = "execution_blocked"
    PARSE_FAILURE = "parse_failure"
    EMPTY_PLAN = "empty_plan"
    ABORTED = "aborted"
    BUDGET_EXHAUSTED = "budget_exhausted"
    CANCELLED = "cancelled"
    FAILED = "failed"


class EpisodeMode(StrEnum):
    """Physics runs MuJoCo; symbolic applies the same effects without physics (DESIGN §6)."""

    PHYSICS = "physics"
    SYMBOLIC = "symbolic"


class ActionSource(StrEnum):
    """Who submitted an action; repairs stay apart from planner actions (spec B.7)."""

    AGENT = "agent"
    REFERENCE = "reference"
    USER = "user"
    REPAIR = "repair"
    REPLAY = "replay"
    HARNESS = "harness"  # a scheduled mistake the harness made the simulated user carry out


@dataclass(frozen=True)
class EpisodeRecord:
    """One ``sim_episodes`` row. ``contract_json`` is the frozen contract text its hash covers."""

    id: str
    scenario: str
    scenario_sha: str
    family: str
    mode: EpisodeMode
    agent: str
    seed: int
    delta: float
    status: EpisodeStatus
    started: str
    ended: str | None
    ticks: int
    t_ref: int | None
    contract_json: str
    contract_hash: str
    config: dict[str, Any]
    parent_id: str | None
    fork_tick: int | None
    reference: bool
    #: why it ended as it did, in words (None: it ran its course, or ended before v13 said)
    end_reason: str | None = None


@dataclass(frozen=True)
class TickRecord:
    """One tick: its state hash (replays must reproduce it) and what changed.

    ``graph_json`` is the full scene graph, present at tick 0 and at keyframes only; between
    keyframes the graph is the last keyframe plus the ``diff_json`` of each later tick.
    """

    tick: int
    state_hash: str
    diff_json: str = "{}"
    controller_json: str = "{}"
    graph_json: str | None = None


@dataclass(frozen=True)
class ActionRecord:
    """A submitted action, first stored when submitted, stored again when its outcome arrives.

    ``failed_json`` lists the failed preconditions (``[{"name": …, "message": …}]``; empty when
    accepted); ``outcome`` is ``"ok"`` or ``"failed: …"`` once carried out, at ``finished_tick``.
    """

    idx: int
    tick: int
    source: ActionSource
    text: str
    action_json: str
    accepted: bool
    failed_json: str = "[]"
    grounded_json: str | None = None
    outcome: str | None = None
    finished_tick: int | None = None


@dataclass(frozen=True)
class AnomalyRecord:
    """An injected anomaly; ``classification`` (e.g. the recovery class) may come later."""

    idx: int
    kind: str
    obj: str
    params_json: str
    tick: int
    trigger_json: str = "{}"
    classification: str | None = None


@dataclass(frozen=True)
class ConditionRecord:
    """A contract predicate's final value and the tick that made it true (its witness)."""

    idx: int
    predicate_json: str
    text: str
    value: Truth
    witness_tick: int | None = None


@dataclass(frozen=True)
class ArtifactRecord:
    """A recorded file of an episode, e.g. one camera's video, stored in ``media/`` by sha256."""

    kind: str
    camera: str
    media_sha: str
    fps: float
    frames: int


def check_json(value: object, field: str, *, nullable: bool = False) -> None:
    """Refuse a ``*_json`` field that is not JSON text, naming the field."""
    if value is None and nullable:
        return
    if not isinstance(value, str):
        raise EpisodeError(f"{field}: expected JSON text, got {type(value).__name__}")
    try:
        json.loads(value)
    except ValueError as err:
        raise EpisodeError(f"{field}: not valid JSON ({err})") from None


def check_count(value: object, field: str, *, nullable: bool = False) -> None:
    """Refuse a tick, index or count that is not an int >= 0 (bools are not counts)."""
    if value is None and nullable:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise EpisodeError(f"{field}: expected an int >= 0, got {value!r}")


def enum_value(kind: type[_E], value: object, field: str) -> _E:
    """``value`` as a member of ``kind``, or an error listing the allowed values."""
    values = [m.value for m in kind]
    allowed = ", ".join(values)
    if not isinstance(value, str) or value not in values:
        raise EpisodeError(f"{field}: {value!r} is not one of {allowed}")
    return kind(value)


# ---- rows: validated on the way in, typed on the way out ----------------------------------
def episode_from_row(r: Sequence[Any]) -> EpisodeRecord:
    return EpisodeRecord(
        id=r[0], scenario=r[1], scenario_sha=r[2], family=r[3], mode=EpisodeMode(r[4]),
        agent=r[5], seed=r[6], delta=r[7], status=EpisodeStatus(r[8]), started=r[9], ended=r[10],
        ticks=r[11], t_ref=r[12], contract_json=r[13], contract_hash=r[14],
        config=dict(json.loads(r[15])), parent_id=r[16], fork_tick=r[17], reference=bool(r[18]),
        end_reason=r[19],
    )  # fmt: skip


def action_from_row(r: Sequence[Any]) -> ActionRecord:
    return ActionRecord(
        idx=r[0], tick=r[1], source=ActionSource(r[2]), text=r[3], action_json=r[4],
        accepted=bool(r[5]), failed_json=r[6], grounded_json=r[7], outcome=r[8],
        finished_tick=r[9],
    )  # fmt: skip


def tick_row(t: TickRecord, k: int) -> tuple[Any, ...]:
    where = f"ticks[{k}]"
    if not isinstance(t, TickRecord):
        raise EpisodeError(f"{where}: expected a TickRecord, got {type(t).__name__}")
    check_count(t.tick, f"{where}.tick")
    if not isinstance(t.state_hash, str) or not t.state_hash:
        raise EpisodeError(f"{where}.state_hash: expected a non-empty hash, got {t.state_hash!r}")
    check_json(t.diff_json, f"{where}.diff_json")
    check_json(t.controller_json, f"{where}.controller_json")
    check_json(t.graph_json, f"{where}.graph_json", nullable=True)
    return (t.tick, t.state_hash, t.diff_json, t.controller_json, t.graph_json)


def action_row(a: ActionRecord, k: int) -> tuple[Any, ...]:
    where = f"actions[{k}]"
    if not isinstance(a, ActionRecord):
        raise EpisodeError(f"{where}: expected an ActionRecord, got {type(a).__name__}")
    check_count(a.idx, f"{where}.idx")
    check_count(a.tick, f"{where}.tick")
    source = enum_value(ActionSource, a.source, f"{where}.source")
    if not isinstance(a.text, str):
        raise EpisodeError(f"{where}.text: expected text, got {type(a.text).__name__}")
    check_json(a.action_json, f"{where}.action_json")
    check_json(a.failed_json, f"{where}.failed_json")
    check_json(a.grounded_json, f"{where}.grounded_json", nullable=True)
    if a.outcome is not None and not isinstance(a.outcome, str):
        raise EpisodeError(f"{where}.outcome: expected text or None, got {a.outcome!r}")
    check_count(a.finished_tick, f"{where}.finished_tick", nullable=True)
    return (
        a.idx, a.tick, source.value, a.text, a.action_json, int(bool(a.accepted)), a.failed_json,
        a.grounded_json, a.outcome, a.finished_tick,
    )  # fmt: skip


def anomaly_row(a: AnomalyRecord, k: int) -> tuple[Any, ...]:
    where = f"anomalies[{k}]"
    if not isinstance(a, AnomalyRecord):
        raise EpisodeError(f"{where}: expected an AnomalyRecord, got {type(a).__name__}")
    check_count(a.idx, f"{where}.idx")
    check_count(a.tick, f"{where}.tick")
    for name, text in (("kind", a.kind), ("obj", a.obj)):
        if not isinstance(text, str):
            raise EpisodeError(f"{where}.{name}: expected text, got {text!r}")
    check_json(a.params_json, f"{where}.params_json")
    check_json(a.trigger_json, f"{where}.trigger_json")
    if a.classification is not None and not isinstance(a.classification, str):
        raise EpisodeError(f"{where}.classification: expected text or None")
    return (a.idx, a.kind, a.obj, a.params_json, a.tick, a.trigger_json, a.classification)


def snapshot_row(s: tuple[int, str], k: int) -> tuple[Any, ...]:
    where = f"snapshots[{k}]"
    if not isinstance(s, tuple) or len(s) != 2:
        raise EpisodeError(f"{where}: expected (tick, snapshot_json), got {s!r:.80}")
    check_count(s[0], f"{where}.tick")
    check_json(s[1], f"{where}.snapshot_json")
    return s


def condition_row(c: ConditionRecord, k: int) -> tuple[Any, ...]:
    where = f"conditions[{k}]"
    if not isinstance(c, ConditionRecord):
        raise EpisodeError(f"{where}: expected a ConditionRecord, got {type(c).__name__}")
    check_count(c.idx, f"{where}.idx")
    check_json(c.predicate_json, f"{where}.predicate_json")
    if not isinstance(c.text, str):
        raise EpisodeError(f"{where}.text: expected text, got {type(c.text).__name__}")
    if c.value not in ("T", "F", "U"):
        raise EpisodeError(f"{where}.value: {c.value!r} is not one of T, F, U")
    check_count(c.witness_tick, f"{where}.witness_tick", nullable=True)
    return (c.idx, c.predicate_json, c.text, c.value, c.witness_tick)


def metric_row(name: str, value: float) -> tuple[str, float]:
    if not isinstance(name, str) or not name:
        raise EpisodeError(f"metrics: expected a non-empty metric name, got {name!r}")
    if not isinstance(value, int | float) or not math.isfinite(value):  # a bool counts as 0/1
        raise EpisodeError(f"metrics[{name!r}]: expected a finite number, got {value!r}")
    return (name, float(value))


def check_unique(keys: Sequence[int], what: str, key: str) -> None:
    seen: set[int] = set()
    for k in keys:
        if k in seen:
            raise EpisodeError(f"{what}: {key} {k} appears twice in one batch")
        seen.add(k)
