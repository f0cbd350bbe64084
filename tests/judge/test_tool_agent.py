"""The tool agent's harness with a scripted model: tools, lock, budgets, belief, repair, forks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from judge import (
    CATEGORIES,
    TOOLS,
    ModelCallFailed,
    ScriptedModel,
    ToolAgent,
    ToolAgentConfig,
    action_counts,
    tool_usage,
)
from judge.models import ToolCall, Usage
from sim.episode import EpisodeRunner
from sim.symbolic import SymbolicWorld
from tests.judge.tool_agent_helpers import (
    INSTRUCTION,
    act,
    agent_for,
    call,
    observation,
    run,
    scenario,
    scripted,
    steps,
)
from tests.sim.fakescene import fake_scene


def test_registry_declares_category_schema_and_source_for_every_tool() -> None:
    assert len({t.name for t in TOOLS}) == len(TOOLS)
    for t in TOOLS:
        assert t.category in CATEGORIES and t.source and t.tags
        Draft202012Validator.check_schema(dict(t.parameters))
    acting = {t.name for t in TOOLS if t.acting}
    assert acting == {"act"}
    assert {t.name for t in TOOLS if t.mutating} == {"act", "submit"}


def test_observe_shows_only_what_is_visible_and_counts_queries() -> None:
    agent, _ = agent_for([call("observe_scene"), act("open the drawer"), call("observe_scene"),
                          call("observe_scene", region="nowhere")])  # fmt: skip
    run(scenario(), agent)
    looks = [s for s in steps(agent) if s["tool"] == "observe_scene"]
    before, after = (s["execution"]["result"] for s in looks[:2])
    assert "mug_red" not in {o["id"] for o in before["objects"]}  # shut in the closed drawer
    assert not any("mug_red" in r for r in before["relations"])
    assert "mug_red" in {o["id"] for o in after["objects"]}
    assert looks[2]["execution"]["ok"] is False
    s = agent.session
    assert (s.vq_attempts, s.vq_answered) == (3, 2)  # attempts and answers apart


def test_submit_locks_every_mutating_tool() -> None:
    bound = scenario()
    agent, _ = agent_for([])
    runner, _ = run(bound, agent)  # the model submits at once
    assert agent.done and agent.stop_reason == "submitted"
    obs = observation(runner)
    result, action = agent.call_tool(act("pick up the red brick"), obs)
    assert action is None and result is not None and "locked" in result["error"]
    result, _ = agent.call_tool(call("submit", claim="unresolved"), obs)
    assert result is not None and "locked" in result["error"]
    result, _ = agent.call_tool(call("recall_belief"), obs)  # reading is still allowed
    assert result is not None and "error" not in result
    assert agent.session.claim == {"claim": "done", "note": None}


def test_three_consecutive_failures_abort_the_run() -> None:
    agent, model = agent_for([act("juggle the bricks"), act("dance"), act("fly"), act("no")])
    runner, _ = run(scenario(), agent)
    assert agent.stop_reason == "consecutive_failures"
    assert len(model.seen) == 3
    assert all(s["validation"]["ok"] is False for s in steps(agent))
    assert runner.actions == []  # nothing unparsable reached the engine


def test_a_success_between_failures_resets_the_count() -> None:
    calls = [act("dance"), act("fly"), call("inspect_state"), act("sing"), act("hop")]
    agent, model = agent_for(calls)
    run(scenario(), agent)
    assert agent.stop_reason == "submitted" and len(model.seen) == 6


def test_turn_budget_ends_the_run_and_inspect_state_shows_budgets() -> None:
    agent, model = agent_for([call("inspect_state")] * 10, max_turns=4, horizon_ticks=100)
    run(scenario(), agent)
    assert agent.stop_reason == "turn_budget" and len(model.seen) == 4
    first = steps(agent)[0]["execution"]["result"]
    assert first["budgets"] == {"turns_left": 3, "tool_calls_left": 59, "replans_left": 5,
                                "failures_before_abort": 3, "ticks_left": 100}  # fmt: skip


def test_belief_is_kept_apart_from_the_world() -> None:
    # An anomaly removes the green brick at tick 2; the agent still believes it on the table.
    bound = scenario(anomalies=[{"kind": "remove", "obj": "brick_green", "at_tick": 2}])
    agent, _ = agent_for([call("observe_scene"), act("wait 3"), call("recall_belief"),
                          call("observe_scene"), call("recall_belief")])  # fmt: skip
    _, world = run(bound, agent)
    assert "brick_green" not in world.graph.nodes
    recalls = [s["execution"]["result"] for s in steps(agent) if s["tool"] == "recall_belief"]
    assert recalls[0]["locations"]["brick_green"]["value"] == "table"  # stale, as believed
    assert recalls[1]["locations"]["brick_green"]["value"] == "unknown"  # removal observed
    assert recalls[1]["locations"]["brick_green"]["absent_from"] == "scene"


def test_accepted_actions_update_belief_and_rejections_do_not() -> None:
    agent, _ = agent_for([act("put the red brick on the blue brick"), act("pick up the red brick"),
                          call("recall_belief")])  # fmt: skip
    run(scenario(), agent)
    belief = steps(agent)[-2]["execution"]["result"]
    assert belief["locations"] == {"brick_red": {"value": "gripper", "source": "action:pick"}}


def test_retention_policy_applies_at_the_group_boundary() -> None:
    kept: dict[str, Any] = {}
    for policy in ("persistent", "reset_at_group_boundary"):
        agent, _ = agent_for([call("observe_scene")], retention=policy)
        run(scenario(), agent)
        agent.start_group("Now put the green brick on the red brick.")
        assert not agent.done and agent.history == []
        kept[policy] = agent.session.belief.locations
    assert set(kept["persistent"]) >= {"brick_red", "brick_blue", "brick_green"}
    assert kept["reset_at_group_boundary"] == {}


def test_rejected_place_is_repaired_and_repairs_stay_out_of_planner_counts() -> None:
    agent, model = agent_for([act("put the red brick on the blue brick")], repair=True)
    runner, _ = run(scenario(), agent)
    assert runner.result is not None and runner.result.success
    sources = [(a.source, a.action.describe(), a.accepted) for a in runner.actions]
    assert sources == [("agent", "put the red brick on the blue brick", False),
                       ("executor_repair", "pick brick_red", True),
                       ("agent", "put the red brick on the blue brick", True)]  # fmt: skip
    assert [s["kind"] for s in agent.trajectory] == [
        "tool_call", "executor_repair", "retry", "tool_call"]  # fmt: skip
    assert action_counts(agent.trajectory) == {
        "planner": {"attempts": 2, "accepted": 1},
        "executor_repair": {"attempts": 1, "accepted": 1},
    }
    usage = tool_usage(agent.trajectory)
    assert usage["Action Execution"] == 1 and usage["Assessment & Submission"] == 1
    told = json.loads(model.seen[1].messages[-1].text.split("\n", 1)[1])
    assert told["accepted"] is False and [r["kind"] for r in told["repair"]] == [
        "executor_repair", "retry"]  # fmt: skip
    assert "replan" not in told and agent.session.replans == 0


def test_tool_usage_counts_every_category_from_the_trajectory() -> None:
    agent, _ = agent_for([call("observe_scene"), call("inspect_state"), call("recall_belief"),
                          act("pick up the red brick"), call("inspect_state")])  # fmt: skip
    run(scenario(), agent)
    assert tool_usage(agent.trajectory) == {
        "Observation Acquisition": 1,
        "Context & Resource Access": 1,
        "Planning & Tool Orchestration": 0,
        "Action Execution": 1,
        "State & Feedback Inspection": 2,
        "Assessment & Submission": 1,
    }
    assert tool_usage([]) == dict.fromkeys(CATEGORIES, 0)


def test_fork_from_a_snapshot_continues_the_same_conversation() -> None:
    calls = [call("observe_scene"), act("pick up the red brick"), call("recall_belief"),
             act("put the red brick on the blue brick"), call("inspect_state")]  # fmt: skip
    bound = scenario()
    agent, _ = agent_for(calls)
    snaps: dict[int, Any] = {}
    world = SymbolicWorld(fake_scene(), bound.layout, delta=bound.scenario.delta)
    runner = EpisodeRunner(world, bound, agent)
    runner.on_tick = lambda r, e: snaps.__setitem__(e.tick, json.loads(json.dumps(r.snapshot())))
    runner.run()
    picked, after = (s["tick"] for s in steps(agent)[1:3])
    assert after - picked >= 2
    middle = (picked + after) // 2  # the pick is under way; the model has made two calls
    assert snaps[middle]["agent"]["session"]["tool_calls"] == 2
    fork_agent = ToolAgent(scripted(calls[2:]), INSTRUCTION, config=ToolAgentConfig())
    fork = EpisodeRunner(SymbolicWorld(fake_scene(), bound.layout, delta=bound.scenario.delta),
                         bound, fork_agent)  # fmt: skip
    fork.restore(snaps[middle])
    fork.run()
    assert fork.hashes == runner.hashes
    assert fork_agent.trajectory == agent.trajectory
    assert fork_agent.state()["history"] == agent.state()["history"]


def test_history_window_keeps_system_goal_and_the_last_exchanges() -> None:
    agent, model = agent_for([call("inspect_state")] * 4, history_turns=1)
    run(scenario(), agent)
    sizes = [len(seen.messages) for seen in model.seen]
    assert sizes == [2, 4, 4, 4, 4]
    last = model.seen[-1].messages
    assert [m.role for m in last] == ["system", "user", "assistant", "user"]
    assert INSTRUCTION in last[1].text and len(agent.history) == 10


def test_spend_cap_stops_the_agent_and_endpoint_outages_propagate() -> None:
    capped = ScriptedModel(lambda *_: call("inspect_state"), usage=Usage(cost_usd=0.4),
                           spend_cap_usd=1.0)  # fmt: skip
    agent = ToolAgent(capped, INSTRUCTION)
    run(scenario(), agent)
    assert agent.stop_reason == "spend_cap"
    assert [s["kind"] for s in agent.trajectory] == ["tool_call", "tool_call", "model_error"]

    def down(*_: Any) -> ToolCall:
        raise ModelCallFailed("cannot reach the endpoint", retryable=True, kind="connection")

    with pytest.raises(ModelCallFailed):
        run(scenario(), ToolAgent(ScriptedModel(down), INSTRUCTION))
