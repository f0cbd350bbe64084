"""Run-level aggregation (IVG spec §4): equal-weight means, population SD, None runs, drill-down."""

from __future__ import annotations

import statistics

import pytest

from sim.metrics import (
    MetricsError,
    RunValue,
    across_environments,
    pooled_mean,
    ratio,
    summarize,
)


def test_runs_weigh_the_same_and_the_sd_is_the_population_sd() -> None:
    runs = [ratio(1, 2, ["a"]), ratio(30, 40, ["b", "c"]), ratio(1, 1, ["d"])]
    summary = summarize(runs)
    values = [0.5, 0.75, 1.0]
    assert summary.mean == pytest.approx(0.75)  # not the pooled 32/43
    assert summary.sd == pytest.approx(statistics.pstdev(values))
    assert summary.sd != pytest.approx(statistics.stdev(values))
    assert summary.episodes == ("a", "b", "c", "d")


def test_a_zero_denominator_is_none_and_left_out_of_the_mean() -> None:
    empty = ratio(0, 0)
    assert empty == RunValue(None, 0, ())
    summary = summarize([ratio(1, 2), empty])
    assert (summary.mean, summary.sd) == (0.5, 0.0)
    assert summary.runs[1] is empty
    assert summarize([empty]).mean is None


def test_pooled_mean_skips_excluded_items() -> None:
    value = pooled_mean([("a", 1.0), ("a", None), ("b", 0.5), ("c", None)])
    assert value == RunValue(0.75, 2, ("a", "b"))
    with pytest.raises(MetricsError, match="score"):
        pooled_mean([("a", 1.5)])


def test_environments_weigh_the_same() -> None:
    cook = summarize([RunValue(0.2, 100), RunValue(0.4, 100)])
    house = summarize([RunValue(0.9, 5)])
    screen = summarize([RunValue(None, 0)])
    average = across_environments({"cook": cook, "house": house, "screen": screen})
    assert average.mean == pytest.approx((0.3 + 0.9) / 2)
    assert average.environments == ("cook", "house")


def test_a_ratio_must_be_a_fraction() -> None:
    with pytest.raises(MetricsError, match="numerator"):
        ratio(3, 2)
