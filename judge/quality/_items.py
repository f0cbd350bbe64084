"""Interaction quality as a batch results column: each graded round's Q_r is one item.

``sim.batch`` builds results tables from per-episode items and cannot import ``judge``; this
module adds the ``quality`` items when ``judge`` is imported (as the llm participants are), from
stored verdicts only, so re-aggregating a batch makes no model call.
"""

from __future__ import annotations

from judge.quality._scores import quality_scores
from sim.batch import ITEMS
from sim.metrics import round_score
from storage import Project


def quality_items(project: Project, episode_id: str) -> dict[str, list[float]]:
    """``{"quality": [Q_r, …]}`` for the rounds with stored verdicts (nothing when none)."""
    rounds = quality_scores(project, episode_id).rounds
    scores = [s for s in (round_score(r) for r in rounds) if s is not None]
    return {"quality": scores} if scores else {}


if quality_items not in ITEMS:
    ITEMS.append(quality_items)
