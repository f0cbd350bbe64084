"""The W2W / Ego2World agent under test: an LLM acting on the world through tool calls.

:class:`ToolAgent` implements the engine's ``Agent`` protocol. Each time the world is idle and
nothing is queued (the scripted agent's rule) it runs model turns — one tool call each — until
the model calls an acting tool (``act``: the action goes to the engine, and its verdict is the
model's next tool result) or ``submit`` (the agent is done and locked). Every other tool is
answered at once, within the same tick.

Ground truth stays outside by construction: the agent is given the instruction text, the
model, a config and, every tick, the engine's :class:`Observation`, and never the scenario's
contract or anomaly schedule. Tools reduce the observation further (``_tool_agent_view``).

The conversation uses only system, user and assistant messages (what :class:`judge.models.ModelAPI`
carries): a tool call is written back as assistant text ``{"tool": ..., "arguments": ...}`` and
its result as the next user message, so a recorded run reads as a plain transcript.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from judge._prompts import DATA_CLOSE, DATA_OPEN, Templates, data_block
from judge.agents._tool_agent_session import Session, ToolAgentConfig, stop_of
from judge.agents._tool_agent_tools import offered_tools
from judge.models import CallFailed, Message, ModelAPI, SpendCapReached, ToolCall, Usage

if TYPE_CHECKING:
    from sim.episode import AgentStop, Observation
    from sim.scenario import BoundScenario
    from sim.world import Action

TOOL_AGENT_PROMPT_VERSION = "tool-agent@1"
TEMPLATES = Templates("tool-agent-v1")
STAGE = "agent_turn"
STATE_VERSION = 1


def goal_message(instruction: str) -> str:
    """The first user message: the instruction as JSON in a DATA block it cannot close."""
    note = TEMPLATES.render("goal.md", open=DATA_OPEN, close=DATA_CLOSE)
    return data_block({"instruction": instruction}, note)


class ToolAgent:
    """An LLM agent under test that acts through tools (spec C.2); see the module docstring.

    Args:
        model: any :class:`judge.models.ModelAPI` (``OpenAIModel`` or ``ScriptedModel``); it records
            every request body sent.
        instruction: the task as the user states it — the only task text the agent gets.
        config: budgets and harness options.

    ``source`` is ``"agent"``, or ``"executor_repair"`` while the harness submits a repair
    primitive; the engine reads it for each action ``decide`` returns, and ``decide`` returns
    one action at a time.
    """

    name = "llm"

    def __init__(
        self, model: ModelAPI, instruction: str, *, config: ToolAgentConfig | None = None
    ) -> None:
        self.model = model
        self.instruction = instruction
        self.config = config or ToolAgentConfig()
        self.source = "agent"
        self.session = Session(self.config)
        self.history: list[Message] = []  # the exchanges after the goal message
        self._tools = offered_tools()
        #: told when each model call ends: ``replied`` (a valid tool call came back),
        #: ``silenced`` (still invalid after the client's re-asks) or ``failed`` (it raised);
        #: the episode's exchange log turns it into the call's stored outcome
        self.on_call: Callable[[str], None] | None = None

    @classmethod
    def for_scenario(
        cls, model: ModelAPI, bound: BoundScenario, *, config: ToolAgentConfig | None = None
    ) -> ToolAgent:
        """An agent for a bound scenario: it takes the instruction and the tick budget, nothing
        else (the contract and the anomaly schedule stay with the engine and the evaluator)."""
        base = config or ToolAgentConfig()
        if base.horizon_ticks is None:
            base = replace(base, horizon_ticks=bound.scenario.budgets.max_ticks)
        return cls(model, bound.scenario.instruction, config=base)

    # ---- Agent protocol ---------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.session.stop_reason is not None

    @property
    def stop_reason(self) -> str | None:
        """``submitted``, or the budget that ended the run; None while it runs."""
        return self.session.stop_reason

    @property
    def stopped(self) -> AgentStop | None:
        """How a run that did not end with ``submit`` ended, for the engine (see
        :class:`sim.episode.AgentStop`): ``aborted`` when the model failed too many steps in a
        row or replanned too often, ``budget_exhausted`` when a turn, tool-call or spend budget
        ran out; None while it runs or once the model submitted."""
        return stop_of(self.session)

    @property
    def trajectory(self) -> list[dict[str, Any]]:
        """Every step so far (model tool calls, failed turns, repairs, retries), JSON-able."""
        return self.session.trajectory

    def decide(self, obs: Observation) -> list[Action]:
        s = self.session
        s.harvest(obs)
        self.source = "agent"
        if self.done or obs.busy or obs.queued:
            return []
        if s.inflight is not None:
            nxt = s.settle(obs)
            if nxt is not None:
                kind, harness_action = nxt
                self.source = "executor_repair" if kind == "executor_repair" else "agent"
                return [harness_action]
            self._tell("act", s.take_report())
            if s.check_limits():
                return []
        while not s.check_limits():
            given = self.history[-1].text if self.history else self.goal
            try:
                call, usage = self._ask()
            except SpendCapReached as err:
                self._ended_call("failed")
                s.model_error(obs.tick, given, str(err))
                s.stop_reason = "spend_cap"
                break
            except CallFailed as err:
                silenced = getattr(err, "kind", "") == "schema"
                self._ended_call("silenced" if silenced else "failed")
                if err.retryable:
                    raise  # the endpoint, not the agent: let the job's retry policy decide
                s.model_error(obs.tick, given, str(err))
                continue
            except BaseException:
                self._ended_call("failed")
                raise
            self._ended_call("replied")
            self.history.append(Message("assistant", _call_text(call)))
            result, action = s.run_tool(call, usage, obs, given)
            if action is not None:
                return [action]
            assert result is not None
            self._tell(call.name, result)
        return []

    def call_tool(self, call: ToolCall, obs: Observation) -> tuple[dict[str, Any] | None, Any]:
        """Carry out one tool call as if the model had made it (step mode, tests).

        Returns (result, action): an ``act`` gives its action (for the engine) and no result.
        """
        self.history.append(Message("assistant", _call_text(call)))
        given = self.history[-2].text if len(self.history) > 1 else self.goal
        result, action = self.session.run_tool(call, Usage(), obs, given)
        if result is not None:
            self._tell(call.name, result)
        return result, action

    def start_group(self, instruction: str) -> None:
        """Begin the next task group: apply the belief retention policy, unlock, new goal.

        The world carries over (it is the engine's); the model's context starts afresh, so
        the belief store is the only memory that crosses the boundary (spec B.5).
        """
        s = self.session
        if s.inflight is not None:
            raise RuntimeError("an action is still in flight; start the group when idle")
        s.belief = s.belief.group_boundary()
        s.group += 1
        s.turns = s.tool_calls = s.consecutive_failures = s.replans = 0
        s.submitted, s.claim, s.stop_reason, s.last_feedback = False, None, None, None
        self.instruction = instruction
        self.history = []

    def state(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "instruction": self.instruction,
            "config": self.config.to_json(),
            "history": [{"role": m.role, "text": m.text} for m in self.history],
            "session": self.session.to_json(),
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Continue from :meth:`state` (the engine adds ``at_tick``, which is not needed)."""
        if state.get("version") != STATE_VERSION or "session" not in state:
            raise ValueError("not a tool agent state (or another version): cannot restore")
        self.instruction = str(state["instruction"])
        self.history = [Message(m["role"], m["text"]) for m in state["history"]]
        self.session = Session.from_json(self.config, state["session"])
        self.source = "agent"

    # ---- conversation -----------------------------------------------------------------------
    @property
    def goal(self) -> str:
        return goal_message(self.instruction)

    def messages(self) -> list[Message]:
        """What the next turn sends: system, goal, then the (windowed) history."""
        history = self.history
        keep = self.config.history_turns
        if keep is not None and len(history) > 2 * keep:
            history = history[len(history) - 2 * keep :]  # starts on an assistant message
        system = TEMPLATES.text("system.md")
        return [Message("system", system), Message("user", self.goal), *history]

    def _ask(self) -> tuple[ToolCall, Usage]:
        return self.model.call(
            stage=STAGE,
            prompt_version=TOOL_AGENT_PROMPT_VERSION,
            messages=self.messages(),
            tools=self._tools,
        )

    def _ended_call(self, how: str) -> None:
        if self.on_call is not None:
            self.on_call(how)

    def _tell(self, tool: str, result: dict[str, Any]) -> None:
        body = json.dumps(result, sort_keys=True, ensure_ascii=False)
        self.history.append(Message("user", f"Result of {tool}:\n{body}"))


def _call_text(call: ToolCall) -> str:
    return json.dumps({"tool": call.name, "arguments": dict(call.arguments)}, sort_keys=True)
