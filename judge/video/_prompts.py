"""Prompt templates (``resources/prompts/ego2act-judge-v2``) and the messages of each stage.

Instructions come only from the templates. The goal, the plans, the continuity scan's candidate
windows and the model's own inspection requests go into user messages as JSON inside a DATA
block (:func:`judge._prompts.data_block`), after the template that names its markers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from annotation import load_rubric
from judge._prompts import DATA_CLOSE, DATA_OPEN, Templates, data_block
from judge.models import FrameImage, Message
from judge.video._context import InspectionBlock
from storage import RunSubgoal
from storage.media.continuity import Window as ScanWindow

TEMPLATE_DIR = "ego2act-judge-v2"
TEMPLATES = Templates(TEMPLATE_DIR)
render = TEMPLATES.render
prompt_digest = TEMPLATES.digest


def _data(payload: Mapping[str, Any]) -> str:
    """Supplied material as a DATA block, after the note naming its markers."""
    return data_block(payload, render("data_note.md", open=DATA_OPEN, close=DATA_CLOSE))


def _system(body: str, protocol: str) -> Message:
    return Message("system", f"{body}\n\n{protocol}\n\n{render('boundary.md')}")


def _scene(goal: str, f1: FrameImage, extra: Mapping[str, Any] | None = None) -> Message:
    payload: dict[str, Any] = {"goal": goal, **(extra or {})}
    text = _data(payload) + "\nImage F1: the initial scene, before the video starts."
    return Message("user", text, (f1,))


def _frame_list(frames: Sequence[FrameImage]) -> str:
    return ", ".join(f"{f.evidence_id} @ {f.time_s:.2f} s" for f in frames)


def _subgoal_json(s: RunSubgoal) -> dict[str, Any]:
    return {"id": s.sid, "source": s.source, "target": s.target, "action": s.action,
            "end_state": s.end_state}  # fmt: skip


def plan_messages(
    stage: str, goal: str, f1: FrameImage, *, tool: str, max_windows: int
) -> list[Message]:
    """(a) Task decomposition or (b) Physics window plan: goal and f₁ only, no video."""
    body = render(f"{stage}.md", max_windows=max_windows)
    return [
        _system(body, render("protocol_submit.md", tool=tool)),
        Message("user", f"{_scene(goal, f1).text}\nCall `{tool}`.", (f1,)),
    ]


def review_messages(
    goal: str, f1: FrameImage, windows: Sequence[RunSubgoal], *, tool: str
) -> list[Message]:
    """(c) Physics dependency review of the fixed windows."""
    rows = [
        _subgoal_json(w) | {"requires": list(w.requires), "rationale": w.reason} for w in windows
    ]
    scene = _scene(goal, f1, {"windows": rows})
    return [
        _system(render("dependency_review.md"), render("protocol_submit.md", tool=tool)),
        Message("user", f"{scene.text}\nCall `{tool}`.", scene.images),
    ]


def gate_messages(
    *,
    axis: str,
    gate: str,
    goal: str,
    f1: FrameImage,
    plan: Sequence[RunSubgoal],
    live: Sequence[str],
    initial: Sequence[FrameImage],
    inspections: Sequence[InspectionBlock],
    used: int,
    limit: int,
    can_inspect: bool,
    duration_s: float,
    candidates: Sequence[ScanWindow] = (),
) -> list[Message]:
    """One gate call: rubric for the gate, the scene and plan, frames, the continuity scan's
    candidate windows (if any are offered), inspections, then the instruction."""
    name = load_rubric().gate(gate).name
    block = render(f"gate_{gate}.md")
    if axis == "task":
        body = render("task_gate.md", gate=gate, gate_name=name, gate_block=block)
    else:
        na = render("na_p1.md" if gate == "P1" else "na_other.md")
        body = render("physics_gate.md", gate=gate, gate_name=name, gate_block=block, na_rule=na)
    key = "subgoals" if axis == "task" else "windows"
    msgs = [
        _system(body, render("protocol_gate.md")),
        _scene(goal, f1, {key: [_subgoal_json(s) for s in plan]}),
        Message(
            "user",
            "Frames sampled uniformly over the whole video (id @ original source time): "
            + _frame_list(initial),
            tuple(initial),
        ),
    ]
    if candidates:
        msgs.append(candidates_message(candidates))
    msgs += [_inspection_message(b) for b in inspections]
    tools_line = render("tools_inspect.md" if can_inspect else "tools_submit.md")
    instruction = render(
        "user_gate.md",
        gate=gate,
        gate_name=name,
        n_live=len(live),
        live_ids=", ".join(live),
        tools_line=tools_line,
        used=used,
        limit=limit,
        duration=f"{duration_s:.2f}",
    )
    msgs.append(Message("user", instruction))
    return msgs


def candidate_rows(candidates: Sequence[ScanWindow]) -> list[dict[str, Any]]:
    """The windows as the model is shown them (and the run records them): C1, C2 ... in the
    order given, times in source seconds."""
    return [{"id": f"C{k}", "start_s": round(w.start_s, 3), "end_s": round(w.end_s, 3),
             "score": round(w.score, 2), "reason": w.reason}
            for k, w in enumerate(candidates, 1)]  # fmt: skip


def candidates_message(candidates: Sequence[ScanWindow]) -> Message:
    intro = render("continuity_windows.md", n=len(candidates))
    rows = candidate_rows(candidates)
    return Message("user", f"{intro}\n{_data({'candidate_windows': rows})}")


def _inspection_message(b: InspectionBlock) -> Message:
    w = b.window
    payload = {
        "inspection": f"I{b.number}",
        "asked_at_gate": b.gate,
        "window_s": [round(w.start_s, 3), round(w.end_s, 3)],
        "region": None if w.roi is None else [round(v, 4) for v in w.roi],
        "question": b.question,
        "expected_evidence": b.expected_evidence,
        "adjustments": list(w.notes),
        "frames": [{"id": f.evidence_id, "time_s": round(f.time_s, 3)} for f in b.frames],
    }
    text = f"Frames returned by inspection I{b.number}:\n{_data(payload)}"
    return Message("user", text, b.frames)


def vqa_messages(
    goal: str, f1: FrameImage, frames: Sequence[FrameImage], *, tool: str
) -> list[Message]:
    """The Simple VQA control: one call over uniform frames, no plan, gates or inspection."""
    return [
        _system(render("simple_vqa.md"), render("protocol_submit.md", tool=tool)),
        _scene(goal, f1),
        Message(
            "user",
            "Frames sampled uniformly over the whole video (id @ original source time): "
            + _frame_list(frames)
            + f"\nCall `{tool}`.",
            tuple(frames),
        ),
    ]
