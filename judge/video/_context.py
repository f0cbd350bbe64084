"""What the model can see on one axis: the initial uniform frames plus recent inspections."""

from __future__ import annotations

from dataclasses import dataclass, replace

from judge.models import FrameImage
from judge.video._frames import Window


@dataclass(frozen=True)
class InspectionBlock:
    """One answered ``inspect_video`` request: what was asked and the frames it returned."""

    number: int  # run-wide: I{number}-{k}
    axis: str
    gate: str
    window: Window
    question: str
    expected_evidence: str
    requested_frames: int
    frames: tuple[FrameImage, ...]


class EvidenceContext:
    """Initial frames plus the most recent inspection frames, as spec §4.4 keeps them.

    Inspection frames are retained by arrival order: once more than ``keep`` have come in, the
    oldest drop out of later calls (the model saw them, so citing them stays legitimate and
    :attr:`seen_ids` keeps them).
    """

    def __init__(self, initial: tuple[FrameImage, ...], keep: int) -> None:
        self._keep = keep
        self._blocks: list[InspectionBlock] = []
        self.seen_ids: set[str] = {f.evidence_id for f in initial}

    def add(self, block: InspectionBlock) -> None:
        self._blocks.append(block)
        self.seen_ids.update(f.evidence_id for f in block.frames)

    def retained(self) -> list[InspectionBlock]:
        """Inspection blocks trimmed to the newest ``keep`` frames, oldest block first."""
        budget = self._keep
        out: list[InspectionBlock] = []
        for block in reversed(self._blocks):
            if budget <= 0:
                break
            frames = block.frames[-budget:] if len(block.frames) > budget else block.frames
            budget -= len(frames)
            out.append(block if frames == block.frames else replace(block, frames=frames))
        out.reverse()
        return out
