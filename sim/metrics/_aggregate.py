"""Run-level values, their mean ± SD over runs, and cross-environment averages (spec §4).

Every metric is computed per run (a run covers all episodes of a benchmark slice); the runs are
then averaged with equal weight and spread is the **population** SD (Tabs. 7–9 of the paper).
Cross-environment averages give each environment equal weight, whatever its episode count.

Values are fractions in [0, 1]; tables multiply by 100 when they show percentages.

A ratio whose denominator is 0 in a run (no triggered error, no graded question) is ``None``,
never 0: "nothing to score" must not read as "all failed". ``None`` runs are left out of the mean
and the SD, and :attr:`Summary.runs` still lists them so a table can say why a cell is short.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sim.metrics._errors import MetricsError


@dataclass(frozen=True)
class RunValue:
    """One metric in one run.

    Attributes:
        value: the run's value as a fraction, or ``None`` when its denominator is 0.
        n: the denominator: items scored (triggered errors, graded questions, rounds …).
        episodes: ids of the episodes that put at least one item into the denominator, in first
            appearance order, for drill-down from a table cell to its episodes.
    """

    value: float | None
    n: int
    episodes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Summary:
    """A metric over runs: ``mean`` and population ``sd`` of the non-``None`` run values.

    ``mean`` and ``sd`` are ``None`` when no run has a value; ``sd`` is 0.0 for a single run.
    """

    mean: float | None
    sd: float | None
    runs: tuple[RunValue, ...]

    @property
    def episodes(self) -> tuple[str, ...]:
        """Every episode behind the summary, over all runs, once each."""
        return _unique(e for run in self.runs for e in run.episodes)


@dataclass(frozen=True)
class EnvironmentAverage:
    """An equal-weight mean of per-environment means; ``environments`` are those it used."""

    mean: float | None
    environments: tuple[str, ...]


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def ratio(numerator: int, denominator: int, episodes: Iterable[str] = ()) -> RunValue:
    """``numerator / denominator`` as a :class:`RunValue`; ``None`` when the denominator is 0."""
    if denominator < 0 or numerator < 0 or numerator > denominator:
        raise MetricsError(
            f"ratio needs 0 ≤ numerator ≤ denominator, not {numerator}/{denominator}"
        )
    value = None if denominator == 0 else numerator / denominator
    return RunValue(value, denominator, _unique(episodes))


def pooled_mean(scores: Iterable[tuple[str, float | None]]) -> RunValue:
    """The mean of every non-``None`` score in a run, pooled across its episodes.

    ``scores`` are ``(episode_id, score)`` pairs; ``None`` marks an excluded item (an untriggered
    question, a round no judge could score). Pooling means an episode with many items weighs
    more than one with few: mean = Σ s / |{s ≠ None}|, not a mean of episode means.
    """
    total, n, episodes = 0.0, 0, []
    for episode, score in scores:
        if score is None:
            continue
        if not 0.0 <= score <= 1.0:
            raise MetricsError(f"score of episode {episode!r} must be in [0, 1], not {score!r}")
        total += score
        n += 1
        episodes.append(episode)
    return RunValue(total / n if n else None, n, _unique(episodes))


def summarize(runs: Sequence[RunValue]) -> Summary:
    """Mean and population SD over runs, each run weighing the same.

    mean = (1/K) Σ_k v_k and sd = √((1/K) Σ_k (v_k − mean)²), over the K runs whose value is not
    ``None``.
    """
    values = [run.value for run in runs if run.value is not None]
    if not values:
        return Summary(None, None, tuple(runs))
    mean = math.fsum(values) / len(values)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))
    return Summary(mean, sd, tuple(runs))


def across_environments(summaries: Mapping[str, Summary]) -> EnvironmentAverage:
    """(1/|E|) Σ_e mean_e over the environments whose mean is not ``None``."""
    used = [(env, s.mean) for env, s in summaries.items() if s.mean is not None]
    if not used:
        return EnvironmentAverage(None, ())
    means = [m for _, m in used if m is not None]
    return EnvironmentAverage(math.fsum(means) / len(means), tuple(env for env, _ in used))
