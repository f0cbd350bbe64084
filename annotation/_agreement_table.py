"""The agreement dashboard (spec ego2act.md §5.3–5.4, Table 3, Tables 21–22, §9 items 23–24).

Every figure has a point estimate from the plain statistic (scipy, krippendorff, REML) and a
case-level bootstrap percentile interval computed for all replicates at once from the video
weight matrix of :class:`annotation._bootstrap.CaseBootstrap`.

Choices where the spec is open (recorded here and in the table's attributes):

- Human–human reliability uses the individual ratings of every video with ≥ 2 ratings on the
  axis, whatever the Human (+) rule (the rule changes consensus, not what raters said). A slot's
  Final is G(its Task, its Physics) with the T = 0 rule.
- ICC k: the mean number of ratings per included video (see :func:`icc_oneway`).
- Alignment sample (``sample``): ``consensus`` (default) takes every video with a consensus on
  the axis and an evaluator score — the 600-video panel of Table 3; ``multi`` keeps only videos
  with ≥ 2 ratings on the axis (the 221–224 of the reliability analysis).
- Human (+) rule (``human_success``): ``rated`` (default) — verified Human (+) recordings enter
  alignment with their actual consensus; ``max`` assigns them 100/100/100 first.
- Model ranking: per generator, Agg = mean of per-video Final over generated videos, each side
  over the videos it scored (human consensus vs evaluator), then Spearman ρ and Kendall τ_b
  across generators. Within-generator r and leave-one-generator-out r use the Final alignment
  sample (human recordings stay in the latter).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from annotation._agreement import PAIR_METRICS, loo_pairs
from annotation._agreement_blocks import (
    HUMAN,
    HUMAN_LOO,
    Block,
    GeneratorBlock,
    PairBlock,
    RankingBlock,
    ReliabilityBlock,
)
from annotation._bootstrap import DEFAULT_CHUNK, CaseBootstrap, CategoryMeans, percentile_ci
from annotation._panel import (
    AXES,
    Evaluator,
    FloatArray,
    HumanSuccessRule,
    IntArray,
    Panel,
    consensus,
    rating_matrix,
)

Sample = Literal["consensus", "multi"]


@dataclass(frozen=True)
class AgreementRow:
    """One figure of the table with its bootstrap interval (NaN when not bootstrapped)."""

    group: str
    evaluator: str
    axis: str
    metric: str
    estimate: float
    ci_low: float
    ci_high: float
    n: int

    def as_dict(self) -> dict[str, str | float | int]:
        """The row as a flat dict (CSV/JSON export)."""
        return dict(self.__dict__)

    def why_empty(self) -> str | None:
        """Why the estimate is missing, in a user's words (None when there is one)."""
        if math.isfinite(self.estimate):
            return None
        unit = "video with two or more ratings" if self.group == "human-human" else "pair"
        if self.n == 0:
            return _NOTHING.get(self.group.split(":", 1)[0], "nothing to compare")
        if self.n == 1 and self.metric not in ("mae", "rmse", "bias"):
            return f"only 1 {unit}: needs 2"
        if self.group == "ranking":
            return "a generator has no Final score from humans or from this judge"
        return f"undefined on these {self.n}: the values do not vary"


_NOTHING = {
    "human-human": "no video has two or more ratings on this axis",
    "human-loo": "no video has two or more ratings on this axis whose others have a consensus",
    "alignment": "no video has both a human consensus and a score from this judge on this axis",
    "within-generator": "no video of this generator has both a consensus and a judge Final",
    "leave-one-generator-out": "no other video has both a consensus and a judge Final",
    "ranking": "needs two generators with Final scores",
}


@dataclass(frozen=True)
class AgreementTable:
    """All agreement figures, long format.

    Groups: ``human-human`` (icc_avg, icc_single, alpha), ``human-loo`` and ``alignment``
    (r, tau_b, ccc, mae, rmse, bias), ``ranking`` (spearman, tau_b),
    ``within-generator:<model>`` and ``leave-one-generator-out:<model>`` (r on Final).
    ``replicates`` (rows × B) is kept only when asked for.
    """

    rows: tuple[AgreementRow, ...]
    n_boot: int
    seed: int | None
    ci: float
    human_success: str
    sample: str
    k: str | float
    replicates: FloatArray | None = field(default=None, compare=False, repr=False)

    def to_rows(self) -> list[dict[str, str | float | int]]:
        """Rows as dicts: group, evaluator, axis, metric, estimate, ci_low, ci_high, n."""
        return [r.as_dict() for r in self.rows]

    def index(self, group: str, evaluator: str, axis: str, metric: str) -> int:
        """Position of a row (KeyError if absent)."""
        for i, r in enumerate(self.rows):
            if (r.group, r.evaluator, r.axis, r.metric) == (group, evaluator, axis, metric):
                return i
        raise KeyError((group, evaluator, axis, metric))

    def get(self, group: str, evaluator: str, axis: str, metric: str) -> AgreementRow:
        """The row with this key."""
        return self.rows[self.index(group, evaluator, axis, metric)]


