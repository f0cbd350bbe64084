"""A case folder of clips with known discontinuities, for the tests that use continuity scans,
and a scripted judge that inspects the candidate windows it is offered.

A clean demo recording (no defect planted in it) and its teleport and swap made by the
corruption generator, in the documented case layout (docs/case-format.md).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from judge import scripted_judge
from judge.models import Message, Tool, ToolCall
from judge.video import DATA_CLOSE, DATA_OPEN
from sim.synthetic import corrupt_video, write_demo_cases

Truth = dict[str, dict[str, Any]]  # per edited file name: its Corruption record


def write_corrupted_case(root: Path, case_id: str = "edited") -> tuple[Path, Truth]:
    """``root/cases/<case_id>`` with clean.mp4, teleport.mp4 and swap.mp4, and the ground truth
    of the two edits."""
    demos = write_demo_cases(root / "demo", size=(320, 180))
    (demo,) = [f for f in demos if f.name == "stack_blocks"]
    source = demo / "videos" / "human_success_1.mp4"
    case = root / "cases" / case_id
    (case / "videos").mkdir(parents=True)
    shutil.copy(demo / "initial.png", case / "initial.png")
    shutil.copy(source, case / "videos" / "clean.mp4")
    truth: Truth = {}
    for kind in ("teleport", "swap"):
        out = root / "edits" / f"{kind}.mp4"  # its .json record lands beside it, not in the case
        out.parent.mkdir(exist_ok=True)
        truth[f"{kind}.mp4"] = corrupt_video(source, kind, out).__dict__
        shutil.copy(out, case / "videos" / f"{kind}.mp4")
    meta = json.loads((demo / "case.json").read_text())
    videos = [{"file": f"videos/{n}", "role": "generated", "model": n.removesuffix(".mp4")}
              for n in ("clean.mp4", "teleport.mp4", "swap.mp4")]  # fmt: skip
    keep = {k: meta[k] for k in ("format", "goal", "domain", "clutter", "initial_image")}
    (case / "case.json").write_text(json.dumps(keep | {"id": case_id, "videos": videos}))
    return case, truth


def data_blocks(text: str) -> Iterator[Any]:
    pos = 0
    while (start := text.find(DATA_OPEN + "\n", pos)) >= 0:
        end = text.index("\n" + DATA_CLOSE, start)
        yield json.loads(text[start + len(DATA_OPEN) + 1 : end])
        pos = end + 1


def offered_in(messages: Sequence[Message]) -> list[list[dict[str, Any]]]:
    """The candidate-window lists a request shows the model."""
    return [b["candidate_windows"] for m in messages for b in data_blocks(m.text)
            if "candidate_windows" in b]  # fmt: skip


def inspecting_judge() -> Any:
    """All yes, but at P1 first inspect the first candidate window it is offered (what a model
    is asked to do with them)."""
    base = scripted_judge()
    looked: set[str] = set()

    def respond(stage: str, messages: Sequence[Message], tools: Sequence[Tool]) -> ToolCall:
        shown = offered_in(messages)
        can = any(t.name == "inspect_video" for t in tools)
        if stage == "gate:P1" and shown and can and stage not in looked:
            looked.add(stage)
            c = shown[0][0]
            return ToolCall("inspect_video", {
                "start_s": max(0.0, c["start_s"] - 0.25), "end_s": c["end_s"] + 0.25,
                "question": f"What happens at candidate {c['id']}?",
                "expected_evidence": "Objects jumping between neighbouring frames."})  # fmt: skip
        return base(stage, messages, tools)

    return respond
