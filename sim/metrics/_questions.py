"""Temporal questions (spec §4.4, App. E.1–E.2): records, the rule grader, run scores.

Scores are 1 (correct), 0.5 (partially correct) or 0 (incorrect, evasive or absent); a question
whose trigger was never reached (never asked) is excluded (``None``).

Rule grader, per family:

- ``count``: the integer must match exactly (``3``, ``three``, ``three times``). A range that
  contains the truth (``about 3–4``) scores ``range_score``, 0.5 by default: the spec leaves
  "partial" to the judge (gap §9.9) and this is the one partial case the rules can see.
- ``duration`` / ``elapsed``: |answer − truth| ≤ 5 ticks (:data:`DURATION_TOLERANCE_TICKS`);
  seconds and minutes are converted with the question's tick length Δ (``3 seconds`` at
  Δ = 1.2 s is 2.5 ticks). A range scores 1 if both ends are within tolerance, ``range_score``
  if it overlaps [truth − 5, truth + 5], else 0.
- ``order`` / ``recall``: the stated yes/no must equal the truth, so a false premise must be
  rejected (truth ``False`` + "yes" → 0). An unreadable or evasive answer scores 0.

A :class:`SemanticGrader` (an LLM judge, later) is asked first when given; it returns 1, 0.5, 0,
or ``None`` to defer to the rules.

Category score = the mean over a run's graded questions of a category (``elapsed`` counts under
``duration``, the paper's five categories being order, count, duration, recall and proactive).
Overall = pooled over every graded question **and** proactive request of the run, not a mean of
the category means.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol

from sim.metrics._aggregate import RunValue, pooled_mean
from sim.metrics._answers import read_count, read_duration, read_yes_no
from sim.metrics._errors import MetricsError, check_order, check_tick

Family = Literal["order", "count", "duration", "recall", "elapsed"]
FAMILIES: tuple[Family, ...] = ("order", "count", "duration", "recall", "elapsed")
QA_CATEGORIES = ("order", "count", "duration", "recall", "proactive")
DURATION_TOLERANCE_TICKS = 5
KITCHEN_TICK_S = 1.2
_BOOL_FAMILIES = ("order", "recall")
SCORES = (0.0, 0.5, 1.0)


@dataclass(frozen=True)
class Question:
    """One temporal question of an episode.

    Attributes:
        question_id: unique within the episode.
        family: :data:`FAMILIES`.
        truth: ``bool`` for order/recall; a count for ``count``; ticks for duration/elapsed.
        asked_tick: the tick the user asked; ``None`` = its trigger never came (excluded).
        answer: the assistant's answer text; ``None`` = never answered (scores 0).
        answer_tick: the delivery tick of the answer.
        tick_s: the world's tick length Δ in seconds, to read answers given in seconds.
        text: the question as asked, for a semantic judge.
    """

    question_id: str
    family: Family
    truth: bool | int
    asked_tick: int | None
    answer: str | None = None
    answer_tick: int | None = None
    tick_s: float = KITCHEN_TICK_S
    text: str = ""

    def __post_init__(self) -> None:
        name = f"Question {self.question_id!r}"
        if self.family not in FAMILIES:
            raise MetricsError(
                f"{name}.family must be one of {', '.join(FAMILIES)}, not {self.family!r}"
            )
        if self.family in _BOOL_FAMILIES:
            if not isinstance(self.truth, bool):
                raise MetricsError(f"{name}.truth must be true or false for {self.family}")
        elif isinstance(self.truth, bool) or not isinstance(self.truth, int) or self.truth < 0:
            raise MetricsError(f"{name}.truth must be a whole number ≥ 0 for {self.family}")
        check_tick(name, "asked_tick", self.asked_tick, optional=True)
        check_tick(name, "answer_tick", self.answer_tick, optional=True)
        check_order(name, "asked_tick", self.asked_tick, "answer_tick", self.answer_tick)
        if self.asked_tick is None and self.answer is not None:
            raise MetricsError(f"{name}.answer is set but asked_tick is None (never asked)")
        if not self.tick_s > 0:
            raise MetricsError(f"{name}.tick_s must be > 0 seconds, not {self.tick_s!r}")

    @property
    def category(self) -> str:
        return "duration" if self.family == "elapsed" else self.family


class SemanticGrader(Protocol):
    """A judge that compares an answer with the facts: 1, 0.5, 0, or ``None`` to defer."""

    def __call__(self, answer: str, question: Question) -> float | None: ...


def _range_grade(low: float, high: float, lo_ok: float, hi_ok: float, partial: float) -> float:
    if lo_ok <= low and high <= hi_ok:
        return 1.0
    return partial if low <= hi_ok and lo_ok <= high else 0.0


def rule_score(question: Question, *, range_score: float = 0.5) -> float:
    """The rule grader's score for an asked question (see the module doc)."""
    answer = question.answer
    if answer is None:
        return 0.0
    truth = question.truth
    if question.family in _BOOL_FAMILIES:
        said = read_yes_no(answer)
        return 1.0 if said is not None and said == truth else 0.0
    if question.family == "count":
        read = read_count(answer)
        if read is None:
            return 0.0
        low, high = read
        if low == high:
            return 1.0 if low == truth else 0.0
        return range_score if low <= truth <= high else 0.0
    read = read_duration(answer, question.tick_s)
    if read is None:
        return 0.0
    tol = DURATION_TOLERANCE_TICKS
    return _range_grade(read[0], read[1], truth - tol, truth + tol, range_score)


def grade_question(
    question: Question, semantic: SemanticGrader | None = None, *, range_score: float = 0.5
) -> float | None:
    """1, 0.5 or 0 for an asked question, ``None`` for one never asked (excluded).

    An unanswered question scores 0 without asking the judge.
    """
    if range_score not in SCORES:
        raise MetricsError(f"range_score must be 0, 0.5 or 1, not {range_score!r}")
    if question.asked_tick is None:
        return None
    if question.answer is not None and semantic is not None:
        verdict = semantic(question.answer, question)
        if verdict is not None:
            if verdict not in SCORES:
                raise MetricsError(
                    f"semantic grade of question {question.question_id!r} must be 0, 0.5 or 1, "
                    f"not {verdict!r}"
                )
            return float(verdict)
    return rule_score(question, range_score=range_score)


@dataclass(frozen=True)
class TemporalQA:
    """A run's temporal-QA scores: per category (:data:`QA_CATEGORIES`) and pooled overall."""

    categories: dict[str, RunValue]
    overall: RunValue


def temporal_qa(
    questions: Iterable[tuple[str, Question]],
    proactive: Iterable[tuple[str, float | None]] = (),
    semantic: SemanticGrader | None = None,
    *,
    range_score: float = 0.5,
) -> TemporalQA:
    """Score a run: ``questions`` and ``proactive`` scores (from :func:`proactive_score`) come
    as ``(episode_id, item)`` pairs; ``None`` proactive scores are excluded requests."""
    graded: dict[str, list[tuple[str, float | None]]] = {c: [] for c in QA_CATEGORIES}
    for episode, question in questions:
        score = grade_question(question, semantic, range_score=range_score)
        graded[question.category].append((episode, score))
    graded["proactive"] = list(proactive)
    categories = {c: pooled_mean(graded[c]) for c in QA_CATEGORIES}
    overall = pooled_mean(pair for c in QA_CATEGORIES for pair in graded[c])
    return TemporalQA(categories, overall)
