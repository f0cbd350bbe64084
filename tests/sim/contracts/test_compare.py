"""Ranks with fractional ties (C.6.14, W2W Table 1) and the paired bootstrap (C.6.17)."""

from __future__ import annotations

import pytest

from sim.contracts import average_ranks, compare_all, overall_ranks, paired_bootstrap


@pytest.mark.parametrize(
    ("scores", "ranks"),
    [
        ([90, 80, 80, 70], [1, 2.5, 2.5, 4]),
        ([70, 80, 90], [3, 2, 1]),
        ([5, 5, 5], [2, 2, 2]),
        ([1.0], [1]),
        ([], []),
    ],
)
def test_c614_average_ranks(scores: list[float], ranks: list[float]) -> None:
    assert average_ranks(scores) == ranks


def test_c614_nan_cannot_be_ranked() -> None:
    with pytest.raises(ValueError, match="NaN"):
        average_ranks([1.0, float("nan")])


def test_c614_overall_is_the_mean_of_per_task_ranks() -> None:
    table = {"t1": {"a": 90, "b": 80, "c": 80}, "t2": {"a": 10, "b": 20, "c": 30}}
    assert overall_ranks(table) == {"a": 2.0, "b": 2.25, "c": 1.75}


# W2W Table 1: 12 configurations × 11 task columns, and the printed overall average rank.
CONFIGS = [
    "codex-sol", "codex-luna", "codex-terra", "codex-astra", "cc-opus", "pi-opus",
    "pi-sol", "pi-astra", "hermes-opus", "hermes-sol", "factory-opus", "factory-sol",
]  # fmt: skip
COLUMNS: dict[str, list[float]] = {
    "doccap": [95, 95, 95, 90, 95, 95, 95, 85, 95, 90, 90, 85],
    "scan": [60.45, 62.94, 62.49, 62.68, 63.11, 63.21, 62.26, 77.91, 63.44, 61.91, 63.02, 62.07],
    "objrec": [40, 45, 60, 80, 55, 55, 50, 75, 50, 35, 50, 55],
    "mpqa": [64.38, 52.81, 60.31, 67.19, 72.19, 70.72, 65.63, 70.00, 64.69, 64.69, 69.23, 72.81],
    "health": [53.33, 50.00, 56.67, 44.83, 63.33, 55.56, 58.62, 60.00, 63.33, 48.28, 73.33, 60.00],
    "simuhome": [
        95.15,
        89.06,
        91.92,
        92.40,
        93.61,
        91.15,
        92.81,
        99.05,
        75.43,
        67.30,
        45.08,
        60.51,
    ],
    # 3D Video: CC×opus's 30.00 was tie-broken above the other two 30.00 on unrounded scores
    "video": [60, 15, 30, 55, 30.001, 10, 60, 70, 30, 60, 35, 40],
    "lego": [10, 0, 0, 50, 25, 0, 12.5, 10, 0, 0, 0, 11.11],
    "autobio": [76.45, 71.43, 70.94, 73.80, 72.30, 82.18, 81.43, 58.97, 77.86, 85.21, 69.43, 67.96],
    "funclego": [40, 10, 0, 80, 50, 70, 40, 80, 40, 80, 70, 20],
    "tabletop": [45, 34, 36.78, 45, 46.33, 36.67, 20.56, 21.89, 39.22, 42.22, 38, 19.11],
}
PRINTED_OVERALL = [6.55, 8.95, 7.82, 5.14, 4.05, 6.00, 6.00, 4.95, 6.36, 7.36, 7.00, 7.82]


def test_c614_reproduces_w2w_table1_overall_ranks() -> None:
    table = {col: dict(zip(CONFIGS, vals, strict=True)) for col, vals in COLUMNS.items()}
    overall = overall_ranks(table)
    for name, printed in zip(CONFIGS, PRINTED_OVERALL, strict=True):
        assert overall[name] == pytest.approx(printed, abs=0.01), name
    assert min(overall, key=overall.__getitem__) == "cc-opus"


