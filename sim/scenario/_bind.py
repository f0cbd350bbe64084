"""Bind a validated scenario to its scene family: every id, predicate and command checked.

``bind`` turns the file's structure into the objects the engine runs — a :class:`Layout`, a
frozen :class:`Contract`, parsed reference commands, anomaly triggers — and refuses, naming the
field, anything that refers to an object the scene does not have or the layout does not place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sim.contracts import Contract, parse_predicate
from sim.scenario._format import Scenario, ScenarioError, WaitUntil
from sim.world import (
    Action,
    ActionFormatError,
    Anomaly,
    Layout,
    LayoutError,
    Placement,
    SceneInfo,
    parse_command,
    sample_layout,
)


@dataclass(frozen=True)
class ReferenceStep:
    """One step of the error-free reference: a command, or a wait until a predicate holds."""

    action: Action | None = None
    wait_until: Any = None  # a sim.contracts predicate
    max_ticks: int = 0


@dataclass(frozen=True)
class ScheduledAnomaly:
    index: int
    anomaly: Anomaly
    at_tick: int | None
    when: Any  # a sim.contracts predicate or None
    trigger: Mapping[str, Any]


@dataclass(frozen=True)
class BoundScenario:
    scenario: Scenario
    source: str
    layout: Layout
    contract: Contract
    reference: tuple[ReferenceStep, ...]
    anomalies: tuple[ScheduledAnomaly, ...]

    @property
    def name(self) -> str:
        return self.scenario.name


def bind(scenario: Scenario, info: SceneInfo, *, source: str = "<scenario>") -> BoundScenario:
    def fail(where: str, message: str) -> ScenarioError:
        return ScenarioError(f"{source}: {where}: {message}")

    known = set(info.objects)
    present = {o.id for o in info.objects.values() if "fixed" in o.tags}
    placements: list[Placement] = []
    for i, p in enumerate(scenario.layout.objects):
        where = f"layout.objects[{i}]"
        if p.id not in known:
            raise fail(f"{where}.id", f"unknown object {p.id!r} in the {info.family} scene "
                       f"(objects: {', '.join(sorted(known))})")  # fmt: skip
        if "fixed" in info.objects[p.id].tags:
            raise fail(f"{where}.id", f"{p.id!r} is fixed furniture; it is always present")
        for key, ref in (("on", p.on), ("in", p.inside)):
            if ref is not None and ref not in present and ref not in {q.obj for q in placements}:
                raise fail(f"{where}.{key}", f"{ref!r} is not placed before {p.id!r}")
        if sum(x is not None for x in (p.region, p.at, p.on, p.inside)) > 1:
            raise fail(where, "give at most one of region, at, on, in")
        placements.append(Placement(p.id, p.region, p.at, p.on, p.inside, (p.yaw[0], p.yaw[1])))
        present.add(p.id)
    for obj, attrs in scenario.layout.attrs.items():
        if obj not in present:
            raise fail(f"layout.attrs.{obj}", f"{obj!r} is not in the layout")
        for key in attrs:
            if key not in info.objects[obj].attrs and key not in ("open", "on", "cooked"):
                raise fail(f"layout.attrs.{obj}.{key}", f"{obj!r} has no attribute {key!r}")
    layout = Layout(scenario.family, tuple(placements), scenario.layout.attrs,
                    scenario.layout.min_gap)  # fmt: skip
    try:
        sample_layout(layout, info, scenario.seed)
    except LayoutError as e:
        raise fail("layout", str(e)) from None

    try:
        contract = Contract.from_json(scenario.goal, where="goal", known_ids=present)
    except ValueError as e:
        raise ScenarioError(f"{source}: {e}") from None

    steps: list[ReferenceStep] = []
    for i, item in enumerate(scenario.reference):
        where = f"reference[{i}]"
        if isinstance(item, WaitUntil):
            pred = _predicate(item.wait_until, f"{where}.wait_until", present, source)
            steps.append(ReferenceStep(wait_until=pred, max_ticks=item.max_ticks))
            continue
        try:
            steps.append(ReferenceStep(action=parse_command(item)))
        except ActionFormatError as e:
            raise fail(where, str(e)) from None
    if not steps:
        raise fail("reference", "the reference needs at least one step")

    anomalies: list[ScheduledAnomaly] = []
    for i, a in enumerate(scenario.anomalies):
        where = f"anomalies[{i}]"
        if a.obj not in present:
            raise fail(f"{where}.obj", f"{a.obj!r} is not in the layout")
        if "fixed" in info.objects[a.obj].tags:
            raise fail(f"{where}.obj", f"{a.obj!r} is fixed furniture; anomalies move loose ones")
        if (a.at_tick is None) == (a.when is None):
            raise fail(where, "give exactly one of at_tick or when")
        when = _predicate(a.when, f"{where}.when", present, source) if a.when else None
        trigger: dict[str, Any] = (
            {"at_tick": a.at_tick} if a.at_tick is not None else {"when": a.when}
        )
        anomaly = Anomaly(a.kind, a.obj, a.offset, a.velocity, a.axis)
        anomalies.append(ScheduledAnomaly(i, anomaly, a.at_tick, when, trigger))
    return BoundScenario(scenario, source, layout, contract, tuple(steps), tuple(anomalies))


def _predicate(d: Any, where: str, known: set[str], source: str) -> Any:
    try:
        return parse_predicate(d, where=where, known_ids=known)
    except ValueError as e:
        raise ScenarioError(f"{source}: {e}") from None


def schedule_to_json(schedule: tuple[ScheduledAnomaly, ...]) -> list[dict[str, Any]]:
    """An anomaly schedule as stored with an episode (hidden from agents, kept for replay)."""
    return [{**a.anomaly.to_json(), **a.trigger} for a in schedule]


def schedule_from_json(
    items: list[dict[str, Any]], known_ids: set[str]
) -> tuple[ScheduledAnomaly, ...]:
    """The inverse of :func:`schedule_to_json`."""
    out = []
    for i, d in enumerate(items):
        when = d.get("when")
        pred = (
            parse_predicate(when, where=f"anomalies[{i}].when", known_ids=known_ids)
            if when
            else None
        )
        anomaly = Anomaly(
            d["kind"],
            d["obj"],
            tuple(d.get("offset", (0.0, 0.0, 0.0))),  # type: ignore[arg-type]
            tuple(d.get("velocity", (0.0, 0.0))),
            d.get("axis", "x"),  # type: ignore[arg-type]
        )
        trigger = {"at_tick": d["at_tick"]} if d.get("at_tick") is not None else {"when": when}
        out.append(ScheduledAnomaly(i, anomaly, d.get("at_tick"), pred, trigger))
    return tuple(out)
