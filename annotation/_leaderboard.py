"""Leaderboard (Table 2 layout, Tables 11/12 intervals) and score coverage (Table 10 layout).

A model's aggregate is the mean of its per-video scores: Agg = mean of per-video S — never
G(mean T, mean P) (spec ego2act.md §3.1, cases 18/19) — and likewise mean T and mean P. Each
source averages over the videos it scored: the human column over videos with a consensus, an
evaluator over the videos where it has a score. Intervals come from the same case-level
bootstrap as the agreement table (every video of a drawn case comes along).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from annotation._bootstrap import CaseBootstrap, CategoryMeans, percentile_ci
from annotation._panel import (
    BoolArray,
    Evaluator,
    FloatArray,
    HumanSuccessRule,
    Panel,
    consensus_evaluator,
)

LEADERBOARD_METRICS: tuple[str, ...] = ("T", "P", "Agg")
_AXIS_OF = {"T": "task", "P": "physics", "Agg": "final"}
_ROLE_ORDER = ("human-success", "human-failure")


@dataclass(frozen=True)
class LeaderboardRow:
    """One cell: a model's aggregate under one evaluator, with its interval."""

    model: str
    evaluator: str
    metric: str
    estimate: float
    ci_low: float
    ci_high: float
    n: int

    def as_dict(self) -> dict[str, str | float | int]:
        """The cell as a flat dict (CSV/JSON export)."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class Leaderboard:
    """Model aggregates per evaluator; ``evaluators[0]`` is the human consensus."""

    models: tuple[str, ...]
    evaluators: tuple[str, ...]
    rows: tuple[LeaderboardRow, ...]
    n_boot: int
    seed: int | None
    ci: float
    human_success: str

    def cell(self, model: str, evaluator: str, metric: str) -> LeaderboardRow:
        """The cell for (model, evaluator, metric ∈ T/P/Agg)."""
        for r in self.rows:
            if (r.model, r.evaluator, r.metric) == (model, evaluator, metric):
                return r
        raise KeyError((model, evaluator, metric))

    def to_rows(self) -> list[dict[str, str | float | int]]:
        """Long format: model, evaluator, metric, estimate, ci_low, ci_high, n."""
        return [r.as_dict() for r in self.rows]

    def wide(self) -> list[dict[str, str | float]]:
        """Table 2 layout: one dict per model with ``<evaluator> T|P|Agg`` columns."""
        out: list[dict[str, str | float]] = []
        for m in self.models:
            row: dict[str, str | float] = {"model": m}
            for e in self.evaluators:
                for k in LEADERBOARD_METRICS:
                    row[f"{e} {k}"] = self.cell(m, e, k).estimate
            out.append(row)
        return out

    def markdown(self, *, with_ci: bool = False, digits: int = 1) -> str:
        """Table 2 as Markdown: per evaluator a ``T/P`` column and an ``Agg`` column."""

        def fmt(r: LeaderboardRow) -> str:
            if math.isnan(r.estimate):
                return "–"  # an unsupported or unscored axis is shown as a dash, never 0
            s = f"{r.estimate:.{digits}f}"
            if with_ci and not math.isnan(r.ci_low):
                s += f" [{r.ci_low:.{digits}f},{r.ci_high:.{digits}f}]"
            return s

        head = ["Gen."] + [c for e in self.evaluators for c in (f"{e} T/P", f"{e} Agg")]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for m in self.models:
            cells = [m]
            for e in self.evaluators:
                t, p, a = (self.cell(m, e, k) for k in LEADERBOARD_METRICS)
                cells += [f"{fmt(t)}/{fmt(p)}", fmt(a)]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)


def model_order(panel: Panel) -> list[str]:
    """Human (+), Human (−), then generators in order of first appearance."""
    present = list(dict.fromkeys(panel.models.tolist()))
    roles = dict(zip(panel.models.tolist(), panel.roles.tolist(), strict=True))
    humans = [m for role in _ROLE_ORDER for m in present if roles[m] == role]
    return humans + [m for m in present if m not in humans]


def leaderboard(
    panel: Panel,
    evaluators: Sequence[Evaluator],
    *,
    human_success: HumanSuccessRule = "max",
    n_boot: int = 1000,
    seed: int | None = 0,
    ci: float = 0.95,
) -> Leaderboard:
    """Per-model mean T, mean P and Agg (mean of per-video S) for humans and each evaluator.

    Args:
        panel: Videos with their models/roles/cases and the human ratings; videos without any
            rating simply have no human consensus (so automated columns can cover more videos).
        evaluators: Automated judges on the same videos.
        human_success: ``max`` (default, as in Table 2) assigns verified Human (+) recordings
            100/100/100 in the human column; ``rated`` uses their ratings.
        n_boot: Case-bootstrap replicates (0: no intervals).
        seed: Seed of the case draws.
        ci: Interval coverage.
    """
    sources = [consensus_evaluator(panel, human_success=human_success), *evaluators]
    names = [s.name for s in sources]
    if len(set(names)) != len(names):
        raise ValueError(f"evaluator names must be unique and not 'Human': {names}")
    for s in sources:
        if s.task.shape != (panel.n_videos,):
            raise ValueError(
                f"evaluator {s.name!r} does not cover the panel's {panel.n_videos} videos"
            )
    models = model_order(panel)
    cat = np.array([models.index(m) for m in panel.models], dtype=np.intp)
    boot = CaseBootstrap.draw(panel.case_ids, n_boot, seed)
    rows: list[LeaderboardRow] = []
    for src in sources:
        for metric in LEADERBOARD_METRICS:
            means = CategoryMeans(
                src.axis(_AXIS_OF[metric]), cat, len(models), boot.case_index, boot.n_cases
            )
            reps = np.full((boot.n_boot, len(models)), math.nan)
            for start, wc in boot.chunks():
                reps[start : start + wc.shape[0]] = means(wc)
            for j, m in enumerate(models):
                lo, hi = percentile_ci(reps[:, j], ci) if n_boot else (math.nan, math.nan)
                rows.append(
                    LeaderboardRow(
                        m, src.name, metric, float(means.point[j]), lo, hi, int(means.n[j])
                    )
                )
    return Leaderboard(tuple(models), tuple(names), tuple(rows), n_boot, seed, ci, human_success)


@dataclass(frozen=True)
class CoverageRow:
    """Score availability of one group, in % of its videos (Table 10)."""

    group: str
    n_videos: int
    task: float
    physics: float
    unattempted: float
    final: float
    window_coverage: float  # mean per-video share of physics windows scored; NaN if not given

    def as_dict(self) -> dict[str, str | float | int]:
        """The row as a flat dict."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class CoverageTable:
    """Coverage per group plus an ``Overall`` row."""

    rows: tuple[CoverageRow, ...]

    def to_rows(self) -> list[dict[str, str | float | int]]:
        """Rows as dicts."""
        return [r.as_dict() for r in self.rows]

    def markdown(self, digits: int = 1) -> str:
        """Table 10 as Markdown: Group | Task | Physics | Unattempted (S = 0) | Final."""
        lines = [
            "| Group | Task | Physics | Unattempted (S = 0) | Final | Window coverage |",
            "|---|---|---|---|---|---|",
        ]
        for r in self.rows:
            vals = [r.task, r.physics, r.unattempted, r.final, r.window_coverage]
            cells = ["–" if math.isnan(v) else f"{v:.{digits}f}" for v in vals]
            lines.append(f"| {r.group} | " + " | ".join(cells) + " |")
        return "\n".join(lines)


