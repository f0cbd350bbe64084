"""Agreement statistics: spec §5.3 worked examples, consensus cases, independent references."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings

import krippendorff
import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats

from annotation import (
    Evaluator,
    Panel,
    agreement_table,
    bias,
    ccc,
    consensus,
    final_from_axes,
    geometric_final,
    human_reference,
    icc_avg_oneway,
    icc_oneway,
    kendall_tau_b,
    krippendorff_alpha_interval,
    loo_pairs,
    mae,
    paired_difference,
    panel_consensus,
    pearson,
    rating_matrix,
    rmse,
    spearman,
)
from annotation._bootstrap import AlphaData, Weights
from tests.annotation.test_agreement_helpers import balanced_ratings, random_panel

SPEC_RATINGS = np.array([[1.0, 2.0], [3.0, 3.0], [5.0, 4.0]])


# --- spec ego2act.md §5.3 worked examples -------------------------------------------------------


def test_spec_icc_example() -> None:
    got = icc_oneway(SPEC_RATINGS)
    assert got.icc_avg == pytest.approx(0.9259, abs=5e-5)
    assert got.icc_single == pytest.approx(0.8621, abs=5e-5)
    # ANOVA: MSB = 4.5, MSW = 1/3; REML equals it for balanced data with positive variance.
    assert got.icc_avg == pytest.approx((4.5 - 1 / 3) / 4.5, abs=1e-12)
    assert got.sigma_e2 == pytest.approx(1 / 3, abs=1e-12)
    assert got.sigma_b2 == pytest.approx((4.5 - 1 / 3) / 2, abs=1e-12)
    assert (got.k, got.n_videos, got.n_ratings) == (2.0, 3, 6)
    assert icc_avg_oneway(SPEC_RATINGS) == got.icc_avg


def test_spec_alpha_example() -> None:
    assert krippendorff_alpha_interval(SPEC_RATINGS) == pytest.approx(0.8333, abs=5e-5)
    # D_o = 0.6667, D_e = 4.0 → α = 1 − D_o/D_e, also through the vectorised closed form.
    alpha = AlphaData.of(SPEC_RATINGS).alpha(Weights(np.ones((1, 3))))
    assert alpha[0] == pytest.approx(1 - (2 / 3) / 4.0, abs=1e-12)


def test_spec_pair_metrics_example() -> None:
    x, y = [10, 20, 30, 40], [15, 25, 30, 50]
    assert pearson(x, y) == pytest.approx(0.9648, abs=5e-5)
    assert ccc(x, y) == pytest.approx(0.88, abs=1e-12)
    assert mae(x, y) == pytest.approx(5.0)
    assert rmse(x, y) == pytest.approx(6.1237, abs=5e-5)
    assert bias(x, y) == pytest.approx(-5.0)
    assert kendall_tau_b(x, y) == pytest.approx(1.0)
    assert spearman(x, y) == pytest.approx(1.0)


def test_pairs_with_nan_are_ignored_and_undefined_is_nan() -> None:
    x = [10, 20, math.nan, 30, 40, 7]
    y = [15, 25, 99, 30, 50, math.nan]
    assert pearson(x, y) == pytest.approx(0.9648, abs=5e-5)
    assert mae(x, y) == 5.0
    assert math.isnan(pearson([1, 1, 1], [1, 2, 3]))  # constant variable
    assert math.isnan(kendall_tau_b([1], [2]))
    assert math.isnan(mae([math.nan], [1]))
    assert math.isnan(icc_avg_oneway([[1.0, math.nan], [2.0, math.nan]]))  # nobody has 2 ratings


# --- consensus (spec §3.2, §3.3 cases 16/17) ------------------------------------------------------


def _panel_native(task: list[list[float]], physics: list[list[float]], roles: list[str]) -> Panel:
    n = len(task)
    return Panel.from_native(
        [f"v{i}" for i in range(n)], ["c"] * n, ["m"] * n, roles, task, physics
    )


def test_consensus_cases_16_and_17() -> None:
    nan = math.nan
    p = _panel_native(
        [[2.0, 3.0, 2.5], [0.0, 0.0, nan]],
        [[4.0, nan, 3.0], [nan, nan, nan]],
        ["generated", "generated"],
    )
    c = panel_consensus(p)
    assert c["task"][0] == pytest.approx(83.333, abs=5e-4)
    assert c["physics"][0] == pytest.approx(87.5)
    assert c["final"][0] == pytest.approx(85.391, abs=5e-4)
    assert c["task"][1] == 0 and math.isnan(c["physics"][1]) and c["final"][1] == 0
    # Same figures as the scalar consensus of the scoring library.
    one = consensus([2.0, 3.0, 2.5], [4, None, 3])
    assert (c["task"][0], c["physics"][0], c["final"][0]) == pytest.approx(
        (one.t100, one.p100, one.s)
    )


def test_human_success_rule() -> None:
    nan = math.nan
    p = _panel_native([[1.0, 2.0], [nan, nan]], [[2.0, 2.0], [nan, nan]], ["human-success"] * 2)
    rated = panel_consensus(p, human_success="rated")
    top = panel_consensus(p, human_success="max")
    assert rated["task"][0] == pytest.approx(50.0) and math.isnan(rated["final"][1])
    assert all(top[a].tolist() == [100.0, 100.0] for a in ("task", "physics", "final"))
    with pytest.raises(ValueError):
        panel_consensus(p, human_success="best")  # type: ignore[arg-type]


def test_final_from_axes_follows_geometric_final() -> None:
    vals = [0.0, 25.0, 100.0, math.nan]
    t, p = np.meshgrid(vals, vals)
    got = final_from_axes(t, p)
    for ti, pi, g in zip(t.ravel(), p.ravel(), got.ravel(), strict=True):
        want = geometric_final(None if math.isnan(ti) else ti, None if math.isnan(pi) else pi)
        assert (math.isnan(g) and want is None) or g == pytest.approx(want)


def test_panel_validation() -> None:
    with pytest.raises(ValueError, match="unique"):
        Panel(
            ("a", "a"),
            np.array(["c", "c"]),
            np.array(["m", "m"]),
            np.array(["generated"] * 2),
            np.zeros((2, 1)),
            np.zeros((2, 1)),
        )
    with pytest.raises(ValueError, match="roles"):
        Panel(
            ("a",),
            np.array(["c"]),
            np.array(["m"]),
            np.array(["robot"]),
            np.zeros((1, 1)),
            np.zeros((1, 1)),
        )
    with pytest.raises(ValueError, match="0–100"):
        Panel(
            ("a",),
            np.array(["c"]),
            np.array(["m"]),
            np.array(["generated"]),
            np.full((1, 1), 3.5e2),
            np.zeros((1, 1)),
        )


# --- independent references on random panels ---------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_icc_balanced_equals_pingouin_icc1k(seed: int) -> None:
    a = balanced_ratings(seed, n_videos=25 + seed, k=2 + seed % 3)
    long = pd.DataFrame(
        [(v, j, a[v, j]) for v in range(a.shape[0]) for j in range(a.shape[1])],
        columns=["video", "slot", "y"],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pingouin's own pandas deprecation warnings
        ref = pg.intraclass_corr(long, targets="video", raters="slot", ratings="y")
    ref = ref.set_index("Type")
    got = icc_oneway(a)
    assert got.icc_avg == pytest.approx(ref.loc["ICC(1,k)", "ICC"], abs=1e-9)
    assert got.icc_single == pytest.approx(ref.loc["ICC(1,1)", "ICC"], abs=1e-9)


def _mixedlm_reml(a: np.ndarray) -> tuple[float, float]:
    import statsmodels.formula.api as smf

    rows = [
        (v, a[v, j]) for v in range(a.shape[0]) for j in range(a.shape[1]) if np.isfinite(a[v, j])
    ]
    df = pd.DataFrame(rows, columns=["video", "y"])
    df = df[df.groupby("video")["y"].transform("size") >= 2]
    df["y"] -= df["y"].mean()  # the fit is location-invariant; centring helps the optimiser
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = smf.mixedlm("y ~ 1", df, groups=df["video"]).fit(
            reml=True, method=["bfgs"], gtol=1e-10, maxiter=2000
        )
    return float(fit.cov_re.iloc[0, 0]), float(fit.scale)


@pytest.mark.parametrize("seed", range(4))
def test_icc_unbalanced_matches_statsmodels_reml(seed: int) -> None:
    """Unbalanced ICC: REML components match statsmodels MixedLM; k = mean ratings per video."""
    rng = np.random.default_rng(100 + seed)
    a = balanced_ratings(seed, n_videos=40, k=3)
    a[rng.random(a.shape) < 0.3] = np.nan
    sb, se = _mixedlm_reml(a)
    got = icc_oneway(a)
    n = np.isfinite(a).sum(axis=1)
    assert got.k == pytest.approx(n[n >= 2].mean())
    assert got.sigma_b2 == pytest.approx(sb, rel=1e-6)
    assert got.sigma_e2 == pytest.approx(se, rel=1e-6)
    assert got.icc_avg == pytest.approx(sb / (sb + se / got.k), abs=1e-6)
    harmonic = icc_oneway(a, k="harmonic")
    assert harmonic.k == pytest.approx(1 / np.mean(1 / n[n >= 2]))


def test_icc_is_zero_not_negative_when_within_exceeds_between() -> None:
    a = np.array([[0.0, 100.0], [100.0, 0.0], [0.0, 100.0], [100.0, 0.0]])
    got = icc_oneway(a)
    assert got.icc_avg == 0.0 and got.sigma_b2 == 0.0


@pytest.mark.parametrize("seed", range(4))
def test_alpha_matches_krippendorff_package(seed: int) -> None:
    panel, _ = random_panel(seed)
    for axis in ("task", "physics", "final"):
        a = rating_matrix(panel, axis)
        ref = krippendorff.alpha(reliability_data=a.T, level_of_measurement="interval")
        assert krippendorff_alpha_interval(a) == pytest.approx(ref, abs=1e-9)
        fast = AlphaData.of(a)
        got = fast.alpha(Weights(np.ones((1, fast.rows.size))))[0]
        assert got == pytest.approx(ref, abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_pair_metrics_match_scipy_and_hand_formulas(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = np.round(rng.uniform(0, 100, 60) / 10) * 10  # ties on purpose
    y = np.clip(x + rng.normal(0, 15, 60), 0, 100)
    x[rng.random(60) < 0.1] = np.nan
    ok = np.isfinite(x) & np.isfinite(y)
    a, b = x[ok], y[ok]
    assert pearson(x, y) == pytest.approx(stats.pearsonr(a, b).statistic, abs=1e-9)
    assert kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(a, b).statistic, abs=1e-9)
    assert spearman(x, y) == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-9)
    ccc_ref = 2 * np.cov(a, b, bias=True)[0, 1] / (a.var() + b.var() + (a.mean() - b.mean()) ** 2)
    assert ccc(x, y) == pytest.approx(ccc_ref, abs=1e-9)
    assert mae(x, y) == pytest.approx(np.abs(a - b).mean(), abs=1e-9)
    assert rmse(x, y) == pytest.approx(np.sqrt(((a - b) ** 2).mean()), abs=1e-9)
    assert bias(x, y) == pytest.approx((a - b).mean(), abs=1e-9)


# --- human leave-one-out reference --------------------------------------------------------------


def test_loo_pairs_by_hand() -> None:
    nan = math.nan
    p = Panel(
        ("a", "b", "c"),
        np.array(["c1", "c1", "c2"]),
        np.array(["m", "m", "m"]),
        np.array(["generated"] * 3),
        np.array([[30.0, 60.0, 90.0], [50.0, nan, nan], [0.0, 0.0, nan]]),
        np.array([[40.0, nan, 100.0], [nan, nan, nan], [nan, nan, nan]]),
    )
    v, x, y = loo_pairs(p, "task")
    assert v.tolist() == [0, 0, 0, 2, 2]  # video b has one rating: not pairable
    assert x.tolist() == [30, 60, 90, 0, 0]
    assert y.tolist() == pytest.approx([75, 60, 45, 0, 0])
    v, x, y = loo_pairs(p, "final")
    # Slot finals of video a: G(30,40), G(60,–) missing, G(90,100); c: T = 0 → 0 for both.
    # The others' consensus takes their mean Task over every Task rating they gave (60 counts
    # although its own Final is missing): G(mean(60, 90), 100) and G(mean(30, 60), 40).
    assert v.tolist() == [0, 0, 2, 2]
    assert x.tolist() == pytest.approx([math.sqrt(1200), math.sqrt(9000), 0, 0])
    assert y.tolist() == pytest.approx([math.sqrt(7500), math.sqrt(1800), 0, 0])
    ref = human_reference(p, "task")
    assert ref["n"] == 5 and ref["bias"] == pytest.approx(0.0, abs=1e-12)
    assert ref["mae"] == pytest.approx((45 + 0 + 45) / 5)


def test_loo_final_others_mean_task_counts_raters_without_a_final() -> None:
    """Issue 9 item 13: T = 40, 80, 100 and P = 40, 80, N/A on one video. The third rater has
    no Final of their own (T > 0, Physics N/A) but their Task still enters the others' mean
    Task (spec §5.2/§5.3): others of rater 1 = G(90, 80), of rater 2 = G(70, 40)."""
    p = Panel(
        ("v",), np.array(["c"]), np.array(["m"]), np.array(["generated"]),
        np.array([[40.0, 80.0, 100.0]]), np.array([[40.0, 80.0, math.nan]]),
    )  # fmt: skip
    v, x, y = loo_pairs(p, "final")
    assert v.tolist() == [0, 0] and x.tolist() == pytest.approx([40.0, 80.0])
    assert y.tolist() == pytest.approx([math.sqrt(90 * 80), math.sqrt(70 * 40)])
    assert np.round(y, 2).tolist() == [84.85, 52.92]


def _panel(n: int, roles: str = "generated") -> Panel:
    rng = np.random.default_rng(n)
    return Panel(
        tuple(f"v{i}" for i in range(n)), np.array([f"c{i // 2}" for i in range(n)]),
        np.array([roles] * n), np.array([roles] * n),
        rng.uniform(0, 100, (n, 2)), rng.uniform(0, 100, (n, 2)),
    )  # fmt: skip


def test_agreement_table_on_an_empty_panel_is_an_explicit_empty_result() -> None:
    empty = _panel(0)
    for n_boot in (0, 50):
        tab = agreement_table(empty, [], n_boot=n_boot)
        assert tab.rows and all(r.n == 0 and math.isnan(r.estimate) for r in tab.rows)
        assert all(r.why_empty() for r in tab.rows)
    ev = Evaluator("j", np.zeros(0), np.zeros(0), np.zeros(0))
    tab = agreement_table(empty, [ev], n_boot=50)
    row = tab.get("alignment", "j", "task", "r")
    why = row.why_empty()
    assert row.n == 0 and why is not None and "both a human consensus and a score" in why


def test_agreement_table_on_human_recordings_only() -> None:
    panel = _panel(6, "human-success")
    ev = Evaluator("j", panel.task[:, 0], panel.physics[:, 0], final_from_axes(
        panel.task[:, 0], panel.physics[:, 0]))  # fmt: skip
    tab = agreement_table(panel, [ev], n_boot=50)
    assert not any(r.group.startswith("within-generator") for r in tab.rows)  # no generator
    assert math.isfinite(tab.get("alignment", "j", "final", "r").ci_low)


def test_empty_rows_say_why() -> None:
    one = _panel(1)
    tab = agreement_table(one, [], n_boot=0)
    icc = tab.get("human-human", "Human", "task", "icc_avg")
    assert icc.n == 1 and icc.why_empty() == "only 1 video with two or more ratings: needs 2"
    loo = tab.get("human-loo", "Human (leave-one-out)", "task", "mae")
    assert loo.why_empty() is None  # MAE is defined on two pairs


# --- the table ----------------------------------------------------------------------------------


def test_agreement_table_points_match_plain_functions() -> None:
    panel, ev = random_panel(1)
    tab = agreement_table(panel, [ev], n_boot=0)
    cons = panel_consensus(panel)
    for axis in ("task", "physics", "final"):
        a = rating_matrix(panel, axis)
        assert tab.get("human-human", "Human", axis, "icc_avg").estimate == icc_avg_oneway(a)
        assert tab.get(
            "human-human", "Human", axis, "alpha"
        ).estimate == krippendorff_alpha_interval(a)
        x, y = ev.axis(axis), cons[axis]
        row = tab.get("alignment", "Judge", axis, "r")
        assert row.estimate == pytest.approx(pearson(x, y), abs=1e-12)
        assert row.n == int((np.isfinite(x) & np.isfinite(y)).sum())
        assert tab.get("alignment", "Judge", axis, "bias").estimate == pytest.approx(bias(x, y))
        assert tab.get("human-loo", "Human (leave-one-out)", axis, "ccc").estimate == pytest.approx(
            human_reference(panel, axis)["ccc"]
        )
        assert math.isnan(row.ci_low)
    gen = panel.roles == "generated"
    models = list(dict.fromkeys(panel.models[gen]))
    h = [np.nanmean(cons["final"][gen & (panel.models == m)]) for m in models]
    e = [np.nanmean(ev.final[gen & (panel.models == m)]) for m in models]
    assert tab.get("ranking", "Judge", "final", "spearman").estimate == pytest.approx(
        stats.spearmanr(e, h).statistic
    )
    assert tab.get("ranking", "Judge", "final", "tau_b").estimate == pytest.approx(
        stats.kendalltau(e, h).statistic
    )
    sel = (panel.models == "Cosmos") & np.isfinite(ev.final) & np.isfinite(cons["final"])
    assert tab.get("within-generator:Cosmos", "Judge", "final", "r").estimate == pytest.approx(
        pearson(ev.final[sel], cons["final"][sel])
    )
    rest = ~(panel.models == "Cosmos")
    assert tab.get(
        "leave-one-generator-out:Cosmos", "Judge", "final", "r"
    ).estimate == pytest.approx(pearson(ev.final[rest], cons["final"][rest]))
    keys = {"group", "evaluator", "axis", "metric", "estimate", "ci_low", "ci_high", "n"}
    assert all(set(r) == keys for r in tab.to_rows())


def test_alignment_sample_and_human_success_options() -> None:
    panel, ev = random_panel(2)
    multi = agreement_table(panel, [ev], n_boot=0, sample="multi")
    full = agreement_table(panel, [ev], n_boot=0)
    n_multi = multi.get("alignment", "Judge", "task", "r").n
    assert n_multi == int(((np.isfinite(panel.task).sum(axis=1) >= 2) & np.isfinite(ev.task)).sum())
    assert n_multi < full.get("alignment", "Judge", "task", "r").n
    top = agreement_table(panel, [ev], n_boot=0, human_success="max")
    # Unrated Human (+) videos get a consensus under "max", so more videos enter alignment.
    assert (
        top.get("alignment", "Judge", "task", "mae").n
        >= full.get("alignment", "Judge", "task", "mae").n
    )
    assert top.get("human-human", "Human", "task", "icc_avg") == full.get(
        "human-human", "Human", "task", "icc_avg"
    )
    with pytest.raises(ValueError):
        agreement_table(panel, [ev], n_boot=0, sample="all")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        agreement_table(panel, [ev, ev], n_boot=0)  # duplicate names


def test_paired_difference() -> None:
    panel, ev = random_panel(3)
    shifted = Evaluator("Shifted", ev.task + 5.0, ev.physics, ev.final)
    d = paired_difference(panel, shifted, ev, "bias", "task", n_boot=200, seed=1)
    assert (
        d.delta == pytest.approx(5.0)
        and d.ci_low == pytest.approx(5.0)
        and d.ci_high == pytest.approx(5.0)
    )
    same = paired_difference(
        panel, ev, Evaluator("Copy", ev.task, ev.physics, ev.final), "r", "final", n_boot=100
    )
    assert same.delta == 0 and same.ci_low == 0 and same.ci_high == 0
    noisy = Evaluator(
        "Noisy",
        ev.task + np.random.default_rng(0).normal(0, 20, ev.task.size),
        ev.physics,
        ev.final,
    )
    d = paired_difference(panel, ev, noisy, "mae", "task", n_boot=300)
    assert d.delta < 0 and d.ci_low <= d.delta <= d.ci_high
    assert d.as_dict()["metric"] == "mae"


def test_import_annotation_does_not_load_heavy_statistics_packages() -> None:
    code = (
        "import sys, annotation; "
        "print(sorted(m for m in ('scipy', 'statsmodels', 'krippendorff', 'pandas', 'pingouin')"
        " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_disagreement_queue_orders_by_judge_gap_then_rater_spread() -> None:
    """Gap first (largest |judge − consensus| on Final), then the raters' Task spread; a video
    with neither figure (no judge score, one rating) is not in the queue."""
    from annotation import Evaluator, disagreement_queue

    nan = math.nan
    ids = ("a", "b", "c", "d", "e")
    panel = Panel(
        ids,
        np.array(["c1", "c1", "c2", "c2", "c3"]),
        np.array(["m"] * 5),
        np.array(["generated"] * 5),
        np.array([[100, 100], [100, 50], [80, nan], [0, 100], [50, 50]], dtype=float),
        np.array([[100, 100], [100, 100], [80, nan], [nan, 100], [50, 50]], dtype=float),
    )
    judge_final = np.array([40, nan, nan, nan, 60], dtype=float)
    judge = Evaluator("vlm", judge_final, judge_final, judge_final)
    queue = disagreement_queue(panel, judge)
    assert queue.evaluator == "vlm"
    assert [r.video_id for r in queue.rows] == ["a", "e", "d", "b"]  # c has neither figure
    by_id = {r.video_id: r for r in queue.rows}
    assert by_id["a"].gap == pytest.approx(60) and by_id["e"].gap == pytest.approx(10)
    assert by_id["d"].spread == 100 and by_id["b"].spread == 50 and math.isnan(by_id["d"].gap)
    assert by_id["a"].n_ratings == 2
    humans_only = disagreement_queue(panel, None)
    assert humans_only.evaluator is None
    assert [r.video_id for r in humans_only.rows] == ["d", "b", "a", "e"]  # spread, then order