@dataclass(frozen=True)
class PairedDifference:
    """Δ = metric(evaluator a) − metric(evaluator b) on the same videos and resamples."""

    evaluator_a: str
    evaluator_b: str
    axis: str
    metric: str
    estimate_a: float
    estimate_b: float
    delta: float
    ci_low: float
    ci_high: float
    n: int

    def as_dict(self) -> dict[str, str | float | int]:
        """The difference as a flat dict."""
        return dict(self.__dict__)


# --- assembly ----------------------------------------------------------------------------------


def _check(panel: Panel, evaluators: Sequence[Evaluator]) -> None:
    names = [e.name for e in evaluators]
    if len(set(names)) != len(names) or HUMAN in names or HUMAN_LOO in names:
        raise ValueError(f"evaluator names must be unique and not {HUMAN!r}: {names}")
    for e in evaluators:
        if e.task.shape != (panel.n_videos,):
            raise ValueError(
                f"evaluator {e.name!r} has {e.task.shape[0]} videos, panel {panel.n_videos}"
            )


def alignment_index(
    panel: Panel, cons: FloatArray, ev: FloatArray, axis: str, sample: Sample
) -> IntArray:
    """Videos entering evaluator–human alignment on one axis (see the module docstring)."""
    ok = np.isfinite(cons) & np.isfinite(ev)
    if sample == "multi":
        ok &= np.isfinite(rating_matrix(panel, axis)).sum(axis=1) >= 2
    elif sample != "consensus":
        raise ValueError(f"sample must be 'consensus' or 'multi', got {sample!r}")
    return np.flatnonzero(ok).astype(np.intp)


def _generators(panel: Panel) -> list[str]:
    gen = panel.roles == "generated"
    return list(dict.fromkeys(panel.models[gen].tolist()))


def _blocks(
    panel: Panel,
    evaluators: Sequence[Evaluator],
    boot: CaseBootstrap,
    human_success: HumanSuccessRule,
    sample: Sample,
    k: str | float,
) -> list[Block]:
    cons = consensus(panel, human_success=human_success)
    ci, nc = boot.case_index, boot.n_cases
    blocks: list[Block] = []
    for axis in AXES:
        blocks.append(ReliabilityBlock(axis, rating_matrix(panel, axis), k, ci))
    for axis in AXES:
        v, x, y = loo_pairs(panel, axis)
        blocks.append(PairBlock(("human-loo", HUMAN_LOO, axis), ci, nc, v, x, y))
    gens = _generators(panel)
    generated = panel.roles == "generated"
    model_idx = np.array(
        [gens.index(m) if g else -1 for m, g in zip(panel.models, generated, strict=True)],
        dtype=np.intp,
    )
    human_agg = CategoryMeans(cons["final"], model_idx, len(gens), ci, nc)
    for ev in evaluators:
        for axis in AXES:
            idx = alignment_index(panel, cons[axis], ev.axis(axis), axis, sample)
            blocks.append(
                PairBlock(
                    ("alignment", ev.name, axis), ci, nc, idx, ev.axis(axis)[idx], cons[axis][idx]
                )
            )
        if len(gens) >= 2:
            blocks.append(
                RankingBlock(
                    ev.name, human_agg, CategoryMeans(ev.final, model_idx, len(gens), ci, nc)
                )
            )
        idx = alignment_index(panel, cons["final"], ev.final, "final", sample)
        blocks.append(
            GeneratorBlock(
                ev.name,
                ci[idx],
                ev.final[idx],
                cons["final"][idx],
                panel.models[idx],
                generated[idx],
                gens,
            )
        )
    return blocks


def _replicates(blocks: Sequence[Block], boot: CaseBootstrap, chunk: int) -> FloatArray:
    sizes = [len(b.keys) for b in blocks]
    reps = np.full((sum(sizes), boot.n_boot), math.nan)
    for start, wc in boot.chunks(chunk):
        row = 0
        for b, size in zip(blocks, sizes, strict=True):
            reps[row : row + size, start : start + wc.shape[0]] = b.boot(wc)
            row += size
    return reps


