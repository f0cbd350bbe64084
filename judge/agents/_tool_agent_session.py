"""The tool agent's harness state: tools carried out, executor feedback, budgets, trajectory.

A :class:`Session` is everything about one agent run that is not the conversation: counters,
the belief store, the submission lock, the action in flight and the per-step trajectory
(spec C.2.3: observation given, tool call, validation result, execution result, tokens). It is
JSON in and out, so an episode snapshot can carry it and a fork continue from it.

Feedback of an ``act`` arrives over several ticks (verdict when submitted, outcome when carried
out); :meth:`Session.harvest` collects it every tick and :meth:`Session.settle` closes the step
once the world is idle. With repair on, a rejection the harness knows how to fix is followed by
repair primitives (``executor_repair``) and a retry of the planner's action, before the model
hears the result; a repair that is rejected abandons the retry.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from judge.agents._tool_agent_tools import ACTION, BY_NAME
from judge.agents._tool_agent_view import (
    ViewError,
    belief_from_json,
    belief_json,
    local_view,
    observed,
    parse_act,
    verdict_json,
)
from judge.models import ToolCall, Usage
from sim.contracts import Belief, Retention
from sim.episode import AgentStop
from sim.world import Action, ActionFormatError, SceneGraph, Verb, Verdict

if TYPE_CHECKING:
    from sim.episode import Observation

StepKind = Literal["tool_call", "model_error", "executor_repair", "retry"]


class _LockedError(Exception):
    """A mutating tool called after submit: a validation failure the model is told about."""


@dataclass(frozen=True)
class ToolAgentConfig:
    """Budgets and harness options of a tool agent (stored with the run).

    A *turn* is one request for a tool call (a model call, failed ones included; the client's
    schema re-asks are inside it); a *tool call* is a valid call the harness carried out.
    A *replan* starts when the model is told an action failed (rejected, or accepted but failed
    in execution); more than ``max_replans`` ends the run. ``max_consecutive_failures`` failed
    steps in a row (rejections, invalid calls, failed turns, refused queries) abort it.
    ``horizon_ticks`` is the episode's tick budget, shown by ``inspect_state`` when given.
    """

    max_turns: int = 60
    max_tool_calls: int = 60
    max_consecutive_failures: int = 3
    max_replans: int = 5
    max_visual_queries: int | None = None
    retention: Retention = "persistent"
    repair: bool = False
    history_turns: int | None = None  # model context: the last N exchanges (None: all)
    horizon_ticks: int | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


#: how a stop that is not ``submitted`` ends the episode, and the reason's start
_STOPS: dict[str, tuple[Literal["aborted", "budget_exhausted"], str]] = {
    "consecutive_failures": ("aborted", "the agent gave up: {n} failed steps in a row"),
    "replan_limit": ("aborted", "the agent gave up: more than {n} replans"),
    "turn_budget": ("budget_exhausted", "the agent's turn budget ran out ({n} model turns)"),
    "tool_call_budget": ("budget_exhausted", "the agent's tool-call budget ran out ({n} calls)"),
    "spend_cap": ("budget_exhausted", "the model profile's spend cap was reached"),
}


def stop_of(session: Session) -> AgentStop | None:
    """The engine's view of a stop that is not ``submitted`` (None while running or after a
    submit): the status it ends the episode with, and a reason naming the last failure."""
    why = session.stop_reason
    if why is None or why not in _STOPS:
        return None
    status, text = _STOPS[why]
    c = session.config
    n = {"consecutive_failures": c.max_consecutive_failures, "replan_limit": c.max_replans,
         "turn_budget": c.max_turns, "tool_call_budget": c.max_tool_calls}.get(why)  # fmt: skip
    reason = text.format(n=n)
    last = _last_failure(session.trajectory)
    return AgentStop(status, f"{reason} (last: {last})" if last else reason)


def _last_failure(trajectory: list[dict[str, Any]]) -> str | None:
    for step in reversed(trajectory):
        for part in ("validation", "execution"):
            got = step.get(part) or {}
            if got.get("ok") is False:
                checks = "; ".join(str(f.get("message")) for f in got.get("failed") or ())
                text = str(got.get("error") or got.get("outcome") or checks)
                return text[:300] or None
    return None


def repairs_for(verdict: Verdict, graph: SceneGraph) -> list[Action]:
    """Repair primitives for a rejection the harness knows how to fix, else none.

    Only an unambiguous case: placing an object that is not in an empty gripper (the only
    failed check is ``holding``): pick it up first. Anything else is the planner's to fix.
    """
    names = {c.name for c in verdict.failed}
    g = verdict.grounded
    if names == {"holding"} and g is not None and g.obj and graph.held() is None:
        return [Action(Verb.PICK, obj=g.obj)]
    return []


class Session:
    def __init__(self, config: ToolAgentConfig) -> None:
        self.config = config
        self.turns = self.tool_calls = self.consecutive_failures = self.replans = 0
        self.vq_attempts = self.vq_answered = 0
        self.group = 0
        self.submitted = False
        self.claim: dict[str, Any] | None = None
        self.stop_reason: str | None = None
        self.belief = Belief(config.retention)
        self.trajectory: list[dict[str, Any]] = []
        self.inflight: dict[str, Any] | None = None  # {step, kind, action, verdict, outcome}
        self.plan: list[dict[str, Any]] = []  # harness actions still to run: {kind, action}
        self.report: dict[str, Any] | None = None  # what the model will hear about its act
        self.last_feedback: dict[str, Any] | None = None
        self.tokens = {"in": 0, "out": 0, "cost_usd": 0.0}

    # ---- budgets ----------------------------------------------------------------------------
    def budgets(self, tick: int) -> dict[str, Any]:
        c = self.config
        out: dict[str, Any] = {
            "turns_left": c.max_turns - self.turns,
            "tool_calls_left": c.max_tool_calls - self.tool_calls,
            "replans_left": c.max_replans - self.replans,
            "failures_before_abort": c.max_consecutive_failures - self.consecutive_failures,
        }
        if c.max_visual_queries is not None:
            out["visual_queries_left"] = c.max_visual_queries - self.vq_attempts
        if c.horizon_ticks is not None:
            out["ticks_left"] = max(c.horizon_ticks - tick, 0)
        return out

    def check_limits(self) -> bool:
        """Stop on a spent failure or replan budget; True when the run is over."""
        if self.stop_reason is None:
            if self.consecutive_failures >= self.config.max_consecutive_failures:
                self.stop_reason = "consecutive_failures"
            elif self.replans > self.config.max_replans:
                self.stop_reason = "replan_limit"
            elif self.turns >= self.config.max_turns:
                self.stop_reason = "turn_budget"
            elif self.tool_calls >= self.config.max_tool_calls:
                self.stop_reason = "tool_call_budget"
        return self.stop_reason is not None

    def _outcome(self, ok: bool) -> None:
        self.consecutive_failures = 0 if ok else self.consecutive_failures + 1

    # ---- steps ------------------------------------------------------------------------------
    def _step(self, kind: StepKind, tick: int, given: str, **fields: Any) -> dict[str, Any]:
        entry = {"step": len(self.trajectory), "group": self.group, "tick": tick, "kind": kind,
                 "observation": given, **fields}  # fmt: skip
        self.trajectory.append(entry)
        return entry

    def model_error(self, tick: int, given: str, error: str) -> None:
        self.turns += 1
        self._step("model_error", tick, given, tool=None, validation={"ok": False, "error": error})
        self._outcome(False)

    def run_tool(
        self, call: ToolCall, usage: Usage, obs: Observation, given: str
    ) -> tuple[dict[str, Any] | None, Action | None]:
        """Carry out one model tool call: (result for the model, or None for an act; action)."""
        self.turns += 1
        self.tool_calls += 1
        self.tokens["in"] += usage.tokens_in
        self.tokens["out"] += usage.tokens_out
        self.tokens["cost_usd"] += usage.cost_usd
        spec = BY_NAME[call.name]
        entry = self._step("tool_call", obs.tick, given, tool=call.name, category=spec.category,
                           args=dict(call.arguments), validation={"ok": True, "error": None},
                           execution=None, tokens={"in": usage.tokens_in, "out": usage.tokens_out,
                                                   "cost_usd": usage.cost_usd})  # fmt: skip
        try:
            if spec.mutating and self.submitted:
                raise _LockedError(f"{call.name} refused: the work was submitted (locked)")
            result, action = self._dispatch(call, obs, entry["step"])
        except (_LockedError, ActionFormatError) as err:
            entry["validation"] = {"ok": False, "error": str(err)}
            self._outcome(False)
            return {"error": str(err)}, None
        except ViewError as err:
            entry["execution"] = {"ok": False, "error": str(err)}
            self._outcome(False)
            return {"error": str(err)}, None
        if action is None:
            entry["execution"] = {"ok": True, "result": result}
            self._outcome(True)
        return result, action

    def _dispatch(
        self, call: ToolCall, obs: Observation, step: int
    ) -> tuple[dict[str, Any] | None, Action | None]:
        args, name = call.arguments, call.name
        if name == "observe_scene":
            self.vq_attempts += 1
            cap = self.config.max_visual_queries
            if cap is not None and self.vq_attempts > cap:
                raise ViewError(f"visual query budget spent ({cap} queries)")
            view = local_view(obs.graph, args.get("region"))
            self.belief = self.belief.observe(observed(view, obs.graph, self.belief))
            self.vq_answered += 1
            return view, None
        if name == "inspect_state":
            return {"tick": obs.tick, "busy": obs.busy, "submitted": self.submitted,
                    "last_action": self.last_feedback, "replans": self.replans,
                    "budgets": self.budgets(obs.tick)}, None  # fmt: skip
        if name == "recall_belief":
            return belief_json(self.belief), None
        if name == "act":
            action = parse_act(args)
            self.inflight = {"step": step, "kind": "tool_call", "action": action.to_json(),
                             "verdict": None, "outcome": None}  # fmt: skip
            self.report = None
            return None, action
        if name == "submit":
            self.submitted = True
            self.claim = {"claim": args.get("claim"), "note": args.get("note")}
            self.stop_reason = "submitted"
            return {"submitted": True, "note": "recorded; no further actions are possible"}, None
        raise AssertionError(f"tool {name} is in the registry but has no handler")

    # ---- executor feedback ------------------------------------------------------------------
    def harvest(self, obs: Observation) -> None:
        """Pick this run's verdict and outcome out of a tick's observation."""
        f = self.inflight
        if f is None:
            return
        for v in obs.verdicts:
            if f["verdict"] is None and v.action.to_json() == f["action"]:
                f["verdict"] = v.to_json()
                if v.accepted:
                    self.belief = self.belief.on_accepted(v)
        for o in obs.finished:
            if f["outcome"] is None and o.verdict.action.to_json() == f["action"]:
                f["outcome"] = o.result

    def settle(self, obs: Observation) -> tuple[str, Action] | None:
        """Close the action in flight (world idle); the next harness action, if any."""
        f = self.inflight
        assert f is not None
        self.inflight = None
        entry = self.trajectory[f["step"]]
        verdict = Verdict.from_json(f["verdict"]) if f["verdict"] else None
        if verdict is None:
            execution: dict[str, Any] = {"ok": False, "error": "no verdict reached the agent"}
        else:
            execution = {**verdict_json(verdict), "ok": verdict.accepted}
            if f["outcome"] is not None:
                execution["outcome"] = f["outcome"]
                execution["ok"] = verdict.accepted and not f["outcome"].startswith("failed")
        entry["execution"] = execution
        if f["kind"] == "tool_call":
            self.report = {"tick": obs.tick, **execution}
        else:
            assert self.report is not None
            self.report.setdefault("repair", []).append({"kind": f["kind"], **execution})
        if f["kind"] == "tool_call" and verdict is not None and not verdict.accepted:
            if self.config.repair and (fixes := repairs_for(verdict, obs.graph)):
                parent = f["step"]
                self.plan = [{"kind": "executor_repair", "action": a.to_json(), "parent": parent}
                             for a in fixes]  # fmt: skip
                self.plan.append({"kind": "retry", "action": f["action"], "parent": parent})
        elif f["kind"] == "executor_repair" and not execution["ok"]:
            self.plan = []  # a failed repair: the model decides what next
        if self.plan:
            nxt = self.plan.pop(0)
            step = self._step(nxt["kind"], obs.tick, "", tool="act", category=ACTION,
                              args=nxt["action"], parent=nxt["parent"],
                              validation={"ok": True, "error": None}, execution=None)  # fmt: skip
            self.inflight = {"step": step["step"], "kind": nxt["kind"], "action": nxt["action"],
                             "verdict": None, "outcome": None}  # fmt: skip
            return nxt["kind"], Action.from_json(nxt["action"])
        return None

    def take_report(self) -> dict[str, Any]:
        """The act's result as the model hears it; counts a replan when it failed."""
        report = self.report
        assert report is not None
        self.report = None
        last = report["repair"][-1] if report.get("repair") else report
        ok = bool(last["ok"])
        self._outcome(ok)
        if not ok:
            self.replans += 1
            report["replan"] = self.replans
        self.last_feedback = report
        return report

    # ---- snapshot ---------------------------------------------------------------------------
    _COUNTERS = ("turns", "tool_calls", "consecutive_failures", "replans", "vq_attempts",
                 "vq_answered", "group", "submitted", "claim", "stop_reason", "inflight", "plan",
                 "report", "last_feedback", "tokens", "trajectory")  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self._COUNTERS}
        # a copy: snapshots must not change as the run goes on.
        copy: dict[str, Any] = json.loads(json.dumps({**out, "belief": belief_json(self.belief)}))
        return copy

    @staticmethod
    def from_json(config: ToolAgentConfig, d: Mapping[str, Any]) -> Session:
        s = Session(config)
        d = json.loads(json.dumps(d))
        for k in Session._COUNTERS:
            setattr(s, k, d[k])
        s.belief = belief_from_json(d["belief"])
        return s
