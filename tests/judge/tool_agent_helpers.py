"""Scenes, scripts and runs shared by the tool-agent tests (symbolic world, hand-built scene)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from judge import ScriptedModel, ToolAgent, ToolAgentConfig
from judge.models import Message, Tool, ToolCall
from sim.episode import EpisodeRunner, Observation
from sim.scenario import BoundScenario, bind, parse_scenario
from sim.symbolic import SymbolicWorld
from tests.sim.fakescene import fake_scene

R = [-0.25, 0.1, -0.3, 0.3]
INSTRUCTION = "Put the red brick on the blue brick."


def scenario(**over: Any) -> BoundScenario:
    """Three bricks and a red mug shut in the closed drawer; goal: red brick on blue."""
    doc: dict[str, Any] = {
        "name": "t", "title": "T", "family": "stack", "instruction": INSTRUCTION,
        "delta": 0.5, "seed": 3,
        "layout": {"objects": [*({"id": b, "region": R} for b in
                                 ("brick_red", "brick_blue", "brick_green")),
                               {"id": "mug_red", "in": "drawer"}],
                   "attrs": {"drawer": {"open": 0.0}}},
        "goal": {"kind": "terminal_state", "predicates": [{"on": ["brick_red", "brick_blue"]}]},
        "reference": ["pick up the red brick", "put the red brick on the blue brick"],
    }  # fmt: skip
    doc.update(over)
    return bind(parse_scenario(json.dumps(doc)), fake_scene())


def call(name: str, **args: Any) -> ToolCall:
    return ToolCall(name, args)


def act(command: str) -> ToolCall:
    return ToolCall("act", {"command": command})


def scripted(calls: Sequence[ToolCall]) -> ScriptedModel:
    """A model that makes ``calls`` in order, then submits."""
    queue = list(calls)

    def respond(_stage: str, _messages: Sequence[Message], _tools: Sequence[Tool]) -> ToolCall:
        return queue.pop(0) if queue else ToolCall("submit", {"claim": "done"})

    return ScriptedModel(respond)


def run(bound: BoundScenario, agent: ToolAgent, **kw: Any) -> tuple[EpisodeRunner, SymbolicWorld]:
    world = SymbolicWorld(fake_scene(), bound.layout, delta=bound.scenario.delta)
    runner = EpisodeRunner(world, bound, agent, **kw)
    runner.run()
    return runner, world


def agent_for(calls: Sequence[ToolCall], **config: Any) -> tuple[ToolAgent, ScriptedModel]:
    model = scripted(calls)
    return ToolAgent(model, INSTRUCTION, config=ToolAgentConfig(**config)), model


def observation(runner: EpisodeRunner) -> Observation:
    """What the agent would be given at the runner's current tick (world idle)."""
    w = runner.world
    return Observation(runner.tick, w.graph, w.busy, 0)


def steps(agent: ToolAgent, kind: str = "tool_call") -> list[dict[str, Any]]:
    return [s for s in agent.trajectory if s["kind"] == kind]
