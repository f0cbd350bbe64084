"""Building blocks of the agreement table: figures that share inputs.

A block computes its point estimates once, from the plain statistics (scipy, krippendorff,
REML), and its bootstrap replicates from a chunk of case counts (b × C), all replicates at once
with the weighted statistics of :mod:`annotation._bootstrap`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from annotation._agreement import (
    PAIR_METRICS,
    icc_oneway,
    kendall_tau_b,
    krippendorff_alpha_interval,
    pair_metrics,
    pearson,
    spearman,
)
from annotation._bootstrap import (
    AlphaData,
    CategoryMeans,
    Weights,
    w_bias,
    w_ccc,
    w_mae,
    w_pearson,
    w_rmse,
)
from annotation._bootstrap_ranks import KendallPlan
from annotation._panel import BoolArray, FloatArray, IntArray, StrArray
from annotation._reml import fit_one_way, icc_from_fit, one_way_data

Key = tuple[str, str, str, str]  # group, evaluator, axis, metric
HUMAN = "Human"
HUMAN_LOO = "Human (leave-one-out)"


class Block:
    """Figures sharing inputs: point estimates once, replicates from case counts (b × C)."""

    keys: list[Key]
    points: list[float]
    ns: list[int]

    def boot(self, wc: FloatArray) -> FloatArray:  # (len(keys), b)
        raise NotImplementedError


class PairBlock(Block):
    """r, τ_b, CCC, MAE, RMSE, bias of x (evaluator) against y (human) on video-indexed pairs."""

    def __init__(
        self,
        key: tuple[str, str, str],
        case_index: IntArray,
        n_cases: int,
        vidx: IntArray,
        x: FloatArray,
        y: FloatArray,
    ) -> None:
        self.x, self.y = x, y
        self.groups = case_index[vidx]
        m = pair_metrics(x, y)
        self.keys = [(*key, k) for k in PAIR_METRICS]
        self.points = [m[k] for k in PAIR_METRICS]
        self.ns = [x.size] * len(PAIR_METRICS)
        self._kendall = KendallPlan(x, y, self.groups, n_cases)

    def boot(self, wc: FloatArray) -> FloatArray:
        return np.stack([self.metric(wc, k) for k in PAIR_METRICS])

    def metric(self, wc: FloatArray, name: str) -> FloatArray:
        """Replicates of one metric only."""
        w = Weights(wc, self.groups)
        if name == "tau_b":
            return self._kendall(w)
        fn = {"r": w_pearson, "ccc": w_ccc, "mae": w_mae, "rmse": w_rmse, "bias": w_bias}[name]
        return fn(w, self.x, self.y)


class ReliabilityBlock(Block):
    """ICC (average and single rating, REML) and Krippendorff α on one axis's ratings."""

    def __init__(
        self, axis: str, ratings: FloatArray, k: str | float, case_index: IntArray
    ) -> None:
        self.k = k
        self.data = one_way_data(ratings)
        self.alpha = AlphaData.of(ratings)
        self.icc_groups = case_index[self.data.rows]
        self.alpha_groups = case_index[self.alpha.rows]
        icc = icc_oneway(ratings, k=k)
        alpha = krippendorff_alpha_interval(ratings)
        self.keys = [("human-human", HUMAN, axis, m) for m in ("icc_avg", "icc_single", "alpha")]
        self.points = [icc.icc_avg, icc.icc_single, alpha]
        self.ns = [icc.n_videos] * 3

    def boot(self, wc: FloatArray) -> FloatArray:
        fit = fit_one_way(self.data, wc[:, self.icc_groups])
        single, avg = icc_from_fit(fit, self.k)
        return np.stack([avg, single, self.alpha.alpha(Weights(wc, self.alpha_groups))])


class RankingBlock(Block):
    """Spearman ρ and Kendall τ_b between human and evaluator per-generator Agg (Final)."""

    def __init__(self, evaluator: str, human: CategoryMeans, ev: CategoryMeans) -> None:
        self._h, self._e = human, ev
        self.keys = [("ranking", evaluator, "final", m) for m in ("spearman", "tau_b")]
        h, e = human.point, ev.point
        ok = bool(np.isfinite(h).all() & np.isfinite(e).all())
        self.points = [spearman(e, h), kendall_tau_b(e, h)] if ok else [math.nan, math.nan]
        self.ns = [h.size] * 2

    def boot(self, wc: FloatArray) -> FloatArray:
        h, e = self._h(wc), self._e(wc)
        return np.stack([_row_spearman(e, h), _row_kendall(e, h)])


def _row_spearman(x: FloatArray, y: FloatArray) -> FloatArray:
    from scipy import stats  # type: ignore[import-untyped]

    bad = np.logical_not(np.isfinite(x).all(axis=1) & np.isfinite(y).all(axis=1)).reshape(-1)
    rx = stats.rankdata(np.where(bad[:, None], 0.0, x), axis=1)
    ry = stats.rankdata(np.where(bad[:, None], 0.0, y), axis=1)
    rx = rx - rx.mean(axis=1, keepdims=True)
    ry = ry - ry.mean(axis=1, keepdims=True)
    den = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.clip((rx * ry).sum(axis=1) / den, -1.0, 1.0)
    out: FloatArray = np.where(bad | (den <= 0), math.nan, r)
    return out


def _row_kendall(x: FloatArray, y: FloatArray) -> FloatArray:
    m = x.shape[1]
    iu = np.triu_indices(m, 1)
    sx = np.sign(x[:, :, None] - x[:, None, :])[:, iu[0], iu[1]]
    sy = np.sign(y[:, :, None] - y[:, None, :])[:, iu[0], iu[1]]
    total = m * (m - 1) / 2.0
    den = (total - (sx == 0).sum(axis=1)) * (total - (sy == 0).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.clip((sx * sy).sum(axis=1) / np.sqrt(den), -1.0, 1.0)
    bad = ~(np.isfinite(x).all(axis=1) & np.isfinite(y).all(axis=1)) | (den <= 0)
    out: FloatArray = np.where(bad, math.nan, tau)
    return out


class GeneratorBlock(Block):
    """Within-generator r and leave-one-generator-out r on the Final alignment pairs."""

    def __init__(
        self,
        evaluator: str,
        groups: IntArray,
        x: FloatArray,
        y: FloatArray,
        pair_models: StrArray,
        pair_generated: BoolArray,
        generators: Sequence[str],
    ) -> None:
        self.groups, self.x, self.y = groups, x, y
        self.masks: list[BoolArray] = []
        self.keys, self.points, self.ns = [], [], []
        for g in generators:
            within = (pair_models == g) & pair_generated
            for group, mask in (
                (f"within-generator:{g}", within),
                (f"leave-one-generator-out:{g}", ~within),
            ):
                self.masks.append(mask)
                self.keys.append((group, evaluator, "final", "r"))
                self.points.append(pearson(x[mask], y[mask]))
                self.ns.append(int(mask.sum()))

    def boot(self, wc: FloatArray) -> FloatArray:
        if not self.masks:  # no generated video (human recordings only): no rows at all
            return np.zeros((0, wc.shape[0]))
        w = Weights(wc, self.groups)
        return np.stack([w_pearson(w, self.x, self.y, m) for m in self.masks])
