"""Gate answers → levels: the sequential early-exit walk and its ablations.

A subgoal's Task level is the number of gates passed before the first failure; later gates are
"not reached" (never failures). Physics works the same way, with N/A allowed only at P1 and the
window locked as *unattempted* when the Task level is 0. Answers may be missing while an annotator
is still working: the walk then says which gate is next.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from annotation._scoring import Mark, PhysicsOutcome, Score, TaskOutcome, score

TASK_GATES: tuple[str, ...] = ("T1", "T2", "T3")
PHYSICS_GATES: tuple[str, ...] = ("P1", "P2", "P3", "P4")
GATES_ALL: tuple[str, ...] = TASK_GATES + PHYSICS_GATES


class Answer(StrEnum):
    """What an annotator (or judge) answered at one gate."""

    PASS = "pass"
    FAIL = "fail"
    NA = "na"  # P1 only: nothing inspectable in this window
    UNRESOLVED = "unresolved"


@dataclass(frozen=True)
class Walk:
    """Result of walking one axis's gates for one subgoal.

    ``outcome`` is None while the walk is pending (an unanswered gate was reached).
    ``reached`` is how many gates were asked; gates at index >= reached are disabled.
    ``next_gate`` is the index of the first unanswered reached gate, or None.
    """

    outcome: int | Mark | None
    reached: int
    next_gate: int | None


def walk(answers: Sequence[Answer | None], *, allow_na_first: bool) -> Walk:
    """Walk gates in order with early exit."""
    level = 0
    for k, a in enumerate(answers):
        if a is None:
            return Walk(None, k + 1, k)
        if a is Answer.PASS:
            level += 1
            continue
        if a is Answer.FAIL:
            return Walk(level, k + 1, None)
        if a is Answer.UNRESOLVED:
            return Walk(Mark.UNRESOLVED, k + 1, None)
        if a is Answer.NA:
            if not (allow_na_first and k == 0):
                raise ValueError(f"N/A is allowed only at the first physics gate, not gate {k + 1}")
            return Walk(Mark.NA, k + 1, None)
    return Walk(level, len(answers), None)


def task_walk(answers: Mapping[str, Answer]) -> Walk:
    """Walk T1→T3 for one subgoal."""
    return walk([answers.get(g) for g in TASK_GATES], allow_na_first=False)


def physics_walk(answers: Mapping[str, Answer], task: Walk) -> Walk:
    """Walk P1→P4 for one subgoal; unattempted (and locked) when its Task level is 0."""
    if task.outcome == 0:
        return Walk(Mark.UNATTEMPTED, 0, None)
    return walk([answers.get(g) for g in PHYSICS_GATES], allow_na_first=True)


def independent_count(answers: Sequence[Answer | None]) -> int:
    """Ablation: count passes over every gate, ignoring order (needs all gates recorded)."""
    return sum(1 for a in answers if a is Answer.PASS)


def without_gate(answers: Sequence[Answer | None], removed: int) -> int | Mark | None:
    """Ablation: the sequential level with gate ``removed`` auto-passed."""
    patched = [Answer.PASS if k == removed else a for k, a in enumerate(answers)]
    return walk(patched, allow_na_first=True).outcome


@dataclass(frozen=True)
class SubgoalResult:
    """Both axes of one subgoal."""

    task: Walk
    physics: Walk

    @property
    def complete(self) -> bool:
        return self.task.outcome is not None and self.physics.outcome is not None


def evaluate_subgoal(answers: Mapping[str, Answer]) -> SubgoalResult:
    """Walk both axes of one subgoal from its recorded answers (gate id → answer)."""
    t = task_walk(answers)
    return SubgoalResult(t, physics_walk(answers, t))


@dataclass(frozen=True)
class LiveScore:
    """The score of a video as far as it has been annotated.

    ``score`` covers complete subgoals only; ``provisional`` is True while any subgoal is
    incomplete, so the GUI can say so instead of showing a number as if it were final.
    """

    score: Score
    provisional: bool
    n_complete: int
    n_subgoals: int


def score_subgoals(results: Sequence[SubgoalResult]) -> LiveScore:
    """Score a video from per-subgoal results (complete ones only while annotation goes on)."""
    done = [r for r in results if r.complete]
    task: list[TaskOutcome] = [_outcome(r.task) for r in done]
    physics: list[PhysicsOutcome] = [_outcome(r.physics) for r in done]
    return LiveScore(score(task, physics), len(done) < len(results), len(done), len(results))


def _outcome(w: Walk) -> int | Mark:
    assert w.outcome is not None
    return w.outcome
