"""Rank statistics over weighted bootstrap replicates: Spearman ρ and Kendall τ_b.

Weights as in :mod:`annotation._bootstrap`: observation i appears w_i times in a replicate's
expanded sample, and the results equal scipy's on that expanded sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from annotation._bootstrap import Weights, safe_div
from annotation._panel import FloatArray, IntArray


@dataclass(frozen=True, eq=False)
class _Ties:
    """Tie groups of one variable: ``member[i]`` is the tie group (rank order) of item i."""

    member: IntArray
    n_ties: int

    @classmethod
    def of(cls, x: FloatArray) -> _Ties:
        _, inv = np.unique(x, return_inverse=True)
        return cls(inv.astype(np.intp).ravel(), int(inv.max(initial=-1)) + 1)

    def group_weights(self, w: Weights) -> FloatArray:
        """(B, K) total weight of each tie group."""
        cnt = np.zeros((w.n_groups, self.n_ties))
        if w.groups is None:
            cnt[np.arange(self.member.size), self.member] = 1.0
        else:
            np.add.at(cnt, (w.groups, self.member), 1.0)
        out: FloatArray = w.wg @ cnt
        return out

    def midranks(self, w: Weights) -> FloatArray:
        """(B, n) average ranks on the expanded sample (scipy ``rankdata(method='average')``)."""
        g = self.group_weights(w)
        mid = np.cumsum(g, axis=1) - g + (g + 1.0) / 2.0
        out: FloatArray = mid[:, self.member]
        return out

    def tied_pairs(self, w: Weights) -> FloatArray:
        """Unordered pairs of distinct expanded observations that tie on this variable.

        Σ_k W_k² counts ordered pairs of equal values including each observation with itself;
        subtracting N and halving leaves the unordered pairs of distinct observations.
        """
        g = self.group_weights(w)
        out: FloatArray = ((g * g).sum(axis=1) - g.sum(axis=1)) / 2.0
        return out


class SpearmanPlan:
    """Spearman ρ on weighted samples: weighted mid-ranks, then weighted Pearson of the ranks."""

    def __init__(self, x: FloatArray, y: FloatArray) -> None:
        self.x, self.y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        self._tx, self._ty = _Ties.of(self.x), _Ties.of(self.y)

    def __call__(self, w: Weights) -> FloatArray:
        rx, ry = self._tx.midranks(w), self._ty.midranks(w)
        wo = w.obs()
        sw = wo.sum(axis=1)
        mx, my = safe_div((wo * rx).sum(axis=1), sw), safe_div((wo * ry).sum(axis=1), sw)
        dx, dy = rx - mx[:, None], ry - my[:, None]
        sxx, syy = (wo * dx * dx).sum(axis=1), (wo * dy * dy).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.clip((wo * dx * dy).sum(axis=1) / np.sqrt(sxx * syy), -1.0, 1.0)
        m = np.ones(self.x.size, dtype=bool)
        bad = (sw < 2) | w.constant(self.x, m) | w.constant(self.y, m)
        out: FloatArray = np.where(bad, math.nan, r)
        return out


class KendallPlan:
    """Kendall τ_b on weighted samples as a quadratic form in the weights.

    With S_ij = sign(x_i − x_j)·sign(y_i − y_j) (zero on the diagonal), concordant minus
    discordant pairs of the expanded sample are ½·wᵀSw: copies of one video tie with each other
    on both variables and add nothing, as in scipy. When observations carry group weights
    (w = P·c for the 0/1 membership matrix P), wᵀSw = cᵀ(PᵀSP)c, so S is pooled once into a
    (G × G) matrix. Every entry is an integer, so the result is exact in floating point.
    """

    def __init__(
        self, x: FloatArray, y: FloatArray, groups: IntArray | None = None, n_groups: int = 0
    ) -> None:
        x = np.asarray(x, np.float64)
        y = np.asarray(y, np.float64)
        s = np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])
        self.groups = groups
        if groups is not None:
            p = np.zeros((x.size, n_groups))
            p[np.arange(x.size), groups] = 1.0
            s = p.T @ s @ p
        self._s = s
        self._tx, self._ty = _Ties.of(x), _Ties.of(y)

    def __call__(self, w: Weights) -> FloatArray:
        if w.groups is not self.groups and not (
            w.groups is not None
            and self.groups is not None
            and np.array_equal(w.groups, self.groups)
        ):
            raise ValueError("weights are grouped differently from this plan")
        q = ((w.wg @ self._s) * w.wg).sum(axis=1)
        n_obs = w.dot(np.ones(self._tx.member.size))
        total = n_obs * (n_obs - 1.0) / 2.0
        den = (total - self._tx.tied_pairs(w)) * (total - self._ty.tied_pairs(w))
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = np.clip((q / 2.0) / np.sqrt(den), -1.0, 1.0)
        out: FloatArray = np.where((den > 0) & (n_obs >= 2), tau, math.nan)
        return out
