"""In-time success and any-success (spec §4.1, App. D.1).

For episode i with duration T_i (ticks), reference duration T_i^ref (ticks of an engine-generated,
error-free rollout of the same task) and goal check G_i on the final state:

    S_i = 1[G_i(s_final) = 1 ∧ T_i ≤ D_i]      (≤ inclusive)

with the deadline D_i from the environment's budget rule:

- ``"2(T_ref+alpha)"`` (kitchen and household worlds): D = 2 (T_ref + α), α per case; the
  household world uses α = 20 (:data:`HOUSEHOLD_ALPHA`), the kitchen a case-specific value.
- ``"2T_ref+8"`` (action–response worlds): D = 2 T_ref + 8.

Any-success drops the deadline: S_i = G_i. Run rate = mean_i S_i (a fraction; ×100 for tables).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from sim.metrics._aggregate import RunValue, ratio
from sim.metrics._errors import MetricsError, check_tick

BudgetRule = Literal["2(T_ref+alpha)", "2T_ref+8"]
BUDGET_RULES: tuple[BudgetRule, ...] = ("2(T_ref+alpha)", "2T_ref+8")
HOUSEHOLD_ALPHA = 20
"""α of every household (VHSim) case, in ticks."""
ACTION_RESPONSE_SLACK = 8
"""The +8 ticks of the action–response budget 2 T_ref + 8."""


def deadline(rule: BudgetRule, t_ref: int, alpha: int | None = None) -> int:
    """D = 2 (T_ref + α) or 2 T_ref + 8, in ticks (see the module doc)."""
    check_tick("budget", "t_ref", t_ref)
    if rule == "2(T_ref+alpha)":
        if alpha is None:
            raise MetricsError("budget.alpha is required by the rule 2(T_ref+alpha)")
        check_tick("budget", "alpha", alpha)
        return 2 * (t_ref + alpha)
    if rule == "2T_ref+8":
        if alpha is not None:
            raise MetricsError("budget.alpha has no meaning under the rule 2T_ref+8; leave it out")
        return 2 * t_ref + ACTION_RESPONSE_SLACK
    raise MetricsError(f"budget.rule must be one of {', '.join(BUDGET_RULES)}, not {rule!r}")


@dataclass(frozen=True)
class SuccessRecord:
    """What the success metrics need from one episode's trace.

    Attributes:
        episode_id: the episode, for drill-down.
        goal_met: G(s_final): the environment's goal check on the final state.
        duration: T, the episode's length in ticks.
        t_ref: T_ref, the error-free reference rollout's length in ticks.
        rule: the environment's budget rule (:data:`BUDGET_RULES`).
        alpha: α in ticks for ``"2(T_ref+alpha)"``; ``None`` for ``"2T_ref+8"``.
    """

    episode_id: str
    goal_met: bool
    duration: int
    t_ref: int
    rule: BudgetRule
    alpha: int | None = None

    def __post_init__(self) -> None:
        check_tick("SuccessRecord", "duration", self.duration)
        if not isinstance(self.goal_met, bool):
            raise MetricsError(
                f"SuccessRecord.goal_met must be true or false, not {self.goal_met!r}"
            )
        deadline(self.rule, self.t_ref, self.alpha)  # validates rule, t_ref and alpha

    @property
    def deadline(self) -> int:
        """D_i in ticks."""
        return deadline(self.rule, self.t_ref, self.alpha)


def in_time_success(record: SuccessRecord) -> bool:
    """S_i = G_i ∧ T_i ≤ D_i."""
    return record.goal_met and record.duration <= record.deadline


def any_success(record: SuccessRecord) -> bool:
    """S_i = G_i, whatever the duration."""
    return record.goal_met


def success_rate(records: Iterable[SuccessRecord], *, in_time: bool = True) -> RunValue:
    """The run's success rate: Σ_i S_i / N over its episodes (``None`` for no episode)."""
    rows = list(records)
    score = in_time_success if in_time else any_success
    return ratio(sum(score(r) for r in rows), len(rows), (r.episode_id for r in rows))