def agreement_table(
    panel: Panel,
    evaluators: Sequence[Evaluator],
    *,
    human_success: HumanSuccessRule = "rated",
    sample: Sample = "consensus",
    k: str | float = "mean",
    n_boot: int = 1000,
    seed: int | None = 0,
    ci: float = 0.95,
    keep_replicates: bool = False,
    chunk: int = DEFAULT_CHUNK,
) -> AgreementTable:
    """Human–human reliability, the human LOO reference and evaluator–human alignment.

    Args:
        panel: The rated panel (its case ids are the bootstrap unit).
        evaluators: Automated judges scored on the same videos.
        human_success: Human (+) rule for the consensus (``rated`` or ``max``).
        sample: Alignment sample, ``consensus`` or ``multi`` (module docstring).
        k: The ICC's k (``mean``, ``harmonic`` or a number).
        n_boot: Case-bootstrap replicates (0: point estimates only, intervals NaN).
        seed: Seed of the case draws; the same seed gives the same intervals.
        ci: Coverage of the two-sided percentile interval.
        keep_replicates: Keep the (rows × B) replicate matrix on the result.
        chunk: Replicates processed together (bounds memory).

    Returns:
        The table; see :class:`AgreementTable` for its groups and metrics.
    """
    _check(panel, evaluators)
    boot = CaseBootstrap.draw(panel.case_ids, n_boot, seed)
    blocks = _blocks(panel, evaluators, boot, human_success, sample, k)
    reps = _replicates(blocks, boot, chunk)
    rows = []
    i = 0
    for b in blocks:
        for key, point, n in zip(b.keys, b.points, b.ns, strict=True):
            lo, hi = percentile_ci(reps[i], ci) if n_boot else (math.nan, math.nan)
            rows.append(AgreementRow(*key, estimate=float(point), ci_low=lo, ci_high=hi, n=int(n)))
            i += 1
    return AgreementTable(
        rows=tuple(rows),
        n_boot=n_boot,
        seed=seed,
        ci=ci,
        human_success=human_success,
        sample=sample,
        k=k,
        replicates=reps if keep_replicates else None,
    )


def paired_difference(
    panel: Panel,
    ev_a: Evaluator,
    ev_b: Evaluator,
    metric: str,
    axis: str,
    *,
    human_success: HumanSuccessRule = "rated",
    sample: Sample = "consensus",
    n_boot: int = 1000,
    seed: int | None = 0,
    ci: float = 0.95,
) -> PairedDifference:
    """Δ of one alignment metric between two evaluators (or two scoring rules), with a CI.

    Both are scored on the videos where *both* have a score (and the consensus exists), and each
    replicate uses the same case draws for both, so the interval is for the paired difference.

    Args:
        panel: The rated panel.
        ev_a: First evaluator (Δ = a − b).
        ev_b: Second evaluator.
        metric: One of ``r``, ``tau_b``, ``ccc``, ``mae``, ``rmse``, ``bias``.
        axis: ``task``, ``physics`` or ``final``.
        human_success: Human (+) rule for the consensus.
        sample: Alignment sample rule.
        n_boot: Replicates.
        seed: Seed of the case draws.
        ci: Interval coverage.
    """
    if metric not in PAIR_METRICS:
        raise ValueError(f"metric must be one of {PAIR_METRICS}, got {metric!r}")
    _check(panel, [ev_a, ev_b])
    cons = consensus(panel, human_success=human_success)[axis]
    xa, xb = ev_a.axis(axis), ev_b.axis(axis)
    both = np.where(np.isfinite(xa) & np.isfinite(xb), xa, math.nan)
    idx = alignment_index(panel, cons, both, axis, sample)
    boot = CaseBootstrap.draw(panel.case_ids, n_boot, seed)
    ci_, nc = boot.case_index, boot.n_cases
    blk_a = PairBlock(("paired", ev_a.name, axis), ci_, nc, idx, xa[idx], cons[idx])
    blk_b = PairBlock(("paired", ev_b.name, axis), ci_, nc, idx, xb[idx], cons[idx])
    j = PAIR_METRICS.index(metric)
    est_a, est_b = blk_a.points[j], blk_b.points[j]
    deltas = np.full(boot.n_boot, math.nan)
    for start, wc in boot.chunks():
        deltas[start : start + wc.shape[0]] = blk_a.metric(wc, metric) - blk_b.metric(wc, metric)
    lo, hi = percentile_ci(deltas, ci) if n_boot else (math.nan, math.nan)
    return PairedDifference(
        ev_a.name, ev_b.name, axis, metric, est_a, est_b, est_a - est_b, lo, hi, int(idx.size)
    )
