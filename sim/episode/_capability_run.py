"""The scenario table of ``sim check --scenarios``: capability per scenario, and the dry run.

The dry run is the scenario's reference said by the scripted agent, first in the symbolic mode
(does the plan itself meet the contract?) and, only if it does, in physics with the arm being
checked (does this arm carry it out?). Anomaly schedules are left out: they are out-of-plan
events meant to make a reference fail, and the question here is the arm.

It runs the engine, so it lives here, above ``sim.mujoco`` (which predicts the capability
without running anything). ``sim.mujoco`` is imported when a table is asked for, as everywhere
in this package: importing it picks MuJoCo's OpenGL platform (see :mod:`sim.gl`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from sim.episode._agents import ScriptedAgent
from sim.episode._build import make_world, open_scenario
from sim.episode._runner import EpisodeRunner
from sim.scenario import BoundScenario, ScenarioError, shipped
from sim.world import World

if TYPE_CHECKING:
    from sim.mujoco import ArmSpec, Capability, RunOutcome

ALL = "all"


def open_scenarios(refs: Sequence[str]) -> list[BoundScenario]:
    """``["all"]`` (every shipped scenario) or shipped names and scenario files, bound."""
    names: list[str] = []
    for ref in refs:
        names += [r.strip() for r in ref.split(",") if r.strip()]
    if not names:
        raise ScenarioError("--scenarios: give 'all' or scenario names")
    if ALL in names:
        if len(names) > 1:
            raise ScenarioError("--scenarios: 'all' already means every shipped scenario")
        names = list(shipped())
    return [open_scenario(name) for name in dict.fromkeys(names)]


def _outcome(mode: str, world: World, bound: BoundScenario) -> RunOutcome:
    from sim.mujoco import RunOutcome

    runner = EpisodeRunner(world, bound, ScriptedAgent(bound.reference), anomalies=False)
    try:
        runner.run()
    finally:
        world.close()
    result = runner.result
    assert result is not None
    why = ""
    if not result.success:
        for a in runner.actions:
            if a.verdict is not None and not a.verdict.accepted:
                why = f"{a.action.describe()}: refused: {a.verdict.reason}"
            elif a.outcome and a.outcome != "ok":
                why = f"{a.action.describe()}: {a.outcome}"
            if why:
                break
        else:
            why = "the goal was not met"
    return RunOutcome(mode, result.status, result.success, result.ticks, why)


def dry_run(spec: ArmSpec, bound: BoundScenario) -> tuple[RunOutcome, ...]:
    """The reference in the symbolic mode, then (if that meets the contract) in physics."""
    symbolic = _outcome("symbolic", make_world(bound, "symbolic"), bound)
    if not symbolic.success:
        return (symbolic,)
    return symbolic, _outcome("physics", make_world(bound, "physics", arm=spec), bound)


@dataclass(frozen=True)
class CapabilityTable:
    rows: tuple[Capability, ...]
    messages: tuple[str, ...] = ()  # "warning: ..." heard while walking or running them

    @property
    def can(self) -> int:
        return sum(c.can for c in self.rows)

    @property
    def ran(self) -> list[Capability]:
        return [c for c in self.rows if c.physics is not None]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rows": [c.to_json() for c in self.rows],
            "can": self.can,
            "of": len(self.rows),
            "messages": list(self.messages),
        }
        if self.ran:
            out["agree"] = sum(bool(c.agrees) for c in self.ran)
            out["ran"] = len(self.ran)
        return out


def capability_table(
    spec: ArmSpec, scenarios: Sequence[BoundScenario], *, run: bool = False
) -> CapabilityTable:
    """One :class:`Capability` per scenario, with the dry run's outcomes when ``run``.

    MuJoCo's and Python's warnings are collected as in the arm check and reported once each,
    with the scenario they came up in.
    """
    from sim.mujoco import scenario_capability, scenario_warnings

    rows: list[Capability] = []
    messages: list[str] = []
    for bound in scenarios:
        with scenario_warnings(spec, bound.scenario.family, bound.name, messages):
            cap = scenario_capability(spec, bound)
            if run:
                cap = replace(cap, runs=dry_run(spec, bound))
        rows.append(cap)
    return CapabilityTable(tuple(rows), tuple(dict.fromkeys(messages)))
