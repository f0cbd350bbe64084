"""A batch's results table: mean ± population SD over runs, with the episodes behind each number.

Rows group the batch's cells by the manifest axes asked for (by default the assistant, as in
the spec's main tables); columns are metrics. For one row and one metric, each run ``r`` pools
the items of every stored episode of that row's cells in run ``r`` (a triggered error, a graded
question, one success per episode: :func:`sim.metrics.pooled_mean`), and the runs are then
summarised with equal weight (:func:`sim.metrics.summarize`). Every number keeps the episode ids
it came from, for drill-down; a cell with no item in any run is ``None``, never 0.

Items come from each episode's stored trace through :data:`ITEMS` (``(project, episode_id) ->
{metric: [scores]}``), so a table is recomputed offline from the project alone.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from annotation import UserError
from sim.metrics import RunValue, Summary, pooled_mean, summarize
from storage import BatchCellRecord, CallTotals, Project

AXES = ("scenario", "persona", "assistant", "timing")

#: the columns, in order, with their headers
METRICS: dict[str, str] = {
    "success": "success",
    "in_time_success": "in-time",
    "detection": "detection",
    "prevention": "prevention",
    "qa": "QA",
    "proactive": "proactive",
    "goal_completion": "GCR",
    "validity": "validity",
    "quality": "quality",  # the interaction-quality judge's Q_r per round (judge adds the items)
}

Items = Callable[[Project, str], dict[str, list[float]]]


class ResultsError(UserError, ValueError):
    """A results table that cannot be made as asked (an unknown axis or metric)."""


def stored_items(project: Project, episode_id: str) -> dict[str, list[float]]:
    """An episode's items from its stored metrics (``sim.interact.store_episode_metrics``).

    Counts become 0/1 items (a detected error is a 1 among the triggered ones) and a mean over
    ``n`` graded items becomes ``n`` copies of it, so pooling over a run's episodes gives
    Σ hits / Σ items exactly, as the spec pools.
    """
    m = project.episodes.metrics(episode_id)

    def hits(k: str, n: str) -> list[float]:
        if n not in m:
            return []
        total, got = int(m[n]), int(m.get(k, 0))
        return [1.0] * got + [0.0] * (total - got)

    def repeated(mean: str, n: str) -> list[float]:
        return [m[mean]] * int(m.get(n, 0)) if mean in m else []

    out = {
        "success": [m["success"]] if "success" in m else [],
        "in_time_success": [m["in_time_success"]] if "in_time_success" in m else [],
        "detection": hits("errors_detected", "errors_triggered"),
        "prevention": hits("errors_prevented", "errors_triggered"),
        "qa": repeated("qa_score", "questions_graded"),
        "proactive": repeated("proactive_score", "requests_graded"),
        "validity": hits("accepted", "attempts"),
    }
    gcr = m.get("goal_completion", m.get("gcr"))
    out["goal_completion"] = [] if gcr is None else [gcr]
    return out


ITEMS: list[Items] = [stored_items]


@dataclass(frozen=True)
class Row:
    """One row: its key (values of the grouping axes), planned/stored counts, the cells, and
    what its stored episodes' model calls cost and how their replies came out (summed)."""

    key: tuple[str, ...]
    planned: int
    stored: int
    summaries: dict[str, Summary]
    calls: CallTotals = field(default_factory=CallTotals)


@dataclass(frozen=True)
class ResultsTable:
    batch_id: str
    by: tuple[str, ...]
    metrics: tuple[str, ...]
    runs: int
    rows: tuple[Row, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "batch": self.batch_id,
            "by": list(self.by),
            "runs": self.runs,
            "rows": [
                {
                    **dict(zip(self.by, r.key, strict=True)),
                    "planned": r.planned,
                    "stored": r.stored,
                    "calls": r.calls.to_json(),
                    "metrics": {
                        name: {
                            "mean": s.mean,
                            "sd": s.sd,
                            "runs": [_run_json(k, v) for k, v in enumerate(s.runs)],
                        }
                        for name, s in r.summaries.items()
                    },
                }
                for r in self.rows
            ],
        }


def _run_json(k: int, v: RunValue) -> dict[str, object]:
    return {"run": k, "value": v.value, "n": v.n, "episodes": list(v.episodes)}


def results_table(
    project: Project,
    batch_id: str,
    *,
    by: Sequence[str] = ("assistant",),
    metrics: Sequence[str] | None = None,
) -> ResultsTable:
    """The batch's table (see the module docstring)."""
    by = tuple(by)
    for axis in by:
        if axis not in AXES:
            raise ResultsError(f"--by: no axis {axis!r}; choose from {', '.join(AXES)}")
    names = tuple(metrics) if metrics else tuple(METRICS)
    for name in names:
        if name not in METRICS:
            raise ResultsError(f"--metric: no metric {name!r}; choose from {', '.join(METRICS)}")
    batch = project.batches.get(batch_id)
    cells = project.batches.cells(batch.id)
    runs = 1 + max(c.run for c in cells)
    groups: dict[tuple[str, ...], list[BatchCellRecord]] = defaultdict(list)
    for c in cells:
        groups[tuple(str(getattr(c, a)) for a in by)].append(c)
    items: dict[str, dict[str, list[float]]] = {}
    for c in cells:
        if c.episode_id is not None:
            items[c.episode_id] = _items(project, c.episode_id)
    calls = project.episodes.call_totals_by_episode(list(items))
    rows = []
    for key, members in groups.items():
        summaries = {}
        for name in names:
            per_run = []
            for r in range(runs):
                scores = [
                    (c.episode_id, s)
                    for c in members
                    if c.run == r and c.episode_id is not None
                    for s in items[c.episode_id].get(name, [])
                ]
                per_run.append(pooled_mean(scores))
            summaries[name] = summarize(per_run)
        stored = [c.episode_id for c in members if c.episode_id is not None]
        spent = sum((calls.get(e, CallTotals()) for e in stored), CallTotals())
        rows.append(Row(key, len(members), len(stored), summaries, spent))
    return ResultsTable(batch.id, by, names, runs, tuple(rows))


def _items(project: Project, episode_id: str) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for source in ITEMS:  # later sources refine earlier ones, metric by metric
        out.update(source(project, episode_id))
    return out


def drill_down(table: ResultsTable, key: Sequence[str], metric: str) -> tuple[str, ...]:
    """The episodes behind one number of the table."""
    for row in table.rows:
        if row.key == tuple(key):
            if metric not in row.summaries:
                raise ResultsError(f"the table has no metric {metric!r}")
            return row.summaries[metric].episodes
    raise ResultsError(
        f"the table has no row {' / '.join(key)!r} (rows: "
        f"{', '.join(' / '.join(r.key) for r in table.rows)})"
    )


def format_summary(s: Summary) -> str:
    """``"83.3 ± 4.1"`` in percent, or ``"–"`` when nothing was scored."""
    if s.mean is None or s.sd is None:
        return "–"
    return f"{100 * s.mean:.1f} ± {100 * s.sd:.1f}"
