"""Agents the engine can run headless: the scripted reference agent and the replay agent.

An agent sees an :class:`Observation` each tick and returns the actions it submits (often
none). Its state must be JSON-able so an episode can be snapshotted and forked. LLM, human and
teleop agents (issues 6–8) implement the same protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from sim.contracts import Event, Truth
from sim.scenario import ReferenceStep
from sim.world import Action, Outcome, SceneGraph, Verdict


@dataclass(frozen=True)
class Observation:
    """What an agent is given at the start of a tick."""

    tick: int
    graph: SceneGraph
    busy: bool  # the world is still carrying out an accepted action
    queued: int  # actions waiting in the engine's queue
    verdicts: tuple[Verdict, ...] = ()  # answers to actions submitted last tick
    finished: tuple[Outcome, ...] = ()  # actions carried out since last tick
    events: tuple[Event, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class AgentStop:
    """Why an agent that is ``done`` stopped without finishing its work.

    An agent may have a ``stopped`` attribute: None while it runs and when it finished its
    work, else an ``AgentStop``. Once it is done (and the world idle), the engine ends the
    episode with ``status`` instead of ``completed`` — ``aborted`` when the agent gave up (a
    tool agent whose model never managed a valid tool call), ``budget_exhausted`` when its own
    budget ran out — and stores ``reason`` with it.
    """

    status: Literal["aborted", "budget_exhausted"]
    reason: str


class Agent(Protocol):
    """See the module docstring; an agent may also have ``stopped`` (see :class:`AgentStop`)."""

    name: str

    @property
    def source(self) -> str:
        """Recorded with each action: agent | reference | user | replay | harness | repair
        (read after each :meth:`decide`, so an agent may vary it per action)."""
        ...

    @property
    def done(self) -> bool: ...

    def decide(self, obs: Observation) -> list[Action]: ...

    def state(self) -> dict[str, Any]: ...

    def restore(self, state: dict[str, Any]) -> None: ...


class ScriptedAgent:
    """Says the scenario's reference steps one at a time, each once the previous is done.

    It never reacts to rejections or failures: it is the error-free rollout whose length is
    T_ref, and a yardstick for what a scripted executor achieves.
    """

    name = "scripted"
    source = "reference"

    def __init__(self, steps: Sequence[ReferenceStep]) -> None:
        self.steps = tuple(steps)
        self._index = 0
        self._waited = 0

    @property
    def done(self) -> bool:
        return self._index >= len(self.steps)

    def decide(self, obs: Observation) -> list[Action]:
        if obs.busy or obs.queued:
            return []
        while not self.done:
            step = self.steps[self._index]
            if step.action is not None:
                self._index += 1
                return [step.action]
            value = step.wait_until.evaluate(obs.graph, obs.events)
            if value is Truth.T or self._waited >= step.max_ticks:
                self._index += 1
                self._waited = 0
                continue
            self._waited += 1
            return []
        return []

    def state(self) -> dict[str, Any]:
        return {"index": self._index, "waited": self._waited}

    def restore(self, state: dict[str, Any]) -> None:
        self._index = int(state["index"])
        self._waited = int(state["waited"])


class ReplayAgent:
    """Re-submits recorded actions at the ticks they were first submitted.

    ``until`` is the tick the recorded episode ended at: the replay is done only then, so it
    ends where the original did. (``decide`` runs at tick t and the engine checks ``done``
    after that tick, at t + 1.)
    """

    name = "replay"
    source = "replay"

    def __init__(self, decisions: Sequence[tuple[int, Action]], until: int) -> None:
        self.decisions = sorted(decisions, key=lambda d: d[0])
        self.until = until
        self._next = 0
        self._tick = 0

    @property
    def done(self) -> bool:
        return self._next >= len(self.decisions) and self._tick + 1 >= self.until

    def decide(self, obs: Observation) -> list[Action]:
        self._tick = obs.tick
        out: list[Action] = []
        while self._next < len(self.decisions) and self.decisions[self._next][0] <= obs.tick:
            out.append(self.decisions[self._next][1])
            self._next += 1
        return out

    def state(self) -> dict[str, Any]:
        return {"next": self._next, "tick": self._tick}

    def restore(self, state: dict[str, Any]) -> None:
        """Resume from a replay's own state, or — forking an episode another agent ran —
        from the tick alone: every decision made before it has been submitted already."""
        if "next" in state:
            self._next = int(state["next"])
            self._tick = int(state["tick"])
            return
        tick = int(state["at_tick"])
        self._next = sum(1 for t, _ in self.decisions if t < tick)
        self._tick = max(tick - 1, 0)
