"""Agreement statistics, plain (one sample) versions (spec ego2act.md §5.3).

Pairwise metrics take the evaluator's scores ``x`` and the human reference ``y`` and ignore any
pair with a NaN; an undefined statistic (too few pairs, a constant variable) is NaN, never 0.
Correlations come from scipy, α from the ``krippendorff`` package and the ICC from REML
(:mod:`annotation._reml`). scipy and krippendorff are imported inside the functions so that
``import annotation`` stays fast.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from annotation._panel import (
    FloatArray,
    IntArray,
    Panel,
    final_from_axes,
    rating_matrix,
    row_means,
)
from annotation._reml import fit_one_way, icc_from_fit, one_way_data

PAIR_METRICS: tuple[str, ...] = ("r", "tau_b", "ccc", "mae", "rmse", "bias")


def _pairs(x: object, y: object) -> tuple[FloatArray, FloatArray]:
    xa = np.asarray(x, dtype=np.float64).ravel()
    ya = np.asarray(y, dtype=np.float64).ravel()
    if xa.shape != ya.shape:
        raise ValueError(f"x and y differ in length: {xa.shape} vs {ya.shape}")
    ok = np.isfinite(xa) & np.isfinite(ya)
    return xa[ok], ya[ok]


def _varies(a: FloatArray) -> bool:
    return a.size >= 2 and bool(a.min() < a.max())


def mae(x: object, y: object) -> float:
    """Mean absolute error between evaluator ``x`` and human ``y``."""
    a, b = _pairs(x, y)
    return float(np.mean(np.abs(a - b))) if a.size else math.nan


def rmse(x: object, y: object) -> float:
    """Root mean squared error."""
    a, b = _pairs(x, y)
    return float(np.sqrt(np.mean((a - b) ** 2))) if a.size else math.nan


def bias(x: object, y: object) -> float:
    """Signed bias mean(x − y): positive when the evaluator scores higher than humans."""
    a, b = _pairs(x, y)
    return float(np.mean(a - b)) if a.size else math.nan


def ccc(x: object, y: object) -> float:
    """Lin's concordance correlation 2·s_xy / (s_x² + s_y² + (x̄ − ȳ)²), population moments."""
    a, b = _pairs(x, y)
    if not a.size:
        return math.nan
    ma, mb = a.mean(), b.mean()
    sab = np.mean((a - ma) * (b - mb))
    den = np.mean((a - ma) ** 2) + np.mean((b - mb) ** 2) + (ma - mb) ** 2
    return float(2.0 * sab / den) if den > 0 else math.nan


def pearson(x: object, y: object) -> float:
    """Pearson r (scipy); NaN with fewer than two pairs or a constant variable."""
    a, b = _pairs(x, y)
    if not (_varies(a) and _varies(b)):
        return math.nan
    from scipy import stats  # type: ignore[import-untyped]

    return float(stats.pearsonr(a, b).statistic)


def kendall_tau_b(x: object, y: object) -> float:
    """Kendall τ_b (scipy, tie-corrected)."""
    a, b = _pairs(x, y)
    if not (_varies(a) and _varies(b)):
        return math.nan
    from scipy import stats

    return float(stats.kendalltau(a, b, variant="b").statistic)


def spearman(x: object, y: object) -> float:
    """Spearman ρ (scipy, average ranks for ties)."""
    a, b = _pairs(x, y)
    if not (_varies(a) and _varies(b)):
        return math.nan
    from scipy import stats

    return float(stats.spearmanr(a, b).statistic)


def pair_metrics(x: object, y: object) -> dict[str, float]:
    """Every pairwise metric of §5.3 plus the number of pairs ``n``."""
    a, b = _pairs(x, y)
    return {
        "r": pearson(a, b),
        "tau_b": kendall_tau_b(a, b),
        "ccc": ccc(a, b),
        "mae": mae(a, b),
        "rmse": rmse(a, b),
        "bias": bias(a, b),
        "n": float(a.size),
    }


@dataclass(frozen=True)
class IccResult:
    """One-way random-effects ICC by REML.

    Attributes:
        icc_avg: Reliability of the average rating, σ_b² / (σ_b² + σ_e²/k).
        icc_single: Reliability of one rating, σ_b² / (σ_b² + σ_e²).
        sigma_b2: Between-video variance.
        sigma_e2: Residual (within-video) variance.
        k: The number of ratings the average is taken over.
        n_videos: Videos with at least two ratings (the only ones used).
        n_ratings: Ratings on those videos.
    """

    icc_avg: float
    icc_single: float
    sigma_b2: float
    sigma_e2: float
    k: float
    n_videos: int
    n_ratings: int


