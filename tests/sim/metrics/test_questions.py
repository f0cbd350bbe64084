"""Temporal questions (IVG spec §4.4): the spec's test cases, the rule grader's readings, the
semantic-grader hook and the pooled overall score."""

from __future__ import annotations

import pytest

from sim.metrics import (
    MetricsError,
    Question,
    grade_question,
    read_count,
    read_duration,
    read_yes_no,
    temporal_qa,
)


def ask(family: str, truth: bool | int, answer: str | None, **kw: object) -> Question:
    return Question("q", family, truth, 100, answer, None if answer is None else 104, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("question", "score"),
    [
        pytest.param(ask("count", 3, "three times"), 1.0, id="count 3, 'three times'"),
        pytest.param(ask("count", 3, "about 3–4"), 0.5, id="count 3, 'about 3–4' (partial)"),
        pytest.param(ask("duration", 20, "25 ticks"), 1.0, id="duration 20, 25 ticks"),
        pytest.param(ask("duration", 20, "26 ticks"), 0.0, id="duration 20, 26 ticks"),
        pytest.param(ask("recall", False, "No, you haven't chopped it yet."), 1.0, id="no = 1"),
        pytest.param(ask("recall", False, "Yes, you did."), 0.0, id="false premise: yes = 0"),
        pytest.param(ask("count", 3, None), 0.0, id="asked, never answered"),
        pytest.param(Question("q", "count", 3, None), None, id="trigger never reached"),
    ],
)
def test_the_spec_question_table(question: Question, score: float | None) -> None:
    assert grade_question(question) == score


def test_a_range_can_score_zero_instead_of_half() -> None:
    assert grade_question(ask("count", 3, "about 3–4"), range_score=0.0) == 0.0
    assert grade_question(ask("count", 3, "5 or 6 times")) == 0.0
    with pytest.raises(MetricsError, match="range_score"):
        grade_question(ask("count", 3, "3"), range_score=0.3)


@pytest.mark.parametrize(
    ("answer", "truth", "score"),
    [
        ("3", 3, 1.0),
        ("You've visited the stove twice.", 2, 1.0),
        ("In 2 minutes you went there 4 times", 4, 1.0),  # the number before "times" wins
        ("four", 3, 0.0),
        ("You haven't visited it, not once.", 0, 1.0),
        ("I'm not sure", 3, 0.0),
    ],
)
def test_counts_match_exactly(answer: str, truth: int, score: float) -> None:
    assert grade_question(ask("count", truth, answer)) == score


@pytest.mark.parametrize(
    ("answer", "score"),
    [
        ("24 seconds", 1.0),  # 20 ticks at Δ = 1.2 s
        ("about 30 s", 1.0),  # 25 ticks: the edge of ±5
        ("31 seconds", 0.0),  # 25.8 ticks
        ("15 ticks", 1.0),
        ("14", 0.0),  # a bare number is ticks
        ("18-22 ticks", 1.0),
        ("20 to 40 ticks", 0.5),  # overlaps the tolerance band
        ("half a minute or so", 0.0),  # unreadable by the rules
    ],
)
def test_durations_have_five_ticks_of_tolerance_in_ticks_or_seconds(
    answer: str, score: float
) -> None:
    assert grade_question(ask("duration", 20, answer)) == score
    assert grade_question(ask("elapsed", 20, answer)) == score


def test_seconds_use_the_questions_tick_length() -> None:
    assert read_duration("3 seconds", 1.2) == pytest.approx((2.5, 2.5))
    assert read_duration("1 minute 12 seconds", 1.2) == pytest.approx((60.0, 60.0))
    assert grade_question(ask("duration", 30, "3 seconds", tick_s=0.1)) == 1.0


def test_the_readers() -> None:
    assert read_count("about three or four") == (3.0, 4.0)
    assert read_count("nothing to count") is None
    assert read_yes_no("Nope.") is False
    assert read_yes_no("You did, at tick 40.") is True
    assert read_yes_no("No idea, sorry") is None
    assert read_yes_no("You didn't.") is False
    assert read_yes_no("Not at all.") is False


def test_order_questions_need_the_right_relation() -> None:
    assert grade_question(ask("order", True, "Yes, the onion came first.")) == 1.0
    assert grade_question(ask("order", True, "No.")) == 0.0
    assert grade_question(ask("order", False, "I can't tell.")) == 0.0


class Judge:
    def __init__(self, verdict: float | None) -> None:
        self.verdict, self.calls = verdict, 0

    def __call__(self, answer: str, question: Question) -> float | None:
        self.calls += 1
        return self.verdict


def test_a_semantic_grader_decides_first_or_defers_to_the_rules() -> None:
    question = ask("order", True, "The onion came before the tomato.")
    assert grade_question(question) == 0.0  # the rules cannot read it
    assert grade_question(question, Judge(1)) == 1.0
    assert grade_question(ask("count", 3, "three"), Judge(None)) == 1.0
    silent = Judge(1)
    assert grade_question(ask("count", 3, None), silent) == 0.0
    assert silent.calls == 0  # an absent answer is 0 without asking
    with pytest.raises(MetricsError, match="semantic"):
        grade_question(question, Judge(0.7))


def test_the_overall_score_pools_questions_and_requests() -> None:
    questions = [("a", ask("order", True, "yes")) for _ in range(3)]
    questions += [("b", ask("count", 3, "two")), ("b", Question("x", "recall", True, None))]
    qa = temporal_qa(questions, proactive=[("b", 1), ("c", None)])
    assert qa.categories["order"].value == 1.0
    assert qa.categories["count"].value == 0.0
    assert qa.categories["recall"].value is None  # never asked: excluded, not 0
    assert qa.categories["proactive"].value == 1.0
    assert qa.overall.value == pytest.approx(4 / 5)  # the category mean would be 2/3
    assert qa.overall.episodes == ("a", "b")


def test_elapsed_questions_count_under_duration() -> None:
    qa = temporal_qa([("a", ask("elapsed", 10, "10 ticks"))])
    assert qa.categories["duration"].value == 1.0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"family": "colour"}, "family"),
        ({"family": "recall", "truth": 1}, "truth"),
        ({"family": "count", "truth": True}, "truth"),
        ({"family": "duration", "truth": -4}, "truth"),
        ({"asked_tick": -1}, "asked_tick"),
        ({"answer_tick": 90}, "answer_tick"),
        ({"tick_s": 0.0}, "tick_s"),
        ({"asked_tick": None, "answer_tick": None}, "answer"),
    ],
)
def test_bad_questions_name_the_field(kwargs: dict[str, object], field: str) -> None:
    base: dict[str, object] = {
        "question_id": "q", "family": "count", "truth": 3, "asked_tick": 100,
        "answer": "3", "answer_tick": 104,
    }  # fmt: skip
    with pytest.raises(MetricsError, match=field):
        Question(**(base | kwargs))  # type: ignore[arg-type]
