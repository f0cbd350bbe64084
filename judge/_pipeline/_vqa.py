"""The Simple VQA control (spec §6): one call over the uniform Task frames, no plan or gates."""

from __future__ import annotations

from judge._api import FrameImage
from judge._pipeline import _schemas as sch
from judge._pipeline._prompts import vqa_messages
from judge._pipeline._replies import VqaAnswer, parse_vqa
from judge._pipeline._session import Session


def simple_vqa(s: Session, goal: str, f1: FrameImage, frames: tuple[FrameImage, ...]) -> VqaAnswer:
    """Ask once for holistic Task 0–3 and Physics 0–4 (or null) with evidence windows."""
    tool = sch.vqa_tool()
    msgs = vqa_messages(goal, f1, frames, tool=tool.name)
    return s.ask("vqa", msgs, [tool], lambda c: parse_vqa(c.arguments))
