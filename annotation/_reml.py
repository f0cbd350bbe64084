"""REML for the one-way random-effects model, vectorised over bootstrap replicates.

Model: y_vj = μ + b_v + e_vj with b_v ~ N(0, σ_b²), e_vj ~ N(0, σ_e²), n_v ratings of video v.
Only per-video summaries enter the restricted likelihood: n_v, the mean ȳ_v and the within-video
sum of squares W_v. With γ = σ_b²/σ_e² and ω_v = n_v / (1 + n_v γ), profiling σ_e² out gives

    f(γ) = −2 ℓ_R = (N − 1) log Q(γ) + Σ log(1 + n_v γ) + log Σ ω_v + const,
    Q(γ) = Σ W_v + Σ ω_v (ȳ_v − μ̂)²,   μ̂ = Σ ω_v ȳ_v / Σ ω_v,   σ̂_e² = Q / (N − 1),

a one-dimensional problem, solved by Newton on f′ with analytic f″, safeguarded by a bracket.
γ = 0 (σ_b² = 0) is the boundary solution when f′(0) ≥ 0. A bootstrap replicate that draws
video v c_v times is the same likelihood with every sum weighted by c_v (the copies are separate
groups), so one call solves all replicates at once. For balanced data with MSB > MSW the root is
the ANOVA solution, so the average-rating ICC equals (MSB − MSW)/MSB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from annotation._panel import BoolArray, FloatArray, IntArray

_MAX_ITER = 200
_RTOL = 1e-12


@dataclass(frozen=True, eq=False)
class OneWayData:
    """Per-video summaries of the videos with at least two ratings.

    Attributes:
        rows: (G,) index of each kept video in the input matrix.
        n: (G,) number of ratings.
        mean: (G,) mean rating.
        within_ss: (G,) sum of squared deviations from the video mean.
    """

    rows: IntArray
    n: FloatArray
    mean: FloatArray
    within_ss: FloatArray


def one_way_data(ratings: FloatArray) -> OneWayData:
    """Summarise a (V, R) rating matrix (NaN = missing); videos with < 2 ratings are dropped."""
    a = np.asarray(ratings, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"ratings must be (V, R), got shape {a.shape}")
    ok = np.isfinite(a)
    n = ok.sum(axis=1)
    keep = np.flatnonzero(n >= 2).astype(np.intp)
    okk = ok[keep]
    nk = n[keep].astype(np.float64)
    mean = np.where(okk, a[keep], 0.0).sum(axis=1) / np.maximum(nk, 1.0)
    dev = np.where(okk, a[keep] - mean[:, None], 0.0)
    return OneWayData(keep, nk, mean, (dev * dev).sum(axis=1))


@dataclass(frozen=True, eq=False)
class OneWayFit:
    """REML variance components, one entry per replicate (arrays of shape (B,)).

    ``gamma`` = σ_b²/σ_e²: inf when every video's ratings agree exactly while videos differ,
    NaN when undefined (fewer than two videos, or no variation at all).
    ``n_ratings`` and ``n_videos`` are the (weighted) N and number of videos.
    """

    sigma_b2: FloatArray
    sigma_e2: FloatArray
    gamma: FloatArray
    n_ratings: FloatArray
    n_videos: FloatArray
    harmonic_n: FloatArray


def fit_one_way(data: OneWayData, counts: FloatArray) -> OneWayFit:
    """REML variance components for each row of ``counts`` ((B, G) video multiplicities).

    Args:
        data: Summaries from :func:`one_way_data`.
        counts: How often each kept video enters each replicate; a single row of ones is the
            plain estimate.

    Returns:
        The fitted components per replicate.
    """
    c = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    n = data.n
    # The likelihood is location-invariant: centring the means limits cancellation.
    y = data.mean - (float(data.mean.mean()) if data.mean.size else 0.0)
    big_n = c @ n
    groups = c.sum(axis=1)
    w_tot = c @ data.within_ss
    with np.errstate(invalid="ignore", divide="ignore"):
        harmonic = groups / (c @ (1.0 / n))
        grand = ((c * n) @ y) / big_n
    between = ((c * n) * (y[None, :] - grand[:, None]) ** 2).sum(axis=1)
    b = c.shape[0]
    gamma = np.full(b, math.nan)
    valid = (groups >= 2) & (big_n > groups)
    exact = valid & (w_tot <= 0)
    gamma[exact & (between > 0)] = math.inf
    todo = np.flatnonzero(valid & ~exact)
    if todo.size:
        gamma[todo] = _solve(c[todo], n, y, w_tot[todo], big_n[todo], groups[todo], between[todo])
    sigma_e2 = np.full(b, math.nan)
    sigma_b2 = np.full(b, math.nan)
    fin = np.flatnonzero(np.isfinite(gamma))
    if fin.size:
        q = _derivs(c[fin], n, y, w_tot[fin], big_n[fin], gamma[fin])[2]
        sigma_e2[fin] = q / (big_n[fin] - 1.0)
        sigma_b2[fin] = gamma[fin] * sigma_e2[fin]
    inf = np.flatnonzero(np.isinf(gamma))
    sigma_e2[inf] = 0.0
    sigma_b2[inf] = between[inf] / big_n[inf] * groups[inf] / np.maximum(groups[inf] - 1.0, 1.0)
    return OneWayFit(sigma_b2, sigma_e2, gamma, big_n, groups, harmonic)


def _derivs(
    c: FloatArray, n: FloatArray, y: FloatArray, w_tot: FloatArray, big_n: FloatArray, g: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """f′(γ), f″(γ) and Q(γ) per row (see the module docstring; dω/dγ = −ω²)."""
    om = n[None, :] / (1.0 + n[None, :] * g[:, None])
    co = c * om
    co2 = co * om
    co3 = co2 * om
    s = co.sum(axis=1)
    mu = (co @ y) / s
    d = y[None, :] - mu[:, None]
    dd = d * d
    q = w_tot + (co * dd).sum(axis=1)
    q1 = -(co2 * dd).sum(axis=1)
    q2 = 2.0 * (co3 * dd).sum(axis=1) - 2.0 * (co2 * d).sum(axis=1) ** 2 / s
    s1 = -co2.sum(axis=1)
    s2 = 2.0 * co3.sum(axis=1)
    grad = (big_n - 1.0) * q1 / q + s + s1 / s
    hess = (big_n - 1.0) * (q2 / q - (q1 / q) ** 2) + s1 + s2 / s - (s1 / s) ** 2
    return grad, hess, q


def _solve(
    c: FloatArray,
    n: FloatArray,
    y: FloatArray,
    w_tot: FloatArray,
    big_n: FloatArray,
    groups: FloatArray,
    between: FloatArray,
) -> FloatArray:
    """Root of f′ per row, or 0 where f′(0) ≥ 0 (σ_b² on the boundary)."""
    b = c.shape[0]
    gamma = np.zeros(b)
    g0 = _derivs(c, n, y, w_tot, big_n, gamma)[0]
    active: BoolArray = g0 < 0
    # Start from the unbalanced ANOVA estimate (n0 = (N − Σn²/N)/(G − 1)): exact when balanced.
    msb = between / (groups - 1.0)
    msw = w_tot / (big_n - groups)
    n0 = (big_n - (c @ (n * n)) / big_n) / (groups - 1.0)
    start = (msb - msw) / (n0 * msw)
    gamma = np.where(active & (start > 0), start, np.where(active, 1e-3, 0.0))
    lo, hi = np.zeros(b), np.full(b, math.inf)
    g_lo, g_hi = g0.copy(), np.full(b, math.nan)
    for _ in range(_MAX_ITER):
        idx = np.flatnonzero(active)
        if not idx.size:
            break
        g = gamma[idx]
        grad, hess, _ = _derivs(c[idx], n, y, w_tot[idx], big_n[idx], g)
        neg, pos = grad < 0, grad > 0
        lo[idx] = np.where(neg, g, lo[idx])
        g_lo[idx] = np.where(neg, grad, g_lo[idx])
        hi[idx] = np.where(pos, g, hi[idx])
        g_hi[idx] = np.where(pos, grad, g_hi[idx])
        a, z, ga, gz = lo[idx], hi[idx], g_lo[idx], g_hi[idx]
        # Newton in log γ: f′ is far closer to linear in log γ, so steps overshoot less.
        curv = g * grad + g * g * hess
        width = z - a
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            newton = g * np.exp(-(g * grad) / curv)
            # Outside the bracket: a secant step kept 10 % inside it, so the bracket shrinks.
            secant = np.clip(a - ga * width / (gz - ga), a + 0.1 * width, z - 0.1 * width)
        ok = (curv > 0) & (newton > a) & (newton < z)
        inside = np.where(np.isfinite(secant), secant, a + 0.5 * width)
        fallback = np.where(np.isfinite(z), inside, 4.0 * g + 1.0)
        new = np.where(ok, newton, fallback)
        # Near the root f′ is rounding noise; a collapsed bracket also means converged.
        done = (grad == 0) | (np.abs(new - g) <= _RTOL * np.abs(new)) | (width <= _RTOL * g)
        gamma[idx] = np.where(grad == 0, g, new)
        active[idx[done]] = False
    return gamma


def safe_ratio(a: FloatArray, b: FloatArray) -> FloatArray:
    """a / b, NaN where b is 0 (no video to average over)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = np.where(b > 0, a / np.where(b > 0, b, 1.0), math.nan)
    return out


def icc_from_fit(fit: OneWayFit, k: str | float = "mean") -> tuple[FloatArray, FloatArray]:
    """ICC of a single rating and of the average of k ratings, per replicate.

    Args:
        fit: Variance components.
        k: ``mean`` — the mean number of ratings per included video (N / G), the default;
            ``harmonic`` — their harmonic mean; or a fixed number.

    Returns:
        (ICC(1,1), ICC_avg) arrays; ICC_avg = σ_b² / (σ_b² + σ_e²/k) = kγ / (1 + kγ).
    """
    if k == "mean":
        kk = safe_ratio(fit.n_ratings, fit.n_videos)
    elif k == "harmonic":
        kk = fit.harmonic_n
    elif isinstance(k, int | float) and not isinstance(k, bool) and k > 0:
        kk = np.full_like(fit.gamma, float(k))
    else:
        raise ValueError(f"k must be 'mean', 'harmonic' or a positive number, got {k!r}")
    g = fit.gamma
    with np.errstate(invalid="ignore"):
        single = np.where(np.isinf(g), 1.0, g / (1.0 + g))
        avg = np.where(np.isinf(g), 1.0, kk * g / (1.0 + kk * g))
    return single, avg
