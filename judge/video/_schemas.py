"""JSON Schemas of the judge's function calls (spec §4.7; the paper gives field names only).

Every object has ``additionalProperties: false``. A gate's schema is built per call: its row ids
are an enum of the live subgoals and the row count is fixed, so a provider with structured
output cannot even return a row for another subgoal. The answer enum is ``yes | no | NA`` at
every gate: an NA outside P1 is not a schema error but an undecidable answer, which the
pipeline records as unresolved (spec §4.5).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judge.models import Tool

INSPECT = "inspect_video"
PLAN_TASK = "submit_plan_task"
PLAN_PHYSICS = "submit_plan_physics"
DEPENDENCIES = "submit_dependencies"
GATE = "submit_gate"
VQA = "submit_vqa"

SID_PATTERN = "^S[1-9][0-9]*$"
_TEXT = {"type": "string", "maxLength": 2000}
_SHORT = {"type": "string", "maxLength": 500}
_SID = {"type": "string", "pattern": SID_PATTERN}
_SECONDS = {"type": "number", "minimum": 0}


def _obj(props: dict[str, Any], required: Sequence[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": list(props if required is None else required),
        "additionalProperties": False,
    }


def inspect_tool(max_frames: int = 24, default_frames: int = 12) -> Tool:
    unit = {"type": "number", "minimum": 0, "maximum": 1}
    params = _obj(
        {
            "start_s": _SECONDS,
            "end_s": _SECONDS,
            "roi": _obj({"x": unit, "y": unit, "w": unit, "h": unit}),
            "question": _SHORT,
            "expected_evidence": _SHORT,
            "n_frames": {"type": "integer", "minimum": 1, "maximum": max_frames},
        },
        required=["start_s", "end_s", "question", "expected_evidence"],
    )
    return Tool(
        INSPECT,
        "Look closer before answering: frames from a window of the video in original source "
        f"seconds, optionally cropped to a region (x, y, w, h as fractions of the frame). "
        f"Returns n_frames frames ({default_frames} if omitted, 1 to {max_frames}).",
        params,
    )


def _plan_item(reason_key: str) -> dict[str, Any]:
    return _obj(
        {
            "id": _SID,
            "source": _SHORT,
            "target": {"type": ["string", "null"], "maxLength": 500},
            "action": _SHORT,
            "end_state": _SHORT,
            "requires": {"type": "array", "items": _SID},
            reason_key: _TEXT,
        }
    )


def plan_task_tool(max_subgoals: int = 32) -> Tool:
    items = {"type": "array", "items": _plan_item("reason"), "minItems": 1}
    items["maxItems"] = max_subgoals
    return Tool(
        PLAN_TASK,
        "Submit the Task subgoal decomposition, ids S1..SN in executable order.",
        _obj({"subgoals": items}),
    )


def plan_physics_tool(max_windows: int = 16) -> Tool:
    items = {"type": "array", "items": _plan_item("rationale"), "minItems": 1}
    items["maxItems"] = max_windows
    return Tool(
        PLAN_PHYSICS,
        f"Submit the Physics window plan: 1 to {max_windows} windows S1..SN in executable order.",
        _obj({"subgoals": items}),
    )


def dependencies_tool(ids: Sequence[str]) -> Tool:
    row = _obj(
        {
            "id": {"type": "string", "enum": list(ids)},
            "requires": {"type": "array", "items": _SID},
            "reason": _TEXT,
        }
    )
    rows = {"type": "array", "items": row, "minItems": len(ids), "maxItems": len(ids)}
    return Tool(
        DEPENDENCIES,
        "Submit one dependency row per window id, in the given order.",
        _obj({"rows": rows}),
    )


def gate_tool(gate: str, live: Sequence[str]) -> Tool:
    row = _obj(
        {
            "id": {"type": "string", "enum": list(live)},
            "answer": {"type": "string", "enum": ["yes", "no", "NA"]},
            "unresolved": {"type": "boolean"},
            "evidence_ids": {"type": "array", "items": {"type": "string", "maxLength": 16}},
            "timestamps_s": {"type": "array", "items": _SECONDS},
            "note": _TEXT,
        }
    )
    rows = {"type": "array", "items": row, "minItems": len(live), "maxItems": len(live)}
    return Tool(
        GATE,
        f"Submit the answers to gate {gate}: exactly one row per listed subgoal.",
        _obj({"gate": {"type": "string", "const": gate}, "rows": rows}),
    )


def vqa_tool() -> Tool:
    window = _obj({"start_s": _SECONDS, "end_s": _SECONDS, "evidence": _SHORT})
    windows = {"type": "array", "items": window, "maxItems": 3}
    return Tool(
        VQA,
        "Submit the holistic Task (0-3) and Physics (0-4, or null) scores of the whole video.",
        _obj(
            {
                "task": {"type": "integer", "minimum": 0, "maximum": 3},
                "physics": {"type": ["integer", "null"], "minimum": 0, "maximum": 4},
                "reasoning": _TEXT,
                "task_windows": windows,
                "physics_windows": windows,
            }
        ),
    )
