"""Run-level metrics with the spec's numbers (C.6.1, C.6.15) and the endpoint split."""

from __future__ import annotations

import pytest

from sim.contracts import (
    RUN_STATUSES,
    RunStatus,
    TaskRun,
    Truth,
    completed_run_rate,
    endpoint,
    endpoint_counts,
    gcr,
    goal_completion,
    mean_score,
    operational_tsr,
    pass_rate,
    pooled_acceptance_rate,
    reference_coverage,
    strict_tsr,
    task_validity,
    validity_summary,
    zero_attempt_tasks,
)

T, F, U = Truth.T, Truth.F, Truth.U


def _run(
    task_id: str,
    status: RunStatus,
    conditions: tuple[Truth, ...],
    acc: int,
    all_: int,
    kind: str = "terminal_state",
) -> TaskRun:
    return TaskRun(task_id, kind, status, conditions, acc, all_)  # type: ignore[arg-type]


# C.6.15: the four tasks of the table
T1 = _run("t1", "completed", (T, T, T, T), 9, 10)
T2 = _run("t2", "completed", (T, T, T, F), 1, 2)
T3 = _run("t3", "execution_blocked", (T, T, F, F), 5, 80)
T4 = _run("t4", "completed", (U,), 3, 3, kind="accepted_event")
TABLE = [T1, T2, T3, T4]


@pytest.mark.parametrize(
    ("run", "success", "g_t", "v_t"),
    [(T1, True, 1.0, 0.9), (T2, False, 0.75, 0.5), (T3, False, 0.0, 0.0625), (T4, False, 0.0, 1.0)],
)
def test_c615_rows(run: TaskRun, success: bool, g_t: float, v_t: float) -> None:
    assert (operational_tsr([run]) == 1.0) is success
    assert goal_completion(run) == g_t
    assert task_validity([run]) == v_t


def test_c615_operational_tsr() -> None:
    assert operational_tsr(TABLE) == 0.25


def test_c615_strict_tsr_counts_terminal_tasks_only() -> None:
    assert strict_tsr(TABLE) == pytest.approx(1 / 3)


def test_c615_gcr_all_terminal_and_event() -> None:
    assert gcr(TABLE) == pytest.approx(0.4375)
    assert gcr(TABLE, tasks="terminal") == pytest.approx(1.75 / 3)
    assert round(gcr(TABLE, tasks="terminal") or 0, 4) == 0.5833
    assert gcr(TABLE, tasks="event") == 0.0


def test_c615_completed_run_rate() -> None:
    assert completed_run_rate(TABLE) == 0.75


def test_c615_validity_is_task_macro_not_pooled() -> None:
    validity = task_validity(TABLE)
    assert validity == pytest.approx((0.9 + 0.5 + 0.0625 + 1.0) / 4)
    assert round(validity or 0, 4) == 0.6156
    pooled = pooled_acceptance_rate(TABLE)
    assert pooled == pytest.approx(18 / 95)
    assert round(pooled or 0, 4) == 0.1895
    summary = validity_summary(TABLE)
    assert summary.validity == validity and summary.pooled_acceptance_rate == pooled
    assert summary.validity != summary.pooled_acceptance_rate


@pytest.mark.parametrize("status", ["parse_failure", "empty_plan"])
def test_parse_failure_and_empty_plan_stay_in_the_denominator(status: RunStatus) -> None:
    failed = _run("t5", status, (T, T), 0, 0)
    runs = [*TABLE, failed]
    assert operational_tsr(runs) == pytest.approx(1 / 5)
    assert gcr(runs) == pytest.approx(1.75 / 5)
    assert completed_run_rate(runs) == pytest.approx(3 / 5)
    assert endpoint(failed) == "interrupted"
    # zero attempts: no v_t (0/0); left out of the mean, counted separately
    assert task_validity(runs) == task_validity(TABLE)
    assert zero_attempt_tasks(runs) == 1
    assert validity_summary(runs).scored_tasks == 4


def test_empty_queue_after_rejections_still_reads_completed() -> None:
    rejected_all = _run("t6", "completed", (F, F), 0, 4)
    assert endpoint(rejected_all) == "completed_zero"
    assert completed_run_rate([rejected_all]) == 1.0
    assert task_validity([rejected_all]) == 0.0


def test_every_non_completed_status_scores_zero_even_with_true_conditions() -> None:
    for status in RUN_STATUSES[1:]:
        run = _run("x", status, (T, T), 1, 1)
        assert goal_completion(run) == 0.0
        assert operational_tsr([run]) == 0.0
        assert endpoint(run) == "interrupted"


def test_endpoints_are_exclusive_and_sum_to_the_tasks() -> None:
    assert [endpoint(r) for r in TABLE] == [
        "success",
        "completed_partial",
        "interrupted",
        "completed_zero",
    ]
    counts = endpoint_counts(TABLE)
    assert list(counts) == ["interrupted", "completed_zero", "completed_partial", "success"]
    assert sum(counts.values()) == len(TABLE)


def test_required_gates_decide_success() -> None:
    gated = TaskRun("g", "terminal_state", "completed", (T, F), 1, 1, required=(0,))
    assert operational_tsr([gated]) == 1.0
    assert goal_completion(gated) == 0.5
    assert endpoint(gated) == "success"


def test_reference_coverage_ignores_bindings_and_success() -> None:
    a = TaskRun(
        "a", "terminal_state", "completed", (T,), 1, 2,
        reference_key_types=frozenset({"pick", "place", "open"}),
        attempted_types=frozenset({"pick", "open", "wait"}),
    )  # fmt: skip
    b = TaskRun(
        "b", "terminal_state", "parse_failure", (F,), 0, 0,
        reference_key_types=frozenset({"turn_on"}),
    )  # fmt: skip
    no_ref = TaskRun("c", "terminal_state", "completed", (T,), 1, 1)
    assert reference_coverage([a, b, no_ref]) == pytest.approx((2 / 3 + 0) / 2)


def test_record_validation() -> None:
    with pytest.raises(ValueError, match=r"accepted attempts 3 not within 0\.\.2"):
        _run("bad", "completed", (T,), 3, 2)
    with pytest.raises(ValueError, match="status 'done'"):
        _run("bad", "done", (T,), 0, 0)  # type: ignore[arg-type]


# C.6.1
def test_c61_pass_rate_and_mean_score() -> None:
    assert pass_rate([1, 0, 1, 1]) == 0.75
    assert mean_score([1.0, 0.2, 0.9, 0.5]) == pytest.approx(0.65)


@pytest.mark.parametrize(
    "fn", [pass_rate, mean_score, operational_tsr, strict_tsr, gcr, task_validity,
           completed_run_rate, pooled_acceptance_rate, reference_coverage],
)  # fmt: skip
def test_c61_no_tasks_is_none_never_zero(fn: object) -> None:
    assert fn([]) is None  # type: ignore[operator]
