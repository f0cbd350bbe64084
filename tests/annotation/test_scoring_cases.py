"""The 24 unit-test cases of spec ego2act.md §3.3, one test each."""

from __future__ import annotations

import math

import pytest

from annotation import (
    Answer,
    Mark,
    Score,
    aggregate,
    consensus,
    geometric_final,
    independent_count,
    score,
    walk,
    without_gate,
)

NA, UN, Q = Mark.NA, Mark.UNATTEMPTED, Mark.UNRESOLVED
P, F = Answer.PASS, Answer.FAIL


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, abs_tol=5e-4)


@pytest.mark.parametrize(
    ("case", "task", "physics", "t100", "p100", "s"),
    [
        (1, [3, 3, 3], [4, 4, 4], 100, 100, 100),
        (2, [0, 3, 3], [UN, 4, 4], 66.667, 100, 81.650),
        (3, [0, 0, 0], [UN, UN, UN], 0, None, 0),
        (4, [1, 2, 3], [0, 4, 2], 66.667, 50, 57.735),
        (5, [3, 3], [NA, NA], 100, None, None),
        (6, [2, 2], [0, 0], 66.667, 0, 0),
        (7, [0, 2], [UN, 3], 33.333, 75, 50.0),
        (8, [3, 0, 0, 0], [4, UN, UN, UN], 25, 100, 50.0),
        (9, [3, 3, 2], [4, 3, 4], 88.889, 91.667, 90.267),
        (10, [1, 1], [4, 4], 33.333, 100, 57.735),
        (11, [3], [1], 100, 25, 50.0),
        (12, [2, Q], [4, 4], None, 100, None),
        (13, [3, 3], [4, Q], 100, None, None),
        (14, [0, 0], [Q, NA], 0, None, 0),
        (15, [2, 3], [4, NA], 83.333, 100, 91.287),
    ],
)
def test_video_scores(
    case: int,
    task: list[int | Mark],
    physics: list[int | Mark],
    t100: float | None,
    p100: float | None,
    s: float | None,
) -> None:
    got = score(task, physics)
    assert close(got.t100, t100), (case, got)
    assert close(got.p100, p100), (case, got)
    assert close(got.s, s), (case, got)


def test_case_15_coverage_is_half() -> None:
    assert score([2, 3], [4, NA]).coverage == 0.5


def test_case_16_consensus_is_mean_of_available() -> None:
    got = consensus([2.0, 3.0, 2.5], [4, None, 3])
    assert close(got.t100, 83.333) and close(got.p100, 87.5) and close(got.s, 85.391)


def test_case_17_consensus_mean_task_zero_gives_zero() -> None:
    got = consensus([0, 0], [None, None])
    assert got.t100 == 0 and got.p100 is None and got.s == 0


def test_case_18_agg_is_mean_of_s_not_g_of_means() -> None:
    v1 = Score(t100=100, p100=100, s=100, coverage=1)
    v2 = Score(t100=0, p100=None, s=0, coverage=0)
    assert aggregate([v1, v2]) == 50
    assert not close(geometric_final(50, 100), 50)  # G(means) would be 70.71


def test_case_19_agg_with_crossed_axes() -> None:
    v1 = Score(t100=100, p100=25, s=50, coverage=1)
    v2 = Score(t100=25, p100=100, s=50, coverage=1)
    assert aggregate([v1, v2]) == 50
    assert close(geometric_final(62.5, 62.5), 62.5)


def test_case_20_task_sequential_vs_independent() -> None:
    answers = [F, P, P]
    assert walk(answers, allow_na_first=False).outcome == 0
    assert independent_count(answers) == 2


def test_case_21_physics_sequential_vs_independent() -> None:
    answers = [P, F, P, P]
    assert walk(answers, allow_na_first=True).outcome == 1
    assert independent_count(answers) == 3


def test_case_22_ablation_no_t1() -> None:
    answers = [F, P, F]
    assert walk(answers, allow_na_first=False).outcome == 0
    assert without_gate(answers, 0) == 2


def test_case_23_geometric_mean_vs_rejected_rules() -> None:
    assert geometric_final(50, 50) == 50
    assert 50 * 50 / 100 == 25  # the normalized product rule the rubric rejects
    assert 0.7 * 100 + 0.3 * 0 == 70  # arithmetic A_0.7 compensates; G does not
    assert geometric_final(100, 0) == 0


def test_case_24_agg_differs_from_g_of_means() -> None:
    g = geometric_final(67.8, 63.0)
    assert g is not None and close(g, 65.356) and not close(g, 64.0)
