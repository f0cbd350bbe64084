"""The disagreement queue: videos where a judge and the humans, or the humans among themselves,
disagree most, so a lead reviews those first (the Results workspace and ``workbench agreement
--disagreements`` show the same list).

The order is the judge's gap first (|judge Final − human consensus Final|, largest first), then
the raters' own spread on Task (largest Task rating minus smallest); a video with neither figure
(no consensus Final or no judge score, and fewer than two Task ratings) is not in the queue.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from annotation._panel import Evaluator, HumanSuccessRule, Panel, consensus


@dataclass(frozen=True)
class Disagreement:
    """One video of the queue; NaN where a figure is missing.

    Attributes:
        video_id: The video.
        gap: |judge Final − consensus Final| on 0–100.
        spread: Largest minus smallest Task rating of the video's raters (needs two ratings).
        consensus: The human consensus Final.
        judge: The judge's Final.
        n_ratings: How many raters gave this video a Task rating.
    """

    video_id: str
    gap: float
    spread: float
    consensus: float
    judge: float
    n_ratings: int

    def as_dict(self) -> dict[str, str | float | int | None]:
        """The row as a flat dict, missing figures as None (JSON/CSV export)."""
        return {
            k: (None if isinstance(v, float) and math.isnan(v) else v)
            for k, v in self.__dict__.items()
        }


@dataclass(frozen=True)
class DisagreementQueue:
    """The queue in review order, for one judge (``evaluator`` None: humans only)."""

    evaluator: str | None
    rows: tuple[Disagreement, ...]

    def to_rows(self) -> list[dict[str, str | float | int | None]]:
        """Rows as dicts: video_id, gap, spread, consensus, judge, n_ratings."""
        return [r.as_dict() for r in self.rows]


def disagreement_queue(
    panel: Panel, evaluator: Evaluator | None, *, human_success: HumanSuccessRule = "rated"
) -> DisagreementQueue:
    """Rank the panel's videos by judge–human gap on Final, then by the raters' Task spread.

    Args:
        panel: The rated panel.
        evaluator: The judge to compare with the consensus (None: rank by rater spread only).
        human_success: Human (+) rule for the consensus (as in the agreement table).
    """
    final = consensus(panel, human_success=human_success)["final"]
    judge = evaluator.final if evaluator is not None else np.full(panel.n_videos, math.nan)
    n = np.isfinite(panel.task).sum(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows: no spread
        span = np.nanmax(panel.task, axis=1) - np.nanmin(panel.task, axis=1)
    spread = np.where(n >= 2, span, math.nan)
    gap = np.abs(judge - final)
    rows = [
        Disagreement(
            vid, float(gap[i]), float(spread[i]), float(final[i]), float(judge[i]), int(n[i])
        )
        for i, vid in enumerate(panel.video_ids)
        if math.isfinite(gap[i]) or math.isfinite(spread[i])
    ]

    def key(r: Disagreement) -> tuple[float, float]:
        return (_or_low(r.gap), _or_low(r.spread))

    rows.sort(key=key, reverse=True)  # stable: ties keep panel order
    return DisagreementQueue(None if evaluator is None else evaluator.name, tuple(rows))


def _or_low(v: float) -> float:
    return v if math.isfinite(v) else -1.0
