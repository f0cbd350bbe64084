"""Comparing configurations: fractional tie ranks and paired bootstrap intervals (spec C.4.6).

Ranks reproduce W2W's "Avg. rank" (rank per task column, ties averaged, overall = mean of the
per-task ranks). The bootstrap follows the Ego2World planner comparison: resample the *shared*
task ids, percentile intervals, Bonferroni-adjusted for the number of pairs compared, and any
pair whose interval contains 0 stays a tie — it is never collapsed into a winner.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


def average_ranks(scores: Sequence[float]) -> list[float]:
    """Rank 1 for the highest score; tied scores share the mean of the ranks they span."""
    if any(math.isnan(s) for s in scores):
        raise ValueError("cannot rank NaN scores")
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    ranks = [0.0] * len(scores)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and scores[order[end + 1]] == scores[order[start]]:
            end += 1
        for k in range(start, end + 1):
            ranks[order[k]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def overall_ranks(table: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Mean per-task rank of each configuration; ``table`` is task → configuration → score.

    Each task ranks the configurations that have a score for it; a configuration's overall is
    the mean over the tasks it appears in (W2W: *not* the mean of category ranks).
    """
    sums: dict[str, list[float]] = {}
    for scores in table.values():
        names = sorted(scores)
        for name, rank in zip(names, average_ranks([scores[n] for n in names]), strict=True):
            sums.setdefault(name, []).append(rank)
    return {name: sum(r) / len(r) for name, r in sorted(sums.items())}


@dataclass(frozen=True)
class PairedResult:
    """Mean of a − b over shared tasks, its simultaneous interval, and whether it is a tie."""

    mean_diff: float
    low: float
    high: float
    n_tasks: int
    level: float  # the simultaneous coverage, 1 − alpha
    tie: bool


def paired_bootstrap(
    a: Mapping[str, float],
    b: Mapping[str, float],
    *,
    n: int = 10_000,
    seed: int = 0,
    alpha: float = 0.05,
    n_pairs: int = 1,
    clusters: Mapping[str, str] | None = None,
) -> PairedResult:
    """Percentile bootstrap of the mean paired difference over the task ids both results share.

    The interval is Bonferroni-simultaneous over ``n_pairs`` comparisons (each pair gets
    alpha / n_pairs). With ``clusters`` (task id → episode id) whole episodes are resampled, for
    tasks that share a world. Differences are rounded to 12 decimals so float noise in inputs
    (0.3 − 0.2) cannot break the degenerate cases: identical results give exactly [0, 0], a
    constant difference exactly [d, d]. Deterministic for a given seed.
    """
    shared = sorted(set(a) & set(b))
    if not shared:
        raise ValueError("no shared task ids to compare")
    if not 0 < alpha < 1 or n_pairs < 1 or n < 1:
        raise ValueError("need 0 < alpha < 1, n_pairs >= 1, n >= 1")
    diffs = np.round(np.array([a[t] - b[t] for t in shared], dtype=float), 12)
    mean = float(diffs.mean())
    tail = alpha / n_pairs / 2
    if np.ptp(diffs) == 0:
        low = high = float(diffs[0])
    else:
        means = _resampled_means(diffs, shared, n, seed, clusters)
        low, high = (float(v) for v in np.quantile(means, [tail, 1 - tail]))
    return PairedResult(mean, low, high, len(shared), 1 - alpha, low <= 0.0 <= high)


def _resampled_means(
    diffs: np.ndarray,
    tasks: Sequence[str],
    n: int,
    seed: int,
    clusters: Mapping[str, str] | None,
) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if clusters is None:
        idx = rng.integers(0, len(diffs), size=(n, len(diffs)))
        return np.asarray(diffs[idx].mean(axis=1))
    missing = [t for t in tasks if t not in clusters]
    if missing:
        raise ValueError(f"no cluster (episode) for task {missing[0]!r}")
    names = {c: i for i, c in enumerate(sorted({clusters[t] for t in tasks}))}
    member = np.array([names[clusters[t]] for t in tasks])
    sums = np.bincount(member, weights=diffs, minlength=len(names))
    sizes = np.bincount(member, minlength=len(names)).astype(float)
    pick = rng.integers(0, len(names), size=(n, len(names)))
    return np.asarray(sums[pick].sum(axis=1) / sizes[pick].sum(axis=1))


def compare_all(
    results: Mapping[str, Mapping[str, float]],
    *,
    n: int = 10_000,
    seed: int = 0,
    alpha: float = 0.05,
    clusters: Mapping[str, str] | None = None,
) -> dict[tuple[str, str], PairedResult]:
    """Every pair of configurations (sorted names), with intervals simultaneous over all pairs."""
    pairs = list(itertools.combinations(sorted(results), 2))
    return {
        (x, y): paired_bootstrap(
            results[x],
            results[y],
            n=n,
            seed=seed,
            alpha=alpha,
            n_pairs=len(pairs),
            clusters=clusters,
        )
        for x, y in pairs
    }
