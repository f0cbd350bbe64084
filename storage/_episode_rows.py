"""What a list of every episode shows, read in a handful of queries instead of a few per episode.

The episode browser lists hundreds of episodes and re-reads them after each edit, undo or redo;
one query per table keeps that to milliseconds however many episodes there are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from storage._episode_notes import NoteRecord
    from storage._episode_records import EpisodeRecord
    from storage._interaction_records import AttributionRecord, BatchCellRecord
    from storage._project import Project


@dataclass(frozen=True)
class EpisodeRow:
    """One episode with the metrics asked for, its attribution, note and batch cell (if any)."""

    episode: EpisodeRecord
    metrics: dict[str, float]
    attribution: AttributionRecord | None
    note: NoteRecord | None
    cell: BatchCellRecord | None  # the planned run it filled, for an episode of a batch


def episode_rows(project: Project, metrics: Sequence[str] = ()) -> list[EpisodeRow]:
    """Every episode, newest first, with the named metrics it has (others left out)."""
    values: dict[str, dict[str, float]] = {}
    if metrics:
        marks = ", ".join("?" * len(metrics))
        for eid, name, value in project.db.execute(
            f"SELECT episode_id, name, value FROM sim_metrics WHERE name IN ({marks})",
            list(metrics),
        ).fetchall():
            values.setdefault(str(eid), {})[str(name)] = float(value)
    attributions = project.batches.attributions_by_episode()
    notes = project.notes.all()
    cells = project.batches.cells_by_episode()
    return [
        EpisodeRow(
            ep, values.get(ep.id, {}), attributions.get(ep.id), notes.get(ep.id), cells.get(ep.id)
        )
        for ep in project.episodes.list()
    ]
