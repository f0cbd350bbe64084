"""The shipped example client drives a whole episode of a shipped scenario over stdio."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from sim.external import PROTOCOL, ExternalAgent
from sim.world import World
from tests.sim.external.helpers import EXAMPLE, Recorded, reference_commands, run, stack_two


def _spawn(commands: list[str], log: Recorded, stderr_log: Path | None = None) -> Any:
    def make(bound: Any, world: World) -> ExternalAgent:
        return ExternalAgent.spawn(
            [sys.executable, str(EXAMPLE), *commands], bound, world,
            record=lambda d, t, m: log.append((d, t, m)), stderr_log=stderr_log,
        )  # fmt: skip

    return make


def test_example_client_completes_stack_two(tmp_path: Path) -> None:
    bound = stack_two()
    log: Recorded = []
    runner, agent = run(bound, _spawn(reference_commands(bound), log, tmp_path / "agent.log"))
    result = runner.result
    assert result is not None and result.status == "completed" and result.success
    assert [a.source for a in runner.actions] == ["agent", "agent"]
    assert [a.action.text for a in runner.actions] == reference_commands(bound)
    assert all(a.verdict is not None and a.verdict.accepted for a in runner.actions)
    kinds = [(d, m["type"]) for d, _, m in log]
    assert kinds[:2] == [("sent", "hello"), ("received", "ready")]
    assert kinds[-3:] == [("sent", "observation"), ("received", "done"), ("sent", "end")]
    assert log[0][2]["protocol"] == PROTOCOL and log[0][2]["scenario"]["name"] == "stack-two"
    assert log[0][2]["instruction"] == bound.scenario.instruction
    assert log[0][2]["cameras"] == [] and log[0][2]["frames"]["available"] is False
    assert log[-1][2] == {"type": "end", "status": "completed"}
    # the agent is asked only when the world is idle and nothing is queued: 3 observations
    observations = [m for d, _, m in log if m["type"] == "observation"]
    assert len(observations) == 3 and agent.state()["exchanges"] == 3
    assert all(not o["busy"] and o["queued"] == 0 for o in observations)
    # the pick's verdict (given while the world was busy) still reaches the agent
    assert [v["accepted"] for v in observations[1]["verdicts"]] == [True]
    assert [f["result"] for f in observations[1]["finished"]] == ["ok"]
    assert agent.agent_info == {"name": "example", "version": "1"}
    assert agent.claim == "every command was sent"  # stored, never scored
    assert agent.returncode == 0  # it read `end` and left on its own
    assert (tmp_path / "agent.log").exists()


def test_example_client_reads_the_graph() -> None:
    """A repeated "pick up" of what is already held is skipped, so nothing is rejected."""
    bound = stack_two()
    commands = reference_commands(bound)
    log: Recorded = []
    runner, _ = run(bound, _spawn([commands[0], commands[0], commands[1]], log))
    assert runner.result is not None and runner.result.success
    assert len(runner.actions) == 2 and runner.result.metrics["validity"] == 1.0
    held = [m for d, _, m in log if m["type"] == "observation" and
            ["held", "brick_red", "gripper"] in m["graph"]["relations"]]  # fmt: skip
    assert held, "the agent was shown the brick in the gripper"
