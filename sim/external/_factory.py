"""An external agent as an episode's agent factory (``sim run --agent external``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sim.episode import Agent, AgentFactory, ExchangeLog, Sink
from sim.external._agent import ExternalAgent
from sim.scenario import BoundScenario
from sim.world import World


def external_factory(
    argv: Sequence[str], *, cwd: Path | None = None, timeout: float = 30.0,
    stderr_log: Path | None = None,
) -> AgentFactory:  # fmt: skip
    """Spawn ``argv`` once the world exists; every protocol message is stored as an exchange."""

    def make(bound: BoundScenario, world: World, log: ExchangeLog) -> tuple[Agent, list[Sink]]:
        agent = ExternalAgent.spawn(
            argv, bound, world, cwd=cwd, timeout=timeout, stderr_log=stderr_log, record=log
        )
        return agent, [agent.sink]

    return make
