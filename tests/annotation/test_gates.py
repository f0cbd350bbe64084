"""Gate walk semantics beyond the spec table: pending answers, N/A, unattempted, live scores."""

from __future__ import annotations

import pytest

from annotation import Answer, Mark, evaluate_subgoal, load_rubric, score_subgoals

P, F, NA, U = Answer.PASS, Answer.FAIL, Answer.NA, Answer.UNRESOLVED


def test_fail_disables_later_gates_and_keeps_their_answers_out() -> None:
    r = evaluate_subgoal({"T1": P, "T2": F, "T3": P, "P1": P, "P2": P, "P3": P, "P4": P})
    assert r.task.outcome == 1 and r.task.reached == 2  # T3 not reached, not a failure
    assert r.physics.outcome == 4


def test_pending_answers_point_to_next_gate() -> None:
    r = evaluate_subgoal({"T1": P})
    assert r.task.outcome is None and r.task.next_gate == 1 and not r.complete


def test_task_zero_locks_physics_as_unattempted() -> None:
    r = evaluate_subgoal({"T1": F, "P1": P, "P2": P})
    assert r.physics.outcome is Mark.UNATTEMPTED and r.physics.reached == 0


def test_na_only_at_p1() -> None:
    assert evaluate_subgoal({"T1": P, "T2": P, "T3": P, "P1": NA}).physics.outcome is Mark.NA
    with pytest.raises(ValueError, match="only at the first"):
        evaluate_subgoal({"T1": P, "T2": P, "T3": P, "P1": P, "P2": NA})


def test_unresolved_withholds_axis() -> None:
    a = evaluate_subgoal({"T1": P, "T2": P, "T3": P, "P1": P, "P2": U})
    b = evaluate_subgoal({"T1": P, "T2": P, "T3": P, "P1": P, "P2": P, "P3": P, "P4": P})
    live = score_subgoals([a, b])
    assert live.score.p100 is None and live.score.t100 == 100 and live.score.s is None


def test_live_score_is_provisional_until_all_subgoals_complete() -> None:
    done = evaluate_subgoal({"T1": P, "T2": P, "T3": P, "P1": P, "P2": P, "P3": P, "P4": F})
    todo = evaluate_subgoal({"T1": P})
    live = score_subgoals([done, todo])
    assert live.provisional and live.n_complete == 1 and live.score.t100 == 100
    assert live.score.p100 == 75


def test_rubric_loads_with_all_gates_and_examples() -> None:
    rubric = load_rubric()
    assert rubric.task_gates == ("T1", "T2", "T3")
    assert rubric.physics_gates == ("P1", "P2", "P3", "P4")
    for gid in rubric.task_gates + rubric.physics_gates:
        g = rubric.gate(gid)
        assert g.question and g.pass_examples and g.fail_examples
    assert rubric.gate("P1").allows_na and not rubric.gate("P2").allows_na
