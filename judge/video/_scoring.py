"""Recorded gate answers → per-subgoal levels → T, P, S under each rule.

Used both at the end of a run and by re-scoring (``JudgeRuns.rescore``), so a stored run always
re-scores to the numbers it was stored with. The math is ``annotation``'s: the early-exit walk,
the independent count and ``score``. The judge's Task and Physics plans are separate lists
(spec §4.3), so each axis is scored on its own list and S combines the two.
"""

from __future__ import annotations

from collections.abc import Sequence

from annotation import (
    PHYSICS_GATES,
    PHYSICS_MAX,
    TASK_GATES,
    TASK_MAX,
    Answer,
    Mark,
    PhysicsOutcome,
    Score,
    TaskOutcome,
    geometric_final,
    independent_count,
    score,
    walk,
)
from storage import RecordedAnswers, RuleScore, RunAnswer

SEQUENTIAL = "sequential"
INDEPENDENT = "independent"
SIMPLE_VQA = "simple_vqa"


def gate_answer(row: RunAnswer) -> Answer:
    """A recorded row as a rubric answer; the unresolved flag wins over yes/no."""
    if row.unresolved:
        return Answer.UNRESOLVED
    if row.answer == "NA":
        return Answer.NA if row.gate == "P1" else Answer.UNRESOLVED
    return Answer.PASS if row.answer == "yes" else Answer.FAIL


def _answers_by_subgoal(
    rows: Sequence[RunAnswer], sids: Sequence[str], gates: Sequence[str]
) -> dict[str, list[Answer | None]]:
    table: dict[str, list[Answer | None]] = {s: [None] * len(gates) for s in sids}
    for row in rows:
        if row.sid in table and row.gate in gates:
            table[row.sid][gates.index(row.gate)] = gate_answer(row)
    return table


def sequential_level(answers: Sequence[Answer | None], *, physics: bool) -> int | Mark:
    """Early-exit level; a gate that was reached but never answered leaves it undecided (?)."""
    outcome = walk(answers, allow_na_first=physics).outcome
    return Mark.UNRESOLVED if outcome is None else outcome


def independent_level(answers: Sequence[Answer | None], *, physics: bool) -> int | Mark:
    """Passes counted over every gate; NA at P1 stays excluded; any gap or ? withholds."""
    if physics and answers and answers[0] is Answer.NA:
        return Mark.NA
    if any(a is None or a is Answer.UNRESOLVED or a is Answer.NA for a in answers):
        return Mark.UNRESOLVED
    return independent_count(answers)


def axis_score(task: Sequence[TaskOutcome], physics: Sequence[PhysicsOutcome]) -> Score:
    """T over the Task plan, P over the Physics windows, S from both (annotation's math)."""
    t = score(task, [Mark.NA] * len(task))  # Physics ignored here: only T is read
    p = score([TASK_MAX] * len(physics), physics)  # Task ignored here: only P is read
    return Score(
        t100=t.t100,
        p100=p.p100,
        s=geometric_final(t.t100, p.p100),
        coverage=p.coverage,
        t_native=t.t_native,
        p_native=p.p_native,
        n_subgoals=len(task),
        n_scored_windows=p.n_scored_windows,
    )


def _rule(rec: RecordedAnswers, rule: str) -> RuleScore:
    level = sequential_level if rule == SEQUENTIAL else independent_level
    task_rows = _answers_by_subgoal(rec.answers, rec.task_sids, TASK_GATES)
    phys_rows = _answers_by_subgoal(rec.answers, rec.physics_sids, PHYSICS_GATES)
    task = tuple(level(task_rows[s], physics=False) for s in rec.task_sids)
    physics = tuple(level(phys_rows[s], physics=True) for s in rec.physics_sids)
    return RuleScore(rule, axis_score(task, physics), task, physics)


def vqa_score(task: int, physics: int | None) -> RuleScore:
    """Simple VQA mapping (spec §6): T = 100·s/3, P = 100·s/4 or unavailable, S = G(T, P)."""
    t100 = 100.0 * task / TASK_MAX
    p100 = None if physics is None else 100.0 * physics / PHYSICS_MAX
    p_native = None if physics is None else float(physics)
    s = Score(t100, p100, geometric_final(t100, p100), None, float(task), p_native, 1,
              0 if physics is None else 1)  # fmt: skip
    return RuleScore(SIMPLE_VQA, s, (task,), (Mark.NA if physics is None else physics,))


def rule_scores(rec: RecordedAnswers) -> dict[str, RuleScore]:
    """Every rule a run's mode supports, from its recorded answers (a ``storage.ScoreFn``)."""
    if rec.mode == SIMPLE_VQA:
        rows = {r.axis: r for r in rec.answers if r.gate == "VQA"}
        if "task" not in rows:
            return {}
        phys = rows.get("physics")
        p = None if phys is None or phys.answer == "null" else int(phys.answer)
        return {SIMPLE_VQA: vqa_score(int(rows["task"].answer), p)}
    out = {SEQUENTIAL: _rule(rec, SEQUENTIAL)}
    if rec.mode == "independent":
        out[INDEPENDENT] = _rule(rec, INDEPENDENT)
    return out
