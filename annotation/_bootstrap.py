"""Case-level bootstrap as a matrix of weights, and statistics over all replicates at once.

A replicate draws the panel's cases with replacement and takes every video of each drawn case
(spec ego2act.md §5.4). Instead of building each resample, replicate b is a row of
multiplicities: how often each case — hence each of its videos — appears in it. Every statistic
below is a function of those weights that equals the ordinary statistic on the explicitly
expanded resample, where the copies of a video are separate observations (so, for Kendall's τ_b,
a video paired with its own copy is a tie in both variables, exactly as scipy counts it).

Observations (videos, or rating pairs of a video) carry the weight of their *group* (their
case). Linear statistics only need per-group sums, so one (B × C) @ (C × k) product serves every
replicate; Kendall's quadratic form wᵀSw collapses the same way to a (C × C) matrix of
per-case-pair concordance sums. Arbitrary observation weights work too (``groups=None``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from annotation._panel import BoolArray, FloatArray, IntArray, StrArray

DEFAULT_CHUNK = 250  # replicates per chunk: bounds the (chunk × V) temporaries


@dataclass(frozen=True, eq=False)
class CaseBootstrap:
    """The draws of a case-level bootstrap, reproducible from its seed.

    Attributes:
        cases: (C,) the distinct case ids, sorted.
        case_index: (V,) position of each video's case in ``cases``.
        draws: (B, C) the drawn case positions of each replicate, in draw order.
        seed: The seed of ``numpy.random.default_rng`` that produced ``draws``.
    """

    cases: StrArray
    case_index: IntArray
    draws: IntArray
    seed: int | None

    @classmethod
    def draw(cls, case_ids: object, n_boot: int, seed: int | None = 0) -> CaseBootstrap:
        """Draw ``n_boot`` replicates of the cases with replacement.

        Args:
            case_ids: (V,) case of each video.
            n_boot: Number of replicates B (0 gives an empty bootstrap).
            seed: Seed for ``numpy.random.default_rng``.
        """
        cases, index = np.unique(np.asarray(case_ids).astype(str), return_inverse=True)
        rng = np.random.default_rng(seed)
        draws = rng.integers(0, len(cases), size=(max(n_boot, 0), len(cases)))
        return cls(cases, index.astype(np.intp), draws.astype(np.intp), seed)

    @property
    def n_boot(self) -> int:
        """Number of replicates B."""
        return int(self.draws.shape[0])

    @property
    def n_cases(self) -> int:
        """Number of distinct cases C."""
        return len(self.cases)

    def case_counts(self, start: int = 0, stop: int | None = None) -> FloatArray:
        """(B', C) how often each case was drawn in replicates ``start:stop``."""
        d = self.draws[start:stop]
        n_c = self.n_cases
        flat = d + (np.arange(d.shape[0]) * n_c)[:, None]
        counts = np.bincount(flat.ravel(), minlength=d.shape[0] * n_c)
        return counts.reshape(d.shape[0], n_c).astype(np.float64)

    def video_weights(self, start: int = 0, stop: int | None = None) -> FloatArray:
        """(B', V) how often each video appears in replicates ``start:stop``."""
        out: FloatArray = self.case_counts(start, stop)[:, self.case_index]
        return out

    def chunks(self, size: int = DEFAULT_CHUNK) -> Iterator[tuple[int, FloatArray]]:
        """Yield ``(start, case_counts)`` for consecutive blocks of replicates."""
        for start in range(0, self.n_boot, size):
            yield start, self.case_counts(start, start + size)

    def expand(self, b: int) -> IntArray:
        """The video indices of replicate ``b`` as an explicit resample (draw order)."""
        members = [np.flatnonzero(self.case_index == c) for c in range(self.n_cases)]
        parts = [members[c] for c in self.draws[b]]
        return np.concatenate(parts).astype(np.intp) if parts else np.zeros(0, np.intp)


def percentile_ci(replicates: FloatArray, ci: float = 0.95) -> tuple[float, float]:
    """Two-sided percentile interval over the finite replicates (NaN, NaN if there are none).

    Replicates where a statistic is undefined (e.g. a resample with no variance) are left out
    rather than counted as extreme values. Percentiles use numpy's default linear interpolation.
    """
    r = np.asarray(replicates, dtype=np.float64)
    r = r[np.isfinite(r)]
    if not r.size:
        return math.nan, math.nan
    lo, hi = np.percentile(r, [50.0 * (1.0 - ci), 50.0 * (1.0 + ci)])
    return float(lo), float(hi)


class Weights:
    """Per-replicate weights of n observations, stored per group.

    Observation i has weight ``wg[:, groups[i]]``; with ``groups=None`` each observation is its
    own group. Sums over observations become sums over groups, which is what makes the case
    bootstrap cheap: the groups are cases and there are far fewer of them than videos.
    """

    def __init__(self, wg: FloatArray, groups: IntArray | None = None) -> None:
        self.wg = np.atleast_2d(np.asarray(wg, dtype=np.float64))
        self.groups = groups
        self.n_groups = self.wg.shape[1]

    def pool(self, v: FloatArray) -> FloatArray:
        """Per-group sums of an (n,) or (n, k) observation array."""
        if self.groups is None:
            return np.asarray(v, dtype=np.float64)
        if v.ndim == 1:
            return np.bincount(self.groups, weights=v, minlength=self.n_groups).astype(np.float64)
        pooled = np.zeros((self.n_groups, v.shape[1]))
        np.add.at(pooled, self.groups, v)
        return pooled

    def dot(self, v: FloatArray) -> FloatArray:
        """Σ_i w_i v_i per replicate, (B,)."""
        out: FloatArray = self.wg @ self.pool(v)
        return out

    def obs(self) -> FloatArray:
        """The explicit (B, n) observation weights."""
        if self.groups is None:
            return self.wg
        out: FloatArray = self.wg[:, self.groups]
        return out

    def constant(self, x: FloatArray, mask: BoolArray) -> BoolArray:
        """True where all observations in ``mask`` with positive weight share one x (exactly)."""
        g = np.arange(x.size) if self.groups is None else self.groups
        hi = np.full(self.n_groups, -np.inf)
        lo = np.full(self.n_groups, np.inf)
        np.maximum.at(hi, g[mask], x[mask])
        np.minimum.at(lo, g[mask], x[mask])
        present = self.wg > 0
        # initial=: a replicate with no group at all (an empty panel) is "constant", not an error
        top = np.where(present, hi[None, :], -np.inf).max(axis=1, initial=-np.inf)
        bottom = np.where(present, lo[None, :], np.inf).min(axis=1, initial=np.inf)
        out: BoolArray = top <= bottom
        return out


def safe_div(a: FloatArray, b: FloatArray) -> FloatArray:
    """a / b where b > 0, NaN elsewhere (an empty replicate has no mean)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = np.where(b > 0, a / np.where(b > 0, b, 1.0), math.nan)
    return out


def _mask(x: FloatArray, mask: BoolArray | None) -> BoolArray:
    out: BoolArray = np.ones(x.size, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    return out


def w_mean(w: Weights, x: FloatArray, mask: BoolArray | None = None) -> FloatArray:
    """Weighted mean of x over the observations in ``mask`` (NaN for an empty replicate)."""
    m = _mask(x, mask).astype(np.float64)
    return safe_div(w.dot(np.where(m > 0, x, 0.0)), w.dot(m))


def w_mae(w: Weights, x: FloatArray, y: FloatArray, mask: BoolArray | None = None) -> FloatArray:
    """Mean absolute error |x − y|."""
    return w_mean(w, np.abs(x - y), mask)


def w_rmse(w: Weights, x: FloatArray, y: FloatArray, mask: BoolArray | None = None) -> FloatArray:
    """Root mean squared error."""
    out: FloatArray = np.sqrt(w_mean(w, (x - y) ** 2, mask))
    return out


def w_bias(w: Weights, x: FloatArray, y: FloatArray, mask: BoolArray | None = None) -> FloatArray:
    """Mean signed difference x − y (evaluator minus human)."""
    return w_mean(w, x - y, mask)


def _moments(
    w: Weights, x: FloatArray, y: FloatArray, m: BoolArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """Weighted size, means and population (co)variances.

    Sums of x, x², xy… come from one pooled product; x and y are centred on their plain means
    first so that E[x²] − E[x]² does not cancel badly (both are shift-invariant).
    """
    cx = float(x[m].mean()) if m.any() else 0.0
    cy = float(y[m].mean()) if m.any() else 0.0
    xc = np.where(m, x - cx, 0.0)
    yc = np.where(m, y - cy, 0.0)
    cols = np.stack([m.astype(np.float64), xc, yc, xc * xc, yc * yc, xc * yc], axis=1)
    s = w.wg @ w.pool(cols)
    sw = s[:, 0]
    mx, my = safe_div(s[:, 1], sw), safe_div(s[:, 2], sw)
    sxx = safe_div(s[:, 3], sw) - mx * mx
    syy = safe_div(s[:, 4], sw) - my * my
    sxy = safe_div(s[:, 5], sw) - mx * my
    return sw, mx + cx, my + cy, np.maximum(sxx, 0.0), np.maximum(syy, 0.0), sxy


def w_pearson(
    w: Weights, x: FloatArray, y: FloatArray, mask: BoolArray | None = None
) -> FloatArray:
    """Pearson r; NaN with fewer than two observations or a constant variable."""
    m = _mask(x, mask)
    sw, _, _, sxx, syy, sxy = _moments(w, x, y, m)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.clip(sxy / np.sqrt(sxx * syy), -1.0, 1.0)
    bad = (sw < 2) | w.constant(x, m) | w.constant(y, m)
    out: FloatArray = np.where(bad, math.nan, r)
    return out


def w_ccc(w: Weights, x: FloatArray, y: FloatArray, mask: BoolArray | None = None) -> FloatArray:
    """Lin's concordance correlation coefficient with population moments."""
    m = _mask(x, mask)
    sw, mx, my, sxx, syy, sxy = _moments(w, x, y, m)
    # Exactly-constant variables have zero variance, whatever rounding left in sxx/syy.
    sxx = np.where(w.constant(x, m), 0.0, sxx)
    syy = np.where(w.constant(y, m), 0.0, syy)
    sxy = np.where(w.constant(x, m) | w.constant(y, m), 0.0, sxy)
    den = sxx + syy + (mx - my) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        c = 2.0 * sxy / den
    out: FloatArray = np.where((sw < 1) | (den <= 0), math.nan, c)
    return out


@dataclass(frozen=True, eq=False)
class AlphaData:
    """Per-unit summaries for Krippendorff's α (interval) of units with ≥ 2 pairable values.

    For interval data α = 1 − (n − 1)·Σ_u m_u·SS_u/(m_u − 1) / (n·SS_total), with m_u values and
    within-unit sum of squares SS_u in unit u, n = Σ m_u, and SS_total the sum of squares of all
    pairable values about their mean (the coincidence-matrix form reduces to this).
    """

    rows: IntArray
    m: FloatArray
    within: FloatArray  # m_u·SS_u/(m_u − 1)
    total: FloatArray  # Σ values (centred)
    total_sq: FloatArray  # Σ values² (centred)

    @classmethod
    def of(cls, ratings: FloatArray) -> AlphaData:
        """Summarise a (V, R) rating matrix, NaN = missing."""
        a = np.asarray(ratings, dtype=np.float64)
        ok = np.isfinite(a)
        m = ok.sum(axis=1)
        keep = np.flatnonzero(m >= 2).astype(np.intp)
        okk = ok[keep]
        mk = m[keep].astype(np.float64)
        centre = float(np.where(okk, a[keep], 0.0).sum() / mk.sum()) if keep.size else 0.0
        vals = np.where(okk, a[keep] - centre, 0.0)
        mean = vals.sum(axis=1) / np.maximum(mk, 1.0)
        ss = (np.where(okk, vals - mean[:, None], 0.0) ** 2).sum(axis=1)
        return cls(keep, mk, mk * ss / (mk - 1.0), vals.sum(axis=1), (vals * vals).sum(axis=1))

    def alpha(self, w: Weights) -> FloatArray:
        """α per replicate; ``w`` weights the kept units (in ``rows`` order)."""
        s = w.wg @ w.pool(np.stack([self.m, self.within, self.total, self.total_sq], axis=1))
        n, within, s1, s2 = s[:, 0], s[:, 1], s[:, 2], s[:, 3]
        ss_tot = s2 - safe_div(s1 * s1, n)
        with np.errstate(invalid="ignore", divide="ignore"):
            a = 1.0 - (n - 1.0) * within / (n * ss_tot)
        out: FloatArray = np.where((n >= 2) & (ss_tot > 1e-12 * np.abs(s2)), a, math.nan)
        return out


class CategoryMeans:
    """Per-category means of one per-video variable (e.g. a model's Agg) for every replicate.

    Videos with ``category < 0`` or a NaN value are left out; a category with no video in a
    replicate is NaN there.
    """

    def __init__(
        self,
        values: FloatArray,
        category: IntArray,
        n_categories: int,
        case_index: IntArray,
        n_cases: int,
    ) -> None:
        have = np.isfinite(values) & (category >= 0)
        onehot = np.zeros((values.size, n_categories))
        onehot[np.flatnonzero(have), category[have]] = 1.0
        num = onehot * np.where(have, values, 0.0)[:, None]
        w = Weights(np.zeros((1, n_cases)), case_index)
        self._num, self._den = w.pool(num), w.pool(onehot)
        self.point = safe_div(num.sum(axis=0), onehot.sum(axis=0))
        self.n = onehot.sum(axis=0).astype(np.intp)

    def __call__(self, wc: FloatArray) -> FloatArray:
        """(b, M) means from (b, C) case counts."""
        return safe_div(wc @ self._num, wc @ self._den)
