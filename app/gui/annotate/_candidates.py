"""Continuity candidates on the annotate timeline: which window is next or previous (no Qt).

A scan's windows come best first; the annotator walks them in time order, from wherever the
playhead is. They are suggestions to look at, never decisions: nothing here writes anything.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from storage.media.continuity import Scan, Window

NOT_SCANNED = "no candidate windows (not scanned)"
NONE_FOUND = "no candidate windows: the continuity scan found none"


@dataclass(frozen=True)
class Candidate:
    """A window placed on the video's frames: ``number`` is its place in time order (1-based),
    ``rank`` its place by score (1 = strongest)."""

    window: Window
    start_frame: int
    end_frame: int
    number: int
    rank: int

    def status(self, total: int) -> str:
        w = self.window
        return (
            f"candidate {self.number}/{total}: {w.reason} "
            f"({w.start_s:.2f}–{w.end_s:.2f} s, score {w.score:.1f}; a suggestion, not a decision)"
        )

    def tooltip(self, total: int) -> str:
        w = self.window
        return (
            f"Suggested candidate {self.number}/{total} (continuity scan, rank {self.rank} by "
            f"score)\n{w.start_s:.2f}–{w.end_s:.2f} s · score {w.score:.1f}\n{w.reason}"
        )


def candidates(scan: Scan | None, frame_at: Callable[[float], int]) -> list[Candidate]:
    """The scan's windows in time order (ties: the stronger first), mapped to frames with
    ``frame_at`` (the frame on screen at a source time)."""
    if scan is None:
        return []
    by_score = sorted(scan.windows, key=lambda w: -w.score)
    rank = {id(w): k for k, w in enumerate(by_score, 1)}
    ordered = sorted(scan.windows, key=lambda w: (w.start_s, -w.score, w.end_s))
    out = []
    for k, w in enumerate(ordered, 1):
        a, b = frame_at(w.start_s), frame_at(w.end_s)
        out.append(Candidate(w, a, max(a, b), k, rank[id(w)]))
    return out


def step_candidate(starts: Sequence[int], frame: int, step: int) -> int | None:
    """Index in ``starts`` (ascending start frames) of the candidate to move to from ``frame``:
    the first one starting after it (``step`` > 0) or the last one starting before it
    (``step`` < 0), wrapping round at either end so one key cycles through them all; None when
    there are none."""
    if not starts:
        return None
    if step > 0:
        return next((k for k, s in enumerate(starts) if s > frame), 0)
    return next((k for k in range(len(starts) - 1, -1, -1) if starts[k] < frame), len(starts) - 1)


__all__ = ["NONE_FOUND", "NOT_SCANNED", "Candidate", "candidates", "step_candidate"]
