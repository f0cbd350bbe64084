"""What a list of every episode shows, read in a handful of queries instead of a few per episode.

The episode browser lists hundreds of episodes and re-reads them after each edit, undo or redo;
one query per table keeps that to milliseconds however many episodes there are.

What an episode's model calls cost and how their replies came out (:class:`CallTotals`) is
summed from its exchanges: every model exchange stores its tokens, cost and reply outcome (v13,
see :class:`storage.ExchangeRecord`), and the totals are a query over those rows, never a second
copy that could disagree with them. A batch's cost, ``workbench metrics`` and the episode list
all read them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite_utils

    from storage._episode_notes import NoteRecord
    from storage._episode_records import EpisodeRecord
    from storage._interaction_records import AttributionRecord, BatchCellRecord
    from storage._project import Project


@dataclass(frozen=True)
class CallTotals:
    """One episode's model calls: how many replies and how they came out, tokens and cost.

    ``replies`` counts logical calls (one per participant turn; a tool agent's re-asks are one
    call); ``valid + repaired + silenced + failed == replies``. An episode with no model behind
    it has all zeros (``replies == 0``).
    """

    replies: int = 0
    valid: int = 0
    repaired: int = 0
    silenced: int = 0
    failed: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0

    def to_json(self) -> dict[str, int | float]:
        return dict(self.__dict__)

    def __add__(self, other: CallTotals) -> CallTotals:
        pairs = zip(self.__dict__.values(), other.__dict__.values(), strict=True)
        return CallTotals(*(a + b for a, b in pairs))


_SUMS = (
    "SELECT episode_id, COUNT(outcome), SUM(outcome = 'valid'), SUM(outcome = 'repaired'), "
    "SUM(outcome = 'silenced'), SUM(outcome = 'failed'), SUM(tokens_in), SUM(tokens_out), "
    "SUM(cost_usd) FROM sim_exchanges"
)


def call_totals(
    db: sqlite_utils.Database, episode_ids: Sequence[str] | None = None
) -> dict[str, CallTotals]:
    """Totals by episode id, for the given episodes (None: every episode with an exchange);
    an episode whose exchanges had no model behind them is left out."""
    where, args = "", list(episode_ids or [])
    if episode_ids is not None:
        if not args:
            return {}
        where = f" WHERE episode_id IN ({', '.join('?' * len(args))})"
    rows = db.execute(
        f"{_SUMS}{where} GROUP BY episode_id HAVING COUNT(outcome) > 0 OR SUM(tokens_in) > 0",
        args,
    ).fetchall()
    return {str(r[0]): _totals(r) for r in rows}


def _totals(r: Sequence[Any]) -> CallTotals:
    n = [int(v or 0) for v in r[1:8]]
    return CallTotals(n[0], n[1], n[2], n[3], n[4], n[5], n[6], float(r[8] or 0.0))


@dataclass(frozen=True)
class EpisodeRow:
    """One episode with the metrics asked for, its attribution, note and batch cell (if any),
    and what its model calls cost and how their replies came out."""

    episode: EpisodeRecord
    metrics: dict[str, float]
    attribution: AttributionRecord | None
    note: NoteRecord | None
    cell: BatchCellRecord | None  # the planned run it filled, for an episode of a batch
    calls: CallTotals = field(default_factory=CallTotals)


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
    calls = project.episodes.call_totals_by_episode()
    return [
        EpisodeRow(
            ep,
            values.get(ep.id, {}),
            attributions.get(ep.id),
            notes.get(ep.id),
            cells.get(ep.id),
            calls.get(ep.id, CallTotals()),
        )
        for ep in project.episodes.list()
    ]
