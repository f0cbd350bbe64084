"""Case bootstrap: seeded draws, and every vectorised replicate equals the explicit resample."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from scipy import stats

from annotation import CaseBootstrap, agreement_table, icc_oneway, percentile_ci, rating_matrix
from annotation._bootstrap import (
    AlphaData,
    CategoryMeans,
    Weights,
    w_bias,
    w_ccc,
    w_mae,
    w_mean,
    w_pearson,
    w_rmse,
)
from annotation._bootstrap_ranks import KendallPlan, SpearmanPlan
from annotation._reml import fit_one_way, icc_from_fit, one_way_data
from tests.annotation.test_agreement_helpers import random_panel

TOL = 1e-9


def test_draws_are_reproducible_from_the_seed() -> None:
    cases = np.repeat([f"c{i}" for i in range(7)], 3)
    a = CaseBootstrap.draw(cases, 50, seed=11)
    b = CaseBootstrap.draw(cases, 50, seed=11)
    c = CaseBootstrap.draw(cases, 50, seed=12)
    assert np.array_equal(a.draws, b.draws) and not np.array_equal(a.draws, c.draws)
    assert a.draws.shape == (50, 7) and a.n_boot == 50 and a.n_cases == 7
    # Weights are the multiplicities of the explicit resample, whole cases at a time.
    w = a.video_weights()
    for r in range(5):
        counts = np.bincount(a.expand(r), minlength=cases.size)
        assert np.array_equal(w[r], counts)
        assert counts.sum() == cases.size
    assert CaseBootstrap.draw(cases, 0).n_boot == 0


def test_percentile_ci_skips_undefined_replicates() -> None:
    reps = np.array([*range(101), math.nan], dtype=float)
    assert percentile_ci(reps) == pytest.approx((2.5, 97.5))
    assert all(math.isnan(v) for v in percentile_ci(np.array([math.nan])))


def _expanded_pairs(seed: int) -> tuple[CaseBootstrap, np.ndarray, np.ndarray, np.ndarray]:
    """Pairs of 60 observations in 12 cases, tied values, and a bootstrap over the cases."""
    rng = np.random.default_rng(seed)
    case = np.sort(rng.integers(0, 12, 60))
    x = np.round(rng.uniform(0, 100, 60) / 12.5) * 12.5
    y = np.round(np.clip(x + rng.normal(0, 20, 60), 0, 100) / 10) * 10
    return CaseBootstrap.draw(case.astype(str), 40, seed), case, x, y


@pytest.mark.parametrize("seed", range(3))
def test_pair_statistics_equal_scipy_on_the_expanded_resample(seed: int) -> None:
    boot, _, x, y = _expanded_pairs(seed)
    wc = boot.case_counts()
    grouped = Weights(wc, boot.case_index)
    plain = Weights(boot.video_weights())  # the same weights, one group per observation
    kendall = KendallPlan(x, y, boot.case_index, boot.n_cases)
    spear = SpearmanPlan(x, y)
    got = {
        "r": w_pearson(grouped, x, y),
        "tau_b": kendall(grouped),
        "tau_b_plain": KendallPlan(x, y)(plain),
        "rho": spear(grouped),
        "ccc": w_ccc(grouped, x, y),
        "mae": w_mae(grouped, x, y),
        "rmse": w_rmse(grouped, x, y),
        "bias": w_bias(grouped, x, y),
        "mean": w_mean(plain, x),
    }
    for b in range(8):
        idx = boot.expand(b)
        a, c = x[idx], y[idx]
        want = {
            "r": stats.pearsonr(a, c).statistic,
            "tau_b": stats.kendalltau(a, c).statistic,
            "tau_b_plain": stats.kendalltau(a, c).statistic,
            "rho": stats.spearmanr(a, c).statistic,
            "ccc": 2
            * np.mean((a - a.mean()) * (c - c.mean()))
            / (a.var() + c.var() + (a.mean() - c.mean()) ** 2),
            "mae": np.mean(np.abs(a - c)),
            "rmse": np.sqrt(np.mean((a - c) ** 2)),
            "bias": np.mean(a - c),
            "mean": a.mean(),
        }
        for k, v in want.items():
            assert got[k][b] == pytest.approx(v, abs=TOL), (k, b)


def test_kendall_counts_a_video_and_its_copy_as_a_double_tie() -> None:
    x = np.array([1.0, 2.0, 3.0, 3.0])
    y = np.array([2.0, 1.0, 3.0, 4.0])
    w = np.array([[3.0, 1.0, 2.0, 1.0], [1.0, 1.0, 1.0, 1.0], [2.0, 0.0, 0.0, 2.0]])
    got = KendallPlan(x, y)(Weights(w))
    for b in range(3):
        idx = np.repeat(np.arange(4), w[b].astype(int))
        assert got[b] == pytest.approx(stats.kendalltau(x[idx], y[idx]).statistic, abs=1e-12)


def test_masks_and_constant_resamples() -> None:
    x = np.array([1.0, 1.0, 2.0, 3.0])
    y = np.array([5.0, 6.0, 7.0, 9.0])
    w = Weights(np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 2.0, 1.0, 1.0]]))
    r = w_pearson(w, x, y)
    assert math.isnan(r[0])  # only x = 1 drawn: constant, undefined like scipy
    assert r[1] == pytest.approx(stats.pearsonr([1, 1, 2, 3], [6, 6, 7, 9]).statistic)
    masked = w_pearson(w, x, y, np.array([False, True, True, True]))
    assert masked[1] == pytest.approx(r[1])
    assert math.isnan(KendallPlan(x, y)(w)[0])


@pytest.mark.parametrize("seed", range(3))
def test_icc_and_alpha_replicates_equal_the_expanded_resample(seed: int) -> None:
    panel, _ = random_panel(seed)
    boot = CaseBootstrap.draw(panel.case_ids, 30, seed)
    wc = boot.case_counts()
    for axis in ("task", "physics", "final"):
        a = rating_matrix(panel, axis)
        data = one_way_data(a)
        fit = fit_one_way(data, wc[:, boot.case_index[data.rows]])
        single, avg = icc_from_fit(fit)
        alpha = AlphaData.of(a)
        alphas = alpha.alpha(Weights(wc, boot.case_index[alpha.rows]))
        for b in range(6):
            ex = a[boot.expand(b)]
            ref = icc_oneway(ex)
            assert avg[b] == pytest.approx(ref.icc_avg, abs=TOL)
            assert single[b] == pytest.approx(ref.icc_single, abs=TOL)
            k_alpha = krippendorff.alpha(reliability_data=ex.T, level_of_measurement="interval")
            assert alphas[b] == pytest.approx(k_alpha, abs=TOL)


def test_category_means_equal_the_expanded_resample() -> None:
    panel, ev = random_panel(4)
    models = sorted(set(panel.models))
    cat = np.array([models.index(m) for m in panel.models])
    boot = CaseBootstrap.draw(panel.case_ids, 10, 0)
    means = CategoryMeans(ev.physics, cat, len(models), boot.case_index, boot.n_cases)
    reps = means(boot.case_counts())
    for b in range(5):
        idx = boot.expand(b)
        for j, m in enumerate(models):
            sel = idx[panel.models[idx] == m]
            assert reps[b, j] == pytest.approx(np.nanmean(ev.physics[sel]), abs=TOL)


@pytest.mark.parametrize("seed", [0, 5])
def test_table_replicates_equal_the_table_of_the_expanded_panel(seed: int) -> None:
    """End to end: replicate b of every figure = the figure computed on resample b itself."""
    panel, ev = random_panel(seed)
    tab = agreement_table(panel, [ev], n_boot=12, seed=seed, keep_replicates=True, chunk=5)
    assert tab.replicates is not None
    boot = CaseBootstrap.draw(panel.case_ids, 12, seed)
    for b in (0, 7, 11):
        idx = boot.expand(b)
        ex = agreement_table(panel.take(idx), [ev.take(idx)], n_boot=0)
        assert len(ex.rows) == len(tab.rows)
        for i, row in enumerate(ex.rows):
            rep = tab.replicates[i, b]
            assert tab.rows[i].metric == row.metric and tab.rows[i].group == row.group
            if math.isnan(row.estimate):
                assert math.isnan(rep), row
            else:
                assert rep == pytest.approx(row.estimate, abs=TOL), row


def test_table_is_reproducible_and_intervals_contain_the_estimate() -> None:
    panel, ev = random_panel(6, n_cases=10)
    a = agreement_table(panel, [ev], n_boot=300, seed=3)
    b = agreement_table(panel, [ev], n_boot=300, seed=3, chunk=64)
    assert a == b  # same seed, any chunking: identical intervals
    for r in a.rows:
        if r.group in ("human-human", "alignment") and r.metric != "bias":
            assert r.ci_low <= r.estimate <= r.ci_high, r
