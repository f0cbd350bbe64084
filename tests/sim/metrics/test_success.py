"""In-time success (IVG spec §4.1): every row of the spec's test table, the budgets, bad input."""

from __future__ import annotations

import pytest

from annotation import UserError
from sim.metrics import (
    HOUSEHOLD_ALPHA,
    MetricsError,
    SuccessRecord,
    any_success,
    deadline,
    in_time_success,
    success_rate,
)


@pytest.mark.parametrize(
    ("rule", "t_ref", "alpha", "budget", "goal", "duration", "success"),
    [
        ("2(T_ref+alpha)", 50, HOUSEHOLD_ALPHA, 140, True, 140, True),  # VHSim, ≤ inclusive
        ("2(T_ref+alpha)", 50, HOUSEHOLD_ALPHA, 140, True, 141, False),
        ("2(T_ref+alpha)", 50, HOUSEHOLD_ALPHA, 140, False, 60, False),
        ("2T_ref+8", 10, None, 28, True, 28, True),  # ScreenSim
        ("2T_ref+8", 10, None, 28, True, 29, False),
        ("2T_ref+8", 10, None, 28, False, 12, False),  # lasting unrelated change
        ("2(T_ref+alpha)", 150, 30, 360, False, 90, False),  # CookSim fire
        ("2(T_ref+alpha)", 150, 30, 360, False, 200, False),  # extra ingredient
    ],
)
def test_the_spec_success_table(
    rule: str, t_ref: int, alpha: int | None, budget: int, goal: bool, duration: int, success: bool
) -> None:
    record = SuccessRecord("ep", goal, duration, t_ref, rule, alpha)  # type: ignore[arg-type]
    assert record.deadline == budget
    assert in_time_success(record) is success


def test_household_alpha_is_twenty() -> None:
    assert HOUSEHOLD_ALPHA == 20


def test_any_success_ignores_the_deadline() -> None:
    late = SuccessRecord("late", True, 141, 50, "2(T_ref+alpha)", 20)
    assert not in_time_success(late)
    assert any_success(late)


def test_the_run_rate_counts_every_episode() -> None:
    records = [
        SuccessRecord("a", True, 140, 50, "2(T_ref+alpha)", 20),
        SuccessRecord("b", True, 141, 50, "2(T_ref+alpha)", 20),
        SuccessRecord("c", False, 60, 50, "2(T_ref+alpha)", 20),
        SuccessRecord("d", True, 28, 10, "2T_ref+8"),
    ]
    rate = success_rate(records)
    assert rate.value == pytest.approx(0.5)
    assert (rate.n, rate.episodes) == (4, ("a", "b", "c", "d"))
    assert success_rate(records, in_time=False).value == pytest.approx(0.75)
    assert success_rate([]).value is None


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"duration": -1}, "duration"),
        ({"t_ref": -5}, "t_ref"),
        ({"alpha": None}, "alpha"),
        ({"alpha": -2}, "alpha"),
        ({"rule": "3T_ref"}, "rule"),
        ({"goal_met": 1}, "goal_met"),
    ],
)
def test_bad_records_name_the_field(kwargs: dict[str, object], field: str) -> None:
    base: dict[str, object] = {
        "episode_id": "ep", "goal_met": True, "duration": 10, "t_ref": 5,
        "rule": "2(T_ref+alpha)", "alpha": 3,
    }  # fmt: skip
    with pytest.raises(MetricsError, match=field) as caught:
        SuccessRecord(**(base | kwargs))  # type: ignore[arg-type]
    assert isinstance(caught.value, UserError)
    assert isinstance(caught.value, ValueError)


def test_the_action_response_rule_takes_no_alpha() -> None:
    with pytest.raises(MetricsError, match="alpha"):
        deadline("2T_ref+8", 10, 5)
