"""The Simple VQA control (spec §6): one call over the uniform Task frames, no plan or gates."""

from __future__ import annotations

from judge.models import FrameImage
from judge.video._prompts import vqa_messages
from judge.video._replies import VqaAnswer, parse_vqa
from judge.video._schemas import vqa_tool
from judge.video._session import Session


def simple_vqa(s: Session, goal: str, f1: FrameImage, frames: tuple[FrameImage, ...]) -> VqaAnswer:
    """Ask once for holistic Task 0–3 and Physics 0–4 (or null) with evidence windows."""
    tool = vqa_tool()
    msgs = vqa_messages(goal, f1, frames, tool=tool.name)
    return s.ask("vqa", msgs, [tool], lambda c: parse_vqa(c.arguments))
