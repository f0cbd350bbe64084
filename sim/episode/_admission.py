"""Run a scenario's admission suite (spec C.4.2, B.9) before its contract is trusted.

The suite runs worlds (symbolic by default: fast and exact) and hands the states to
:func:`sim.contracts.admit`: the reference must pass; the initial state, a partial run (the
reference without its last command), a wrong binding (the last command aimed at another object)
and a missing state (an object the goal names removed at tick 0) must fail; two runs of the
reference must give identical hashes; a rejected action must leave the state hash unchanged.
"""

from __future__ import annotations

from dataclasses import replace

from sim.contracts import AdmissionReport, State, admit
from sim.episode._agents import ScriptedAgent
from sim.episode._build import make_world
from sim.episode._runner import EpisodeRunner
from sim.scenario import BoundScenario, ReferenceStep
from sim.world import Action, Anomaly, SceneGraph, Verb, ground


def _run(bound: BoundScenario, mode: str, steps: tuple[ReferenceStep, ...] | None = None,
         removed: str | None = None) -> tuple[State, list[str]]:  # fmt: skip
    world = make_world(bound, mode)
    try:
        runner = EpisodeRunner(
            world, bound, ScriptedAgent(bound.reference if steps is None else steps),
            anomalies=False,
        )  # fmt: skip
        runner.start()
        if removed is not None:
            world.inject(Anomaly("remove", removed))
        runner.run()
        return (world.graph, tuple(runner.events)), runner.hashes
    finally:
        world.close()


def admit_scenario(bound: BoundScenario, *, mode: str = "symbolic") -> AdmissionReport:
    """Every admission check for one scenario; ``.admitted`` only if all pass."""
    world = make_world(bound, mode)
    try:
        initial_graph = world.reset(bound.scenario.seed)
        before = world.state_hash()
        target = _any_object(bound)
        bogus = world.submit(Action(Verb.PLACE, obj=target, target=target, relation="on"))
        immutable = (not bogus.accepted) and world.state_hash() == before
    finally:
        world.close()
    reference, hashes = _run(bound, mode)
    _, hashes_again = _run(bound, mode)
    actions = [i for i, s in enumerate(bound.reference) if s.action is not None]
    last = actions[-1]
    partial = tuple(s for i, s in enumerate(bound.reference) if i != last)
    negatives: dict[str, State] = {"partial": _run(bound, mode, partial)[0]}
    wrong = _wrong_binding(bound, last, initial_graph)
    if wrong is not None:
        negatives["wrong_binding"] = _run(bound, mode, wrong)[0]
    goal_ids = sorted(set().union(*(p.ids() for p in bound.contract.predicates)))
    movable = [i for i in goal_ids if i in {p.obj for p in bound.layout.placements}]
    if movable:
        negatives["missing_state"] = _run(bound, mode, removed=movable[0])[0]
    return admit(
        bound.contract,
        initial=(initial_graph, ()),
        reference=reference,
        negatives=negatives,
        replay_hashes=(hashes, hashes_again),
        immutability=immutable,
    )


def _any_object(bound: BoundScenario) -> str:
    return bound.layout.placements[0].obj if bound.layout.placements else "table"


def _wrong_binding(
    bound: BoundScenario, index: int, graph: SceneGraph
) -> tuple[ReferenceStep, ...] | None:
    """The reference with its last command's object (or target) swapped for another one."""
    step = bound.reference[index]
    assert step.action is not None
    action = step.action
    field = "target" if action.verb is Verb.PLACE else "obj"
    current = ground(getattr(action, field) or "", graph).id
    choices = [p.obj for p in bound.layout.placements if p.obj != current]
    if not choices:
        return None
    if field == "target":
        swapped = replace(action, text="", target=choices[0])
    else:
        swapped = replace(action, text="", obj=choices[0])
    steps = list(bound.reference)
    steps[index] = replace(step, action=swapped)
    return tuple(steps)
