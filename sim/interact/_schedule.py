"""Scheduled out-of-plan events: the file format and its validation (IVG spec §3.3, §4.4–§4.5).

A schedule (``"format": "workbench-events/1"``) belongs to one scenario and lists the events the
harness injects, each triggered by a predicate on task progress (the same predicate language as
goals) and fired at most once:

- ``error``: the harness takes the user's action queue and enqueues ``actions`` (the mistake);
  ``skip`` makes the user forget that many of its own planned steps. ``commit`` is the point of
  no return (default: the last enqueued action is accepted), ``complete`` / ``cancel`` end it,
  and ``max_duration`` bounds how long the harness holds the queue.
- ``question``: the user asks about its own past (``family``: order, count, duration, recall);
  the reference answer is derived from the trace at the tick it is asked.
- ``request``: "tell me when …": ``condition`` is the readiness predicate (t_c) and
  ``window_end`` the predicate that closes the notification window (H).
- ``plan_change``: the user announces ``say`` and continues with ``plan``; ``goal`` replaces the
  task's goal predicates for success.

Every problem is refused naming the file and field (``events[2].trigger.on[1]: unknown object``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from annotation import UserError
from sim.contracts import Predicate, parse_predicate
from sim.scenario import BoundScenario
from sim.world import ActionFormatError, parse_command

FORMAT = "workbench-events/1"

#: Execution-error types (spec §3.3, Tab. 16 plus stalled progress).
ERROR_TYPES = (
    "incorrect_preparation",
    "unattended_cooking",
    "forgotten_step",
    "wrong_order",
    "raw_serving",
    "repeated_step",
    "omitted_subgoal",
    "premature_serving",
    "extraneous_ingredient",
    "wrong_ingredient",
    "stalled_progress",
)
QUESTION_FAMILIES = ("order", "count", "duration", "recall")
CATEGORIES = ("error", "question", "request", "plan_change")


class ScheduleError(UserError, ValueError):
    """An event schedule that cannot be used; the message names the file and field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EventSpec(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    category: Literal["error", "question", "request", "plan_change"]
    type: str = ""
    trigger: dict[str, Any]
    targets: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()
    skip: int = Field(default=0, ge=0, le=20)
    commit: dict[str, Any] | None = None
    complete: dict[str, Any] | None = None
    cancel: dict[str, Any] | None = None
    max_duration: int = Field(default=300, ge=1)
    mistake: str = ""
    say: str = ""
    family: Literal["order", "count", "duration", "recall", ""] = ""
    about: dict[str, str] = {}
    then: dict[str, str] = {}  # order questions: the second event
    condition: dict[str, Any] | None = None
    window_end: dict[str, Any] | None = None
    plan: tuple[str, ...] = ()
    goal: tuple[dict[str, Any], ...] = ()

    @model_validator(mode="after")
    def _by_category(self) -> EventSpec:
        c = self.category
        if c == "error":
            if self.type not in ERROR_TYPES:
                raise ValueError(f"type: an error's type is one of {', '.join(ERROR_TYPES)}")
            if not (self.actions or self.skip):
                raise ValueError("an error needs actions (the mistake) or skip (forgotten steps)")
            if not self.mistake:
                raise ValueError("mistake: describe the mistake for the user's private task")
        elif c == "question":
            if not self.family:
                raise ValueError(f"family: a question's family is one of {QUESTION_FAMILIES}")
            if not self.about:
                raise ValueError("about: what the question is about (verb/obj or item)")
            if self.family == "order" and not self.then:
                raise ValueError("then: an order question names the second event")
        elif c == "request":
            if self.condition is None or "item" not in self.about:
                raise ValueError("a request needs condition (readiness) and about.item")
        elif c == "plan_change" and not self.say:
            raise ValueError("say: the announcement of the plan change")
        return self


class ScheduleSpec(_Strict):
    format: Literal["workbench-events/1"] = "workbench-events/1"
    scenario: str
    alpha: int = Field(default=0, ge=0)  # the in-time budget's event allowance (ticks)
    events: tuple[EventSpec, ...] = ()


@dataclass(frozen=True)
class ScheduledEvent:
    """One event, parsed and bound: its predicates checked against the scene's objects."""

    spec: EventSpec
    trigger: Predicate
    commit: Predicate | None
    complete: Predicate | None
    cancel: Predicate | None
    condition: Predicate | None
    window_end: Predicate | None
    goal: tuple[Predicate, ...]

    @property
    def id(self) -> str:
        return self.spec.id


@dataclass(frozen=True)
class Schedule:
    scenario: str
    alpha: int
    events: tuple[ScheduledEvent, ...]
    source: str

    def to_json(self) -> dict[str, Any]:
        spec = ScheduleSpec(
            scenario=self.scenario, alpha=self.alpha, events=tuple(e.spec for e in self.events)
        )
        out: dict[str, Any] = spec.model_dump(mode="json", exclude_defaults=True)
        return out | {"format": FORMAT}


def load_schedule(path: Path, bound: BoundScenario, known_ids: set[str]) -> Schedule:
    """Read and bind a schedule file; refuses, naming file and field, anything unusable.

    ``known_ids`` are the objects of the scenario's world (its initial graph's nodes).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScheduleError(f"{path}: no such event schedule") from None
    except json.JSONDecodeError as e:
        raise ScheduleError(f"{path}: line {e.lineno}: not valid JSON ({e.msg})") from None
    return parse_schedule(data, bound, known_ids, source=str(path))


def parse_schedule(
    data: Any, bound: BoundScenario, known_ids: set[str], *, source: str = "<schedule>"
) -> Schedule:
    try:
        spec = ScheduleSpec.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(schedule)"
        raise ScheduleError(f"{source}: {where}: {err['msg']}") from None
    if spec.scenario != bound.name:
        raise ScheduleError(
            f"{source}: scenario: this schedule is for {spec.scenario!r}, not {bound.name!r}"
        )
    known = set(known_ids)
    ids = [e.id for e in spec.events]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ScheduleError(f"{source}: events: duplicate id {dup[0]!r}")
    events = tuple(_bind(e, i, source, known) for i, e in enumerate(spec.events))
    return Schedule(spec.scenario, spec.alpha, events, source)


def _bind(e: EventSpec, i: int, source: str, known: set[str]) -> ScheduledEvent:
    where = f"{source}: events[{i}]"

    def pred(d: dict[str, Any] | None, field: str) -> Predicate | None:
        if d is None:
            return None
        return parse_predicate(d, where=f"{where}.{field}", known_ids=known)

    for j, cmd in enumerate((*e.actions, *e.plan)):
        try:
            parse_command(cmd)
        except ActionFormatError as err:
            field = f"actions[{j}]" if j < len(e.actions) else f"plan[{j - len(e.actions)}]"
            raise ScheduleError(f"{where}.{field}: {err}") from None
    for j, t in enumerate(e.targets):
        if t not in known:
            raise ScheduleError(f"{where}.targets[{j}]: unknown object {t!r}")
    trigger = pred(e.trigger, "trigger")
    assert trigger is not None
    return ScheduledEvent(
        spec=e,
        trigger=trigger,
        commit=pred(e.commit, "commit"),
        complete=pred(e.complete, "complete"),
        cancel=pred(e.cancel, "cancel"),
        condition=pred(e.condition, "condition"),
        window_end=pred(e.window_end, "window_end"),
        goal=tuple(p for k, g in enumerate(e.goal) if (p := pred(g, f"goal[{k}]")) is not None),
    )
