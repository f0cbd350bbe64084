"""Shared pieces of the external-agent tests: the shipped scenario, a runner, client scripts."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

from sim.episode import EpisodeRunner, make_world, open_scenario
from sim.external import ExternalAgent
from sim.scenario import BoundScenario

EXAMPLE = Path(__file__).parents[3] / "docs" / "examples" / "external_agent.py"
Recorded = list[tuple[str, int, dict[str, Any]]]


def stack_two() -> BoundScenario:
    return open_scenario("stack-two")


def reference_commands(bound: BoundScenario) -> list[str]:
    return [s.action.text for s in bound.reference if s.action is not None]


def script(body: str) -> list[str]:
    """argv running ``body`` (a small protocol client) in a fresh interpreter."""
    head = "import json, sys\ndef send(m):\n    print(json.dumps(m), flush=True)\n"
    return [sys.executable, "-c", head + textwrap.dedent(body)]


READY = '{"type": "ready", "protocol": "workbench-agent/1", "agent": {"name": "t"}}'


def run(bound: BoundScenario, agent_of: Any, **kw: Any) -> tuple[EpisodeRunner, ExternalAgent]:
    """Build a symbolic episode with the agent ``agent_of(bound, world)`` and run it."""
    world = make_world(bound, "symbolic")
    agent: ExternalAgent = agent_of(bound, world)
    runner = EpisodeRunner(world, bound, agent, sinks=[agent.sink], **kw)
    try:
        runner.run()
    finally:
        agent.close()
        world.close()
    return runner, agent