def test_c614_w2w_video_column_ranks() -> None:
    ranks = dict(zip(CONFIGS, average_ranks(COLUMNS["video"]), strict=True))
    assert (ranks["cc-opus"], ranks["codex-terra"], ranks["hermes-opus"]) == (8, 9.5, 9.5)


TASKS = [f"t{i:03d}" for i in range(40)]


def test_c617_identical_results_give_exactly_zero_and_a_tie() -> None:
    scores = {t: (i % 7) / 7 for i, t in enumerate(TASKS)}
    res = paired_bootstrap(scores, dict(scores), n=2000, seed=1)
    assert (res.low, res.high, res.mean_diff) == (0.0, 0.0, 0.0)
    assert res.tie


def test_c617_constant_difference_gives_exactly_that_interval() -> None:
    b = {t: (i % 9) / 10 for i, t in enumerate(TASKS)}
    a = {t: v + 0.1 for t, v in b.items()}
    res = paired_bootstrap(a, b, n=2000, seed=1)
    assert (res.low, res.high) == (0.1, 0.1)
    assert not res.tie


def test_c617_reproducible_for_a_seed_and_only_shared_tasks_count() -> None:
    a = {t: (i * 37 % 11) / 10 for i, t in enumerate(TASKS)}
    b = {t: (i * 13 % 7) / 6 for i, t in enumerate(TASKS)}
    b_extra = {**b, "only_b": 100.0}
    first = paired_bootstrap(a, b_extra, n=3000, seed=7)
    assert first == paired_bootstrap(a, b, n=3000, seed=7)
    assert first.n_tasks == len(TASKS)
    assert first.low <= first.mean_diff <= first.high


def test_c617_bonferroni_widens_the_interval() -> None:
    a = {t: (i * 37 % 11) / 10 for i, t in enumerate(TASKS)}
    b = {t: (i * 13 % 7) / 6 for i, t in enumerate(TASKS)}
    one = paired_bootstrap(a, b, n=3000, seed=3)
    many = paired_bootstrap(a, b, n=3000, seed=3, n_pairs=15)
    assert many.low <= one.low and many.high >= one.high
    assert (many.high - many.low) > (one.high - one.low)


def test_c617_clear_difference_is_not_a_tie_and_noise_is() -> None:
    b = {t: 0.2 + (i % 5) / 50 for i, t in enumerate(TASKS)}
    better = {t: v + 0.3 + (i % 3) / 100 for i, (t, v) in enumerate(b.items())}
    noisy = {t: v + (0.05 if i % 2 else -0.05) for i, (t, v) in enumerate(b.items())}
    assert not paired_bootstrap(better, b, n=2000).tie
    assert paired_bootstrap(noisy, b, n=2000).tie


def test_episode_cluster_resampling() -> None:
    a = {t: (i * 37 % 11) / 10 for i, t in enumerate(TASKS)}
    b = {t: (i * 13 % 7) / 6 for i, t in enumerate(TASKS)}
    clusters = {t: f"ep{i // 5}" for i, t in enumerate(TASKS)}
    res = paired_bootstrap(a, b, n=2000, seed=2, clusters=clusters)
    assert res.low <= res.mean_diff <= res.high
    with pytest.raises(ValueError, match="no cluster"):
        paired_bootstrap(a, b, clusters={})


def test_compare_all_is_simultaneous_over_every_pair() -> None:
    base = {t: (i % 4) / 4 for i, t in enumerate(TASKS)}
    results = {"x": base, "y": dict(base), "z": {t: v + 0.1 for t, v in base.items()}}
    out = compare_all(results, n=500)
    assert list(out) == [("x", "y"), ("x", "z"), ("y", "z")]
    assert out[("x", "y")].tie
    assert (out[("x", "z")].low, out[("x", "z")].high) == (-0.1, -0.1)