def icc_oneway(ratings: object, *, k: str | float = "mean") -> IccResult:
    """One-way random-effects ICC with REML variance components, unbalanced data allowed.

    Videos with fewer than two ratings are excluded. σ_b² is constrained to ≥ 0 (so the ICC is
    0, not negative, when ratings vary more within videos than between them).

    Args:
        ratings: (V, R) ratings, NaN = missing; rows are videos, columns unlinked rater slots.
        k: The k of the average-rating ICC. ``mean`` (default) is the mean number of ratings per
            included video, N / G: it is the average panel size the consensus actually averages
            over, and equals the common k for balanced data, where the result is then the ANOVA
            ICC(1,k) = (MSB − MSW)/MSB. ``harmonic`` uses the harmonic mean; a number fixes k.

    Returns:
        The estimate; fields are NaN when undefined (fewer than two videos, no variance).
    """
    data = one_way_data(np.asarray(ratings, dtype=np.float64))
    fit = fit_one_way(data, np.ones((1, data.n.size)))
    single, avg = icc_from_fit(fit, k)
    if k == "mean":
        kk = float(fit.n_ratings[0] / fit.n_videos[0]) if data.n.size else math.nan
    elif k == "harmonic":
        kk = float(fit.harmonic_n[0]) if data.n.size else math.nan
    else:
        kk = float(k)
    return IccResult(
        icc_avg=float(avg[0]),
        icc_single=float(single[0]),
        sigma_b2=float(fit.sigma_b2[0]),
        sigma_e2=float(fit.sigma_e2[0]),
        k=kk,
        n_videos=int(data.n.size),
        n_ratings=int(data.n.sum()),
    )


def icc_avg_oneway(ratings: object, *, k: str | float = "mean") -> float:
    """ICC of the average rating (one-way random, REML); see :func:`icc_oneway`."""
    return icc_oneway(ratings, k=k).icc_avg


def krippendorff_alpha_interval(ratings: object) -> float:
    """Krippendorff's α (interval metric) via the ``krippendorff`` package.

    Args:
        ratings: (V, R) ratings, rows = videos (units), NaN = missing. Only pairable values
            (units with ≥ 2 ratings) count.

    Returns:
        α, or NaN when it is undefined (no pairable unit, or a single distinct value).
    """
    import krippendorff

    a = np.asarray(ratings, dtype=np.float64)
    ok = np.isfinite(a)
    pairable = a[ok.sum(axis=1) >= 2]
    vals = pairable[np.isfinite(pairable)]
    if vals.size < 2 or vals.min() == vals.max():
        return math.nan
    return float(krippendorff.alpha(reliability_data=pairable.T, level_of_measurement="interval"))


def loo_pairs(panel: Panel, axis: str) -> tuple[IntArray, FloatArray, FloatArray]:
    """Leave-one-out pairs: each rating against the consensus of the *other* raters.

    Only videos with at least two ratings on the axis take part. For Task and Physics the
    consensus of the others is their mean; for Final it is the consensus rule applied to them
    (the geometric mean of their mean Task and mean Physics, 0 when their mean Task is 0), and
    a slot's own Final is G(its Task, its Physics). The others' mean Task and mean Physics each
    run over every rating the others gave on that axis, exactly as the consensus does (§5.2): a
    rater whose own Final is missing (Task > 0, Physics N/A) still counts in the others' Task.

    Returns:
        (video index, rating, others' consensus) arrays, one entry per rating whose others'
        consensus exists.
    """
    a = rating_matrix(panel, axis)
    ok = np.isfinite(a)
    n = ok.sum(axis=1)
    r = a.shape[1]
    vids, xs, ys = [], [], []
    for j in range(r):
        take = ok[:, j] & (n >= 2)
        if axis == "final":
            ref = final_from_axes(_others_mean(panel.task, j), _others_mean(panel.physics, j))
        else:
            ref = _others_mean(a, j)
        idx = np.flatnonzero(take)
        vids.append(idx)
        xs.append(a[idx, j])
        ys.append(ref[idx])
    v = np.concatenate(vids).astype(np.intp)
    x, y = np.concatenate(xs), np.concatenate(ys)
    # The others' Final is missing when their mean Task > 0 but none of them scored Physics.
    keep = np.isfinite(y)
    order = np.argsort(v[keep], kind="stable")  # a video's pairs together (readability only)
    return v[keep][order], x[keep][order], y[keep][order]


def _others_mean(a: FloatArray, j: int) -> FloatArray:
    """Per video, the mean of the available ratings in every slot but ``j``."""
    others = np.isfinite(a)
    others[:, j] = False
    return row_means(a, others)


def human_reference(panel: Panel, axis: str) -> dict[str, float]:
    """The human leave-one-out reference row (Table 21): :func:`pair_metrics` of the LOO pairs.

    ``x`` is the individual rating and ``y`` the other raters' consensus, so bias reads as
    "one rater minus the rest".
    """
    _, x, y = loo_pairs(panel, axis)
    return pair_metrics(x, y)
