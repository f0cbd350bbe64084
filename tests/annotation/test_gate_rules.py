"""Which gates may be answered, decided in the core (spec ego2act.md §9 items 9–10).

The rules: a gate is asked only after every earlier gate of its axis passed (early exit);
Physics is locked as unattempted when T1 failed (t = 0); N/A exists only at P1; in the pilot
("record all gates") mode the early exit is lifted but the t = 0 lock and N/A stay.
"""

from __future__ import annotations

import itertools

import pytest

from annotation import (
    GATES_ALL,
    Answer,
    GateMode,
    GateRuleError,
    UserError,
    allowed_answers,
    blocked_answers,
    check_answer,
    check_answers,
    enabled_gates,
    evaluate_subgoal,
)

P, F, NA, U = Answer.PASS, Answer.FAIL, Answer.NA, Answer.UNRESOLVED
ALL = GateMode.RECORD_ALL


def gui_rule(answers: dict[str, Answer]) -> tuple[str, ...]:
    """The rule the gates panel used before it asked the core (kept here as the reference)."""
    res = evaluate_subgoal(answers)
    task = list(GATES_ALL[: min(res.task.reached, 3)])
    if res.physics.outcome == "-":
        return tuple(task)
    return tuple(task + list(GATES_ALL[3 : 3 + res.physics.reached]))


def test_enabled_gates_match_the_gui_rule_on_every_reachable_answer_set() -> None:
    # every combination of answers the gated walk can hold (N/A only at P1, per axis a prefix)
    task_sets = [dict(zip(("T1", "T2", "T3"), c, strict=False)) for c in _prefixes(3, (P, F, U))]
    phys_sets = [
        dict(zip(("P1", "P2", "P3", "P4"), c, strict=False)) for c in _prefixes(4, (P, F, U, NA))
    ]
    checked = 0
    for t, p in itertools.product(task_sets, phys_sets):
        answers = t | p
        try:
            expected = gui_rule(answers)
        except ValueError:
            continue  # N/A after P1: the walk refuses it, and so does the core (below)
        assert enabled_gates(answers) == expected, answers
        checked += 1
    assert checked > 500


def _prefixes(n: int, choices: tuple[Answer, ...]) -> list[tuple[Answer, ...]]:
    return [c for k in range(n + 1) for c in itertools.product(choices, repeat=k)]


def test_refusals_name_the_gate_and_why() -> None:
    with pytest.raises(GateRuleError, match="T3 not reached: T2 was answered no") as e:
        check_answer({"T1": P, "T2": F}, "T3", P)
    assert e.value.gate == "T3" and isinstance(e.value, UserError)
    with pytest.raises(GateRuleError, match="P2 cannot be answered: T1 was answered no"):
        check_answer({"T1": F}, "P2", P)
    with pytest.raises(GateRuleError, match="T is 0 and physics is unattempted"):
        check_answer({"T1": F, "P1": P}, "P1", F)
    with pytest.raises(GateRuleError, match="T2 not reached: T1 is not answered yet"):
        check_answer({}, "T2", P)
    with pytest.raises(GateRuleError, match="P3 not reached: P2 is unresolved"):
        check_answer({"T1": P, "P1": P, "P2": U}, "P3", F)
    with pytest.raises(GateRuleError, match="N/A is allowed only at P1"):
        check_answer({"T1": P, "P1": P}, "P2", NA)
    with pytest.raises(GateRuleError, match="unknown gate 'T9'"):
        check_answer({}, "T9", P)
    # physics may be answered while the Task walk is still open (as the panel has always allowed)
    check_answer({}, "P1", P)
    check_answer({"T1": P, "T2": U}, "P1", NA)
    # clearing is never forbidden: it cannot create an answer the rubric refuses
    check_answer({"T1": F, "T2": P}, "T2", None)


def test_allowed_answers() -> None:
    assert allowed_answers({}, "T1") == {P, F, U}
    assert allowed_answers({"T1": P}, "P1") == {P, F, U, NA}
    assert allowed_answers({"T1": F}, "P1") == frozenset()
    assert allowed_answers({"T1": P, "T2": F}, "T3") == frozenset()


def test_a_no_makes_later_answers_unreached_and_says_which() -> None:
    done = {"T1": P, "T2": P, "T3": P, "P1": P, "P2": P, "P3": F}
    assert blocked_answers(done | {"T2": F}) == ("T3",)
    assert blocked_answers(done | {"T1": F}) == ("T2", "T3", "P1", "P2", "P3")
    assert blocked_answers(done | {"P1": NA}) == ("P2", "P3")
    assert blocked_answers(done | {"T1": U}) == ("T2", "T3")  # unresolved T: physics still asked
    assert blocked_answers(done | {"T1": P}) == ()
    # an unanswered earlier gate only pauses the walk: later answers wait, they are not dropped
    assert blocked_answers({k: v for k, v in done.items() if k != "T1"}) == ()


def test_a_whole_stored_set_is_checked_the_same_way() -> None:
    check_answers({"T1": P, "T2": F, "P1": P, "P2": P})
    check_answers({"T2": P})  # T1 cleared after T2 was answered: waiting, not forbidden
    with pytest.raises(GateRuleError, match="T3 not reached: T2 was answered no"):
        check_answers({"T1": P, "T2": F, "T3": P})
    with pytest.raises(GateRuleError, match="P4 cannot be answered: T1 was answered no"):
        check_answers({"T1": F, "P4": P})
    with pytest.raises(GateRuleError, match="N/A is allowed only at P1"):
        check_answers({"T1": P, "P1": P, "P3": NA})


def test_record_all_mode_lifts_the_early_exit_only() -> None:
    assert enabled_gates({"T1": F}, mode=ALL) == ("T1", "T2", "T3")
    assert enabled_gates({"T1": P, "P1": F}, mode=ALL) == GATES_ALL
    check_answer({"T1": P, "T2": F}, "T3", P, mode=ALL)
    check_answers({"T1": P, "T2": F, "T3": P, "P1": F, "P2": P}, mode=ALL)
    assert blocked_answers({"T1": P, "T2": F, "T3": P}, mode=ALL) == ()
    with pytest.raises(GateRuleError, match="physics is unattempted"):
        check_answer({"T1": F, "T2": P}, "P1", P, mode=ALL)
    with pytest.raises(GateRuleError, match="P1 is N/A"):
        check_answer({"T1": P, "P1": NA}, "P2", P, mode=ALL)
    assert blocked_answers({"T1": F, "T2": P, "P1": P}, mode=ALL) == ("P1",)
