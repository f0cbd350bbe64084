"""The RL shaped reward, behaviour similarity and preference agreement (spec §4.6)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from sim.metrics._errors import MetricsError, check_count

PREVENTION_BONUS = 0.30
FALSE_FLAG_COST = 0.02
FALSE_FLAG_CAP = 15
TURN_COST = 0.05
TURN_SCALE = 200
SCORE_TIE_TOLERANCE = 1e-12
"""Metric scores closer than this are a tie: means of the same verdicts summed in another order
differ in the last bits."""


def shaped_reward(success: bool, prevented: bool, false_flags: int, turns: int) -> float:
    """The CookSim GRPO reward:

        r = 1[success] + 0.30·1[error prevented] − 0.02·min(N_false_flags, 15)
            − 0.05·min(T / 200, 1)

    with T the number of interaction turns. Any success gives r ≥ 0.65, a completed failure
    r ≤ 0.30.
    """
    check_count("shaped_reward", "false_flags", false_flags)
    check_count("shaped_reward", "turns", turns)
    return (
        float(success)
        + PREVENTION_BONUS * float(prevented)
        - FALSE_FLAG_COST * min(false_flags, FALSE_FLAG_CAP)
        - TURN_COST * min(turns / TURN_SCALE, 1.0)
    )


def similarity(x: float | Sequence[float], y: float | Sequence[float]) -> float:
    """Behaviour similarity Sim(x, y) = 1 − ‖x − y‖₁ / (‖x‖₁ + ‖y‖₁), and Sim(0, 0) = 1.

    For scalars, group differences (signed: opposite signs give 0) and distributions alike.
    """
    a = np.atleast_1d(np.asarray(x, dtype=float))
    b = np.atleast_1d(np.asarray(y, dtype=float))
    if a.shape != b.shape or a.ndim != 1:
        raise MetricsError(
            f"similarity needs two scalars or equal-length vectors, not {a.shape}, {b.shape}"
        )
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise MetricsError("similarity needs finite numbers")
    norm = float(np.abs(a).sum() + np.abs(b).sum())
    if norm == 0.0:
        return 1.0
    return 1.0 - float(np.abs(a - b).sum()) / norm


@dataclass(frozen=True)
class PreferencePair:
    """One participant's comparison of assistants a and b.

    Attributes:
        participant: who compared.
        human: +1 if the participant prefers a, −1 if b, 0 for a tie (excluded).
        score_a: the metric's mean score Q̄_pa of a for this participant.
        score_b: the same for b.
    """

    participant: str
    human: int
    score_a: float
    score_b: float

    def __post_init__(self) -> None:
        if self.human not in (-1, 0, 1) or isinstance(self.human, bool):
            raise MetricsError(f"PreferencePair.human must be +1, -1 or 0, not {self.human!r}")
        if not (math.isfinite(self.score_a) and math.isfinite(self.score_b)):
            raise MetricsError("PreferencePair.score_a and score_b must be finite numbers")


def agreement(pairs: Iterable[PreferencePair]) -> float | None:
    """Agreement = (1/|P|) Σ_(p,a,b) ( 1[h_pab (Q̄_pa − Q̄_pb) > 0] + ½·1[Q̄_pa = Q̄_pb] ).

    P holds the pairs whose human preference is not a tie; metric ties stay in P and score ½.
    ``None`` when P is empty.
    """
    counted = [p for p in pairs if p.human != 0]
    if not counted:
        return None
    total = 0.0
    for pair in counted:
        diff = pair.score_a - pair.score_b
        if abs(diff) <= SCORE_TIE_TOLERANCE:
            total += 0.5
        elif pair.human * diff > 0:
            total += 1.0
    return total / len(counted)


def kendall_tau(pairs: Iterable[PreferencePair]) -> float | None:
    """Kendall's τ in pair-count form: τ = (C − D)/|P| = 2·Agreement − 1 (not τ_b)."""
    value = agreement(pairs)
    return None if value is None else 2.0 * value - 1.0
