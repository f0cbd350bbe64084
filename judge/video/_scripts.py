"""Scripted judges for the video judge: plausible, self-consistent replies to its stages.

:func:`scripted_judge` builds a responder for :class:`judge.models.ScriptedModel` (plans of N
subgoals, answers per gate and subgoal, optional inspections); :func:`perfect_judge` answers yes
throughout. Tests, benchmarks, the docs' screenshots and the loopback server play them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from judge.models import Message, Responder, Tool, ToolCall

AnswerSpec = Mapping[str, Mapping[str, str] | str] | Callable[[str, str], str]


def offered(tools: Sequence[Tool], name: str) -> Tool | None:
    return next((t for t in tools if t.name == name), None)


def live_ids(tools: Sequence[Tool]) -> list[str]:
    """The subgoal ids a gate call asks about (the enum of its submit_gate row ids)."""
    tool = offered(tools, "submit_gate") or offered(tools, "submit_dependencies")
    assert tool is not None
    return list(tool.parameters["properties"]["rows"]["items"]["properties"]["id"]["enum"])


def visible_frames(messages: Sequence[Message]) -> list[tuple[str, float]]:
    """(evidence id, source time) of every video frame in the messages, in order."""
    return [(i.evidence_id, i.time_s) for m in messages for i in m.images if i.frame_index >= 0]


def scripted_judge(
    *,
    task_subgoals: int = 2,
    physics_windows: int = 2,
    answers: AnswerSpec | None = None,
    inspections: Mapping[str, int] | None = None,
    inspect_args: Mapping[str, Any] | None = None,
    vqa: tuple[int, int | None] = (3, 4),
) -> Responder:
    """A consistent scripted judge.

    Args:
        task_subgoals: Subgoals in the Task plan (S1..SN).
        physics_windows: Windows in the Physics plan.
        answers: Per gate, either one code for every subgoal or ``{sid: code}``; or a function
            ``(gate, sid) -> code``. Codes: ``yes``, ``no``, ``NA``, ``?`` (answer no, flagged
            unresolved). Anything not given is ``yes``.
        inspections: Per gate, how many ``inspect_video`` calls to make before submitting
            (only while the tool is offered).
        inspect_args: Arguments of those calls (default: the first second, 12 frames).
        vqa: (task, physics) of the Simple VQA reply.
    """
    done: Counter[str] = Counter()
    wanted = dict(inspections or {})
    look = dict(inspect_args or {"start_s": 0.0, "end_s": 1.0})
    look.setdefault("question", "Is the contact visible before the object moves?")
    look.setdefault("expected_evidence", "The fingers closing on the object first.")

    def code(gate: str, sid: str) -> str:
        if answers is None:
            return "yes"
        if callable(answers):
            return answers(gate, sid)
        spec = answers.get(gate, "yes")
        return spec if isinstance(spec, str) else spec.get(sid, "yes")

    def plan(n: int, reason_key: str) -> dict[str, Any]:
        items = [
            {"id": f"S{k}", "source": f"object {k}", "target": "tray", "action": "place",
             "end_state": f"object {k} rests on the tray", "requires": [], reason_key: "stated"}
            for k in range(1, n + 1)
        ]  # fmt: skip
        return {"subgoals": items}

    def respond(stage: str, messages: Sequence[Message], tools: Sequence[Tool]) -> ToolCall:
        if stage == "plan_task":
            return ToolCall("submit_plan_task", plan(task_subgoals, "reason"))
        if stage == "plan_physics":
            return ToolCall("submit_plan_physics", plan(physics_windows, "rationale"))
        if stage == "review":
            deps = [{"id": i, "requires": [], "reason": "independent"} for i in live_ids(tools)]
            return ToolCall("submit_dependencies", {"rows": deps})
        if stage == "vqa":
            return ToolCall("submit_vqa", {"task": vqa[0], "physics": vqa[1],
                                           "reasoning": "scripted", "task_windows": [],
                                           "physics_windows": []})  # fmt: skip
        gate = stage.removeprefix("gate:")
        if offered(tools, "inspect_video") and done[gate] < wanted.get(gate, 0):
            done[gate] += 1
            return ToolCall("inspect_video", look)
        frames = visible_frames(messages)
        cite = frames[-1] if frames else None
        rows: list[dict[str, Any]] = []
        for sid in live_ids(tools):
            c = code(gate, sid)
            rows.append({"id": sid, "answer": "no" if c == "?" else c, "unresolved": c == "?",
                         "evidence_ids": [cite[0]] if cite else [],
                         "timestamps_s": [round(cite[1], 3)] if cite else [],
                         "note": f"scripted {c}"})  # fmt: skip
        return ToolCall("submit_gate", {"gate": gate, "rows": rows})

    return respond


def perfect_judge(task_subgoals: int = 2, physics_windows: int = 2) -> Responder:
    """A judge that plans N subgoals and answers yes at every gate (T = P = S = 100)."""
    return scripted_judge(task_subgoals=task_subgoals, physics_windows=physics_windows)
