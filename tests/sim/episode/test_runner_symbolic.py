"""The episode engine on the symbolic world: statuses, determinism, replay, fork, controls."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from sim.episode import EpisodeRunner, ReplayAgent, RunState, ScriptedAgent
from sim.scenario import BoundScenario, bind, parse_scenario
from sim.symbolic import SymbolicWorld
from sim.world import Action, SceneInfo

R = [-0.25, 0.25, -0.3, 0.3]


def _bound(info: SceneInfo, **over: Any) -> BoundScenario:
    doc: dict[str, Any] = {
        "name": "t",
        "title": "T",
        "family": "stack",
        "instruction": "Stack red on blue, then green on red.",
        "delta": 0.5,
        "seed": 7,
        "layout": {"objects": [{"id": b, "region": R} for b in
                               ("brick_red", "brick_blue", "brick_green")]},
        "goal": {"kind": "terminal_state", "predicates": [
            {"on": ["brick_red", "brick_blue"]}, {"on": ["brick_green", "brick_red"]}]},
        "reference": ["pick up the red brick", "put the red brick on the blue brick",
                      "pick up the green brick", "put the green brick on the red brick"],
    }  # fmt: skip
    doc.update(over)
    return bind(parse_scenario(json.dumps(doc)), info)


def _run(bound: BoundScenario, info: SceneInfo, agent: Any = None, **kw: Any) -> EpisodeRunner:
    world = SymbolicWorld(info, bound.layout, delta=bound.scenario.delta)
    runner = EpisodeRunner(world, bound, agent or ScriptedAgent(bound.reference), **kw)
    runner.run()
    return runner


def test_reference_completes_and_is_deterministic(info: SceneInfo) -> None:
    bound = _bound(info)
    a, b = _run(bound, info), _run(bound, info)
    assert a.result is not None and a.result.status == "completed" and a.result.success
    assert a.result.metrics["gcr"] == 1.0 and a.result.metrics["validity"] == 1.0
    assert a.hashes == b.hashes and len(a.hashes) == a.result.ticks + 1
    assert [c.witness_tick is not None for c in a.result.conditions] == [True, True]


def test_replay_reproduces_every_hash(info: SceneInfo) -> None:
    bound = _bound(info)
    original = _run(bound, info)
    decisions = [(e.tick, e.action) for e in original.actions]
    assert original.result is not None
    replay = _run(bound, info, ReplayAgent(decisions, until=original.result.ticks),
                  end_tick=original.result.ticks)  # fmt: skip
    assert replay.hashes == original.hashes


def test_fork_from_a_middle_tick_reproduces_the_rest(info: SceneInfo) -> None:
    bound = _bound(info)
    snaps: dict[int, dict[str, Any]] = {}
    world = SymbolicWorld(info, bound.layout, delta=bound.scenario.delta)
    runner = EpisodeRunner(world, bound, ScriptedAgent(bound.reference))
    runner.on_tick = lambda r, e: snaps.__setitem__(e.tick, json.loads(json.dumps(r.snapshot())))
    runner.run()
    middle = len(runner.hashes) // 2
    fork_world = SymbolicWorld(info, bound.layout, delta=bound.scenario.delta)
    fork = EpisodeRunner(fork_world, bound, ScriptedAgent(bound.reference))
    fork.restore(snaps[middle])
    fork.run()
    assert fork.hashes == runner.hashes


def test_accepted_actions_can_leave_the_goal_unmet(info: SceneInfo) -> None:
    wrong = ["pick up the blue brick", "put the blue brick on the red brick",
             "pick up the green brick", "put the green brick on the blue brick"]  # fmt: skip
    runner = _run(_bound(info, reference=wrong), info)
    result = runner.result
    assert result is not None
    assert result.status == "completed"
    assert all(a.accepted for a in runner.actions) and result.metrics["validity"] == 1.0
    assert not result.success and result.metrics["gcr"] == 0.0
    assert [c.value.value for c in result.conditions] == ["F", "F"]


def test_partial_attainment_scores_between_zero_and_one(info: SceneInfo) -> None:
    half = ["pick up the red brick", "put the red brick on the blue brick"]
    result = _run(_bound(info, reference=half), info).result
    assert result is not None and result.status == "completed" and not result.success
    assert result.metrics["gcr"] == 0.5


def test_tick_budget_blocks_execution_and_scores_zero(info: SceneInfo) -> None:
    result = _run(_bound(info, budgets={"max_ticks": 10}), info).result
    assert result is not None and result.status == "execution_blocked"
    assert result.metrics["gcr"] == 0.0 and not result.success


def test_consecutive_rejections_abort(info: SceneInfo) -> None:
    bad = ["put the red brick on the blue brick"] * 5
    runner = _run(_bound(info, reference=bad, budgets={"max_consecutive_rejections": 3}), info)
    assert runner.result is not None and runner.result.status == "aborted"
    assert runner.result.metrics["validity"] == 0.0
    assert all(a.verdict is not None and a.verdict.failed[0].name == "holding"
               for a in runner.actions[:3])  # fmt: skip


def test_scheduled_anomaly_is_recorded_and_shows_in_the_score(info: SceneInfo) -> None:
    bound = _bound(info, anomalies=[{"kind": "remove", "obj": "brick_blue", "at_tick": 8}])
    runner = _run(bound, info)
    assert [(a.tick, a.anomaly.kind) for a in runner.anomaly_log] == [(8, "remove")]
    result = runner.result
    assert result is not None and not result.success
    assert result.conditions[0].value.value == "U"  # the blue brick is gone: unknown, not false
    clean = _run(bound, info, anomalies=False).result
    assert clean is not None and clean.success


def test_condition_triggered_anomaly(info: SceneInfo) -> None:
    when = {"on": ["brick_red", "brick_blue"]}
    bound = _bound(info, anomalies=[{"kind": "displace", "obj": "brick_red",
                                     "offset": [0.2, 0.0, -0.05], "when": when}])  # fmt: skip
    runner = _run(bound, info)
    assert len(runner.anomaly_log) == 1
    red_placed = next(a for a in runner.actions if a.action.target == "the blue brick")
    assert red_placed.finished_tick is not None
    assert runner.anomaly_log[0].tick == red_placed.finished_tick
    assert runner.result is not None and not runner.result.success


def test_pause_step_and_cancel_at_tick_boundaries(info: SceneInfo) -> None:
    bound = _bound(info)
    world = SymbolicWorld(info, bound.layout, delta=bound.scenario.delta)
    runner = EpisodeRunner(world, bound, ScriptedAgent(bound.reference))
    runner.start()
    assert runner.state is RunState.PAUSED and runner.tick == 0
    runner.step()
    runner.step()
    assert runner.tick == 2
    paused = threading.Event()

    def on_tick(r: EpisodeRunner, entry: Any) -> None:
        if entry.tick == 5:
            r.pause()
            paused.set()

    runner.on_tick = on_tick
    runner.run()
    assert paused.is_set() and runner.state is RunState.PAUSED and runner.tick == 5
    runner.cancel()
    runner.step()
    assert runner.state is RunState.FINISHED and runner.result is not None
    assert runner.result.status == "cancelled" and runner.tick == 5


def test_user_actions_enter_the_same_queue(info: SceneInfo) -> None:
    bound = _bound(info)
    world = SymbolicWorld(info, bound.layout, delta=bound.scenario.delta)
    runner = EpisodeRunner(world, bound, ReplayAgent([], until=30), end_tick=30)
    runner.start()
    entry = runner.submit(Action.from_json({"verb": "pick", "obj": "the green brick"}))
    runner.run()
    assert entry.accepted and entry.outcome == "ok" and entry.source == "user"
    assert runner.world.graph.held() == "brick_green"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_same_seed_same_layout_different_seed_different(info: SceneInfo, seed: int) -> None:
    bound = _bound(info)
    w1 = SymbolicWorld(info, bound.layout)
    w2 = SymbolicWorld(info, bound.layout)
    assert w1.reset(seed).to_json() == w2.reset(seed).to_json()
    assert w1.reset(seed).to_json() != w2.reset(seed + 10).to_json()


def test_recording_off_runs_the_same_episode_without_a_trace(info: SceneInfo) -> None:
    bound = _bound(info)
    traced = _run(bound, info)
    world = SymbolicWorld(info, bound.layout, delta=bound.scenario.delta)
    quiet = EpisodeRunner(world, bound, ScriptedAgent(bound.reference), record=False)
    quiet.run()
    assert quiet.result is not None and traced.result is not None
    assert quiet.result.metrics == traced.result.metrics
    assert quiet.hashes == traced.hashes[:1]  # only tick 0's, taken at start
    assert world.state_hash() == traced.hashes[-1]
    with pytest.raises(ValueError, match="sinks need the trace"):
        EpisodeRunner(world, bound, ScriptedAgent(bound.reference), sinks=[object()],  # type: ignore[list-item]
                      record=False)  # fmt: skip