def coverage_table(
    scores: Evaluator,
    groups: Sequence[str] | np.ndarray,
    *,
    attempted: Sequence[bool] | BoolArray | None = None,
    window_coverage: Sequence[float] | FloatArray | None = None,
    order: Sequence[str] | None = None,
) -> CoverageTable:
    """Per-group % of videos with Task, Physics and Final available and % unattempted.

    Args:
        scores: Per-video scores (an evaluator, or the consensus via ``consensus_evaluator``).
        groups: (V,) group of each video, usually its model.
        attempted: (V,) whether the rollout attempted any subgoal. Without it a video counts as
            unattempted when its Task is exactly 0 — by the rubric T = 0 means every subgoal
            failed T1, i.e. nothing was attempted (those videos score S = 0).
        window_coverage: (V,) share of a video's physics windows scored numerically (NaN if
            unknown); its per-group mean, as a %, fills the last column.
        order: Group order (default: first appearance).

    Returns:
        The table, one row per group and an ``Overall`` row last.
    """
    g = np.asarray(groups).astype(str)
    v = g.size
    if scores.task.shape != (v,):
        raise ValueError(f"{scores.task.shape[0]} scores for {v} group labels")
    unatt = ~np.asarray(attempted, dtype=bool) if attempted is not None else scores.task == 0
    cov = (
        np.full(v, math.nan) if window_coverage is None else np.asarray(window_coverage, np.float64)
    )
    names = list(order) if order is not None else list(dict.fromkeys(g.tolist()))

    def row(name: str, sel: BoolArray) -> CoverageRow:
        n = int(sel.sum())

        def pct(a: BoolArray) -> float:
            return 100.0 * float(a[sel].mean()) if n else math.nan

        c = cov[sel]
        c = c[np.isfinite(c)]
        return CoverageRow(
            group=name,
            n_videos=n,
            task=pct(np.isfinite(scores.task)),
            physics=pct(np.isfinite(scores.physics)),
            unattempted=pct(unatt),
            final=pct(np.isfinite(scores.final)),
            window_coverage=100.0 * float(c.mean()) if c.size else math.nan,
        )

    rows = [row(n, g == n) for n in names]
    rows.append(row("Overall", np.ones(v, dtype=bool)))
    return CoverageTable(tuple(rows))
