"""The tool agent's tool registry, declared once as data (spec A.4, C.2.1).

Every tool has one primary W2W category (for aggregation), auxiliary tags, a JSON schema, the
device or source it reads or drives, and two flags the harness enforces: ``acting`` tools hand
an action to the engine (the model's turn ends there), ``mutating`` tools are refused once the
agent has submitted. Per-category usage is derived from a trajectory by :func:`tool_usage`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from judge.models import Tool

OBSERVATION: Final = "Observation Acquisition"
CONTEXT: Final = "Context & Resource Access"
PLANNING: Final = "Planning & Tool Orchestration"
ACTION: Final = "Action Execution"
INSPECTION: Final = "State & Feedback Inspection"
SUBMISSION: Final = "Assessment & Submission"
#: the six W2W categories, in the spec's order
CATEGORIES: Final = (OBSERVATION, CONTEXT, PLANNING, ACTION, INSPECTION, SUBMISSION)


@dataclass(frozen=True)
class ToolSpec:
    """One tool as the registry declares it."""

    name: str
    category: str
    tags: tuple[str, ...]
    source: str  # the device or store it reads or drives
    description: str
    parameters: Mapping[str, Any]
    acting: bool = False  # returns an action to the engine
    mutating: bool = False  # refused after submit (the lock)

    def tool(self) -> Tool:
        return Tool(self.name, self.description, self.parameters)


_VERBS = ["pick", "place", "open", "close", "turn_on", "turn_off", "push", "wait"]
_ACTION = {
    "type": "object",
    "properties": {
        "verb": {"enum": _VERBS},
        "obj": {"type": "string", "minLength": 1},
        "target": {"type": "string", "minLength": 1},
        "relation": {"enum": ["on", "in"]},
        "direction": {"enum": ["left", "right", "forward", "back"]},
        "distance": {"type": "number"},
        "ticks": {"type": "integer"},
    },
    "required": ["verb"],
    "additionalProperties": False,
}
_NONE: Mapping[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

TOOLS: Final[tuple[ToolSpec, ...]] = (
    ToolSpec(
        "observe_scene", OBSERVATION, ("visual_query", "belief_update"), "robot camera",
        "Look at the scene from where the robot stands: the objects you can see now (not those "
        "shut inside closed containers), with their type, state and relations. Optionally only "
        "the region of one support or container, by id. Each call is a visual query.",
        {"type": "object", "properties": {"region": {"type": "string", "minLength": 1}},
         "additionalProperties": False},
    ),
    ToolSpec(
        "inspect_state", INSPECTION, ("feedback", "budget"), "harness",
        "The harness state: the tick, whether the arm is busy, the verdict of your last action "
        "and your remaining budgets (model turns, tool calls, replans, visual queries).",
        _NONE,
    ),
    ToolSpec(
        "recall_belief", CONTEXT, ("memory",), "belief store",
        "What you remember: believed object locations and container or appliance states, each "
        "with where the belief came from. Your memory, not the world: it can be out of date.",
        _NONE,
    ),
    ToolSpec(
        "act", ACTION, ("manipulation", "mutating"), "robot arm",
        "Carry out one semantic action, given either as a spoken command (e.g. 'pick up the red "
        "brick', 'put the red brick on the blue brick') or as a structured action. The arm "
        "executes it; its verdict (accepted, or the failed checks) comes back on your next turn.",
        {"type": "object",
         "properties": {"command": {"type": "string", "minLength": 1}, "action": _ACTION},
         "minProperties": 1, "maxProperties": 1, "additionalProperties": False},
        acting=True, mutating=True,
    ),
    ToolSpec(
        "submit", SUBMISSION, ("termination", "lock"), "harness",
        "End your work on the task. Optionally state whether you believe it is done, or name a "
        "specific unresolved failure. After submit no further actions are possible. Your claim "
        "is recorded; it is not how success is judged.",
        {"type": "object",
         "properties": {"claim": {"enum": ["done", "unresolved"]},
                        "note": {"type": "string", "maxLength": 2000}},
         "additionalProperties": False},
        mutating=True,
    ),
)  # fmt: skip
BY_NAME: Final[Mapping[str, ToolSpec]] = {t.name: t for t in TOOLS}


def offered_tools() -> list[Tool]:
    """The tools offered to the model on every turn, in registry order."""
    return [t.tool() for t in TOOLS]


def tool_usage(trajectory: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Per W2W category: how many tool calls the *model* made (all six categories present).

    Executor repairs, retries and failed model turns are harness steps, not model tool calls,
    so they are not counted (spec C.2.8: repairs stay apart from planner counts).
    """
    seen = Counter(str(s["category"]) for s in trajectory if s.get("kind") == "tool_call")
    return {c: seen.get(c, 0) for c in CATEGORIES}


def action_counts(trajectory: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Engine attempts and acceptances, split into planner actions and executor repairs.

    A retry of a repaired action is the planner's action again, so it counts for the planner.
    Pooled (planner + repair) counts are what the engine's trace holds; task-macro validity
    should use the planner's.
    """
    out = {"planner": {"attempts": 0, "accepted": 0}, "executor_repair": {"attempts": 0,
           "accepted": 0}}  # fmt: skip
    for s in trajectory:
        execution = s.get("execution")
        if s.get("tool") != "act" or not isinstance(execution, Mapping):
            continue
        if "accepted" not in execution:
            continue  # never reached the executor (parse error, lock)
        side = "executor_repair" if s.get("kind") == "executor_repair" else "planner"
        out[side]["attempts"] += 1
        out[side]["accepted"] += int(bool(execution["accepted"]))
    return out
