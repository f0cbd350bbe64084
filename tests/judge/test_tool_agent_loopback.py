"""The tool agent through the real OpenAI client against the loopback server (real HTTP)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from judge import OpenAIModel, ToolAgent, ToolAgentConfig, tool_usage
from judge.models.loopback import Action, BadArgs, FakeServer, Reply
from sim.episode import EpisodeRunner, make_world, open_scenario
from sim.scenario import BoundScenario, bind, parse_scenario
from sim.symbolic import SymbolicWorld
from tests.judge.client_helpers import Records, profile
from tests.sim.fakescene import fake_scene

PICK = Reply("act", {"command": "pick up the red brick"})
PLACE = Reply("act", {"command": "put the red brick on the blue brick"})
SUBMIT = Reply("submit", {"claim": "done", "note": "red is on blue"})


def episode(
    bound: BoundScenario, script: Sequence[Action], **config: Any
) -> tuple[EpisodeRunner, ToolAgent, FakeServer, Records]:
    records = Records()
    with FakeServer(script) as srv:
        model = OpenAIModel(profile(srv), recorder=records, api_key="k")
        agent = ToolAgent.for_scenario(model, bound, config=ToolAgentConfig(**config))
        world = make_world(bound, "symbolic")
        runner = EpisodeRunner(world, bound, agent)
        runner.run()
        model.close()
    return runner, agent, srv, records


def texts(body: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in body["messages"]]


def test_agent_completes_stack_two_through_tool_calls() -> None:
    bound = open_scenario("stack-two")
    script = [Reply("observe_scene", {}), PICK, PLACE, SUBMIT]
    runner, agent, srv, records = episode(bound, script)
    assert runner.result is not None
    assert runner.result.status == "completed" and runner.result.success
    assert [(a.source, a.action.describe(), a.accepted) for a in runner.actions] == [
        ("agent", "pick up the red brick", True),
        ("agent", "put the red brick on the blue brick", True),
    ]
    bodies = [r.body for r in srv.chat_requests]
    assert len(bodies) == 4 and all(r.ok for r in records)
    offered = [t["function"]["name"] for t in bodies[0]["tools"]]
    assert offered == ["observe_scene", "inspect_state", "recall_belief", "act", "submit"]
    assert "Put the red brick on the blue brick." in texts(bodies[0])[1]
    # the verdict of the pick is the model's next tool result, with the tick it arrived
    told = json.loads(texts(bodies[2])[-1].split("\n", 1)[1])
    assert told["accepted"] is True and told["grounded"] == {"obj": "brick_red"}
    assert told["tick"] == runner.actions[1].tick
    assert agent.stop_reason == "submitted"
    assert agent.session.claim == {"claim": "done", "note": "red is on blue"}
    tokens = [s["tokens"] for s in agent.trajectory]
    assert tokens == [{"in": 100, "out": 20, "cost_usd": 0.0}] * 4
    assert tool_usage(agent.trajectory)["Action Execution"] == 2


def test_rejected_acts_start_replans_until_the_limit_stops_the_agent() -> None:
    bound = open_scenario("stack-two")
    # placing before picking is rejected twice; the limit is one replan
    runner, agent, srv, _ = episode(bound, [PLACE, PLACE, PICK], max_replans=1)
    assert agent.stop_reason == "replan_limit"
    assert len(srv.chat_requests) == 2  # the third reply was never asked for
    assert runner.result is not None and not runner.result.success
    assert [a.accepted for a in runner.actions] == [False, False]
    told = json.loads(texts(srv.chat_requests[1].body)[-1].split("\n", 1)[1])
    assert told["accepted"] is False and told["replan"] == 1
    assert told["failed"][0]["check"] == "holding"
    assert [s["execution"]["ok"] for s in agent.trajectory] == [False, False]
    assert agent.session.replans == 2


def test_a_malformed_tool_reply_is_reasked_by_the_client() -> None:
    bound = open_scenario("stack-two")
    bad_schema = Reply("act", {"verb": "place"})  # valid JSON, but not the act schema
    script: list[Action] = [BadArgs("act", '{"command": '), PICK, bad_schema, PLACE, SUBMIT]
    runner, agent, srv, records = episode(bound, script)
    assert runner.result is not None and runner.result.success
    assert len(srv.chat_requests) == 5 and [r.ok for r in records] == [
        False, True, False, True, True]  # fmt: skip
    # each bad reply was re-asked inside one turn: the agent saw three clean tool calls
    assert [s["kind"] for s in agent.trajectory] == ["tool_call"] * 3
    assert agent.session.turns == 3 and agent.session.consecutive_failures == 0
    reask = srv.chat_requests[1].body["messages"]
    assert reask[-1]["role"] == "tool" and "not valid JSON" in reask[-1]["content"]


MARK_GOAL, MARK_ANOMALY = "zq-GOAL-7d1f3b", "zq-FAULT-90ce2a"


def test_hidden_goal_and_anomaly_schedule_never_reach_the_model() -> None:
    instruction = "Stack the red brick onto the blue one, please."
    doc = {
        "name": "leak", "title": "Leak test", "family": "stack", "instruction": instruction,
        "delta": 0.5, "seed": 5,
        "layout": {"objects": [{"id": b, "region": [-0.25, 0.1, -0.3, 0.3]}
                               for b in ("brick_red", "brick_blue", "brick_green")]},
        "goal": {"kind": "terminal_state", "predicates": [
            {"on": ["brick_red", "brick_blue"]},
            {"not": {"attr": ["brick_green", MARK_GOAL, "==", MARK_GOAL]}}]},
        "anomalies": [
            {"kind": "displace", "obj": "brick_green", "offset": [0.0371, 0.0, 0.0], "at_tick": 3},
            {"kind": "flip", "obj": "brick_blue",
             "when": {"attr": ["brick_blue", MARK_ANOMALY, "==", MARK_ANOMALY]}}],
        "reference": ["pick up the red brick", "put the red brick on the blue brick"],
    }  # fmt: skip
    bound = bind(parse_scenario(json.dumps(doc)), fake_scene())
    script = [Reply("observe_scene", {}), Reply("inspect_state", {}), PICK,
              Reply("recall_belief", {}), Reply("act", {"command": "wait 5"}),
              Reply("observe_scene", {}), PLACE, Reply("inspect_state", {}), SUBMIT]  # fmt: skip
    records = Records()
    with FakeServer(script) as srv:
        model = OpenAIModel(profile(srv), recorder=records, api_key="k")
        agent = ToolAgent.for_scenario(model, bound)
        world = SymbolicWorld(fake_scene(), bound.layout, delta=bound.scenario.delta)
        runner = EpisodeRunner(world, bound, agent)
        runner.run()
    assert runner.anomaly_log and agent.stop_reason == "submitted"  # the displacement fired
    sent = [json.dumps(r.body) for r in srv.chat_requests]
    assert len(sent) == len(script)
    assert all(instruction in body for body in sent)
    forbidden = [MARK_GOAL, MARK_ANOMALY, "0.0371", "displace", "anomal", "predicate"]
    for needle in forbidden:
        assert not any(needle in body for body in sent), needle
        assert needle not in json.dumps(agent.state()), needle
        assert not any(needle in json.dumps(r.request) for r in records), needle
