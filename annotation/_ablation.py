"""Rubric ablation runner (spec ego2act.md §5.5 (A), Table 18, §9 item 26).

From the gate decisions recorded in pilot ("record all gates") mode, each video's native Task
and Physics scores are recomputed per rater under rubric variants — the full sequential rubric,
one gate removed (it auto-passes: :func:`annotation.without_gate`), or no hierarchy (count the
passed gates: :func:`annotation.independent_count`) — and compared with the mean holistic rating
of the video on the native scale. MAE is computed per rater and then averaged across raters.

Choices the spec leaves open:

- Every variant is scored on the same records: a (video, rater) record enters an axis only if
  all of that axis's gates were answered pass/fail for every subgoal that needs them (N/A at
  P1 allowed). A record with an unanswered or unresolved gate there is left out of that axis.
- Physics windows use the full-rubric Task level: t_i = 0 leaves the window unattempted under
  every variant, and a window N/A at P1 stays N/A under every variant ("No P1" included:
  removing a gate does not make an uninspectable window inspectable).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from annotation._gates import (
    PHYSICS_GATES,
    TASK_GATES,
    Answer,
    independent_count,
    walk,
    without_gate,
)
from annotation._scoring import Mark, PhysicsOutcome, TaskOutcome, score

FULL = "Full rubric"
INDEPENDENT = "No hierarchy (independent)"
TASK_VARIANTS: tuple[str, ...] = (FULL, *(f"No {g}" for g in TASK_GATES), INDEPENDENT)
PHYSICS_VARIANTS: tuple[str, ...] = (FULL, *(f"No {g}" for g in PHYSICS_GATES), INDEPENDENT)


@dataclass(frozen=True)
class GateRecord:
    """One rater's recorded gate answers for one video.

    Attributes:
        video_id: The video.
        rater: Who answered (MAE is averaged across raters).
        subgoals: Per subgoal, gate id (``T1``…``P4``) → ``pass``/``fail``/``na``/``unresolved``
            (strings or :class:`annotation.Answer`); a missing key is an unanswered gate.
    """

    video_id: str
    rater: str
    subgoals: tuple[Mapping[str, str | Answer], ...]


@dataclass(frozen=True)
class AblationRow:
    """One line of Table 18."""

    axis: str
    variant: str
    mae: float
    delta_mae: float
    n_records: int
    n_raters: int

    def as_dict(self) -> dict[str, str | float | int]:
        """The row as a flat dict."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class AblationTable:
    """Rows in Table 18 order: Task variants, then Physics variants."""

    rows: tuple[AblationRow, ...]

    def to_rows(self) -> list[dict[str, str | float | int]]:
        """Rows as dicts: axis, variant, mae, delta_mae, n_records, n_raters."""
        return [r.as_dict() for r in self.rows]

    def get(self, axis: str, variant: str) -> AblationRow:
        """The row of one axis and variant."""
        for r in self.rows:
            if (r.axis, r.variant) == (axis, variant):
                return r
        raise KeyError((axis, variant))

    def markdown(self, digits: int = 3) -> str:
        """Table 18 as Markdown: Axis | Variant | MAE | ΔMAE."""
        lines = ["| Axis | Variant | MAE | ΔMAE |", "|---|---|---|---|"]
        for r in self.rows:
            d = f"{r.delta_mae:+.{digits}f}" if r.variant != FULL else "0"
            lines.append(f"| {r.axis.capitalize()} | {r.variant} | {r.mae:.{digits}f} | {d} |")
        return "\n".join(lines)


def _answers(sub: Mapping[str, str | Answer], gates: Sequence[str]) -> list[Answer | None]:
    out: list[Answer | None] = []
    for g in gates:
        a = sub.get(g)
        out.append(None if a is None else Answer(a))
    return out


def _level(
    answers: list[Answer | None], variant: str, gates: Sequence[str], *, na_first: bool
) -> int | Mark | None:
    if variant == FULL:
        return walk(answers, allow_na_first=na_first).outcome
    if variant == INDEPENDENT:
        return independent_count(answers)
    return without_gate(answers, gates.index(variant.removeprefix("No ")))


def _complete(answers: list[Answer | None], *, na_first: bool) -> bool:
    """All gates answered pass/fail (or N/A at the first physics gate)."""
    if na_first and answers and answers[0] is Answer.NA:
        return True
    return all(a in (Answer.PASS, Answer.FAIL) for a in answers)


def task_scores(record: GateRecord) -> dict[str, float] | None:
    """Native T (0–3) of one record under every Task variant, or None if it cannot be scored."""
    subs = [_answers(s, TASK_GATES) for s in record.subgoals]
    if not subs or not all(_complete(a, na_first=False) for a in subs):
        return None
    out: dict[str, float] = {}
    for variant in TASK_VARIANTS:
        levels: list[TaskOutcome] = [
            _int(_level(a, variant, TASK_GATES, na_first=False)) for a in subs
        ]
        t = score(levels, [Mark.NA] * len(levels)).t_native
        assert t is not None  # every level is numeric here
        out[variant] = t
    return out


def physics_scores(record: GateRecord) -> dict[str, float] | None:
    """Native P (0–4) of one record under every Physics variant, or None if none is defined."""
    task_levels: list[TaskOutcome] = []
    windows: list[list[Answer | None] | None] = []  # None: unattempted (full-rubric t_i = 0)
    for s in record.subgoals:
        t = walk(_answers(s, TASK_GATES), allow_na_first=False).outcome
        if not isinstance(t, int):
            return None  # Task incomplete or unresolved: attempted windows are unknown
        task_levels.append(t)
        p = _answers(s, PHYSICS_GATES)
        if t == 0:
            windows.append(None)
        elif not _complete(p, na_first=True):
            return None
        else:
            windows.append(p)
    out: dict[str, float] = {}
    for variant in PHYSICS_VARIANTS:
        phys: list[PhysicsOutcome] = []
        for w in windows:
            if w is None:
                phys.append(Mark.UNATTEMPTED)
            elif w[0] is Answer.NA:
                phys.append(Mark.NA)
            else:
                phys.append(_int(_level(w, variant, PHYSICS_GATES, na_first=True)))
        p_native = score(task_levels, phys).p_native
        if p_native is None:
            return None  # no numerically scored window under any variant
        out[variant] = p_native
    return out


def _int(level: int | Mark | None) -> int:
    if not isinstance(level, int):
        raise AssertionError(f"complete answers gave a non-numeric level {level!r}")
    return level


def _holistic_mean(value: float | Sequence[float | None] | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float):
        return None if math.isnan(value) else float(value)
    vals = [float(v) for v in value if v is not None and not math.isnan(v)]
    return sum(vals) / len(vals) if vals else None


def ablation_table(
    records: Sequence[GateRecord],
    holistic_task: Mapping[str, float | Sequence[float | None]],
    holistic_physics: Mapping[str, float | Sequence[float | None]],
) -> AblationTable:
    """Rescore recorded gate decisions under every variant; MAE against holistic ratings.

    Args:
        records: Gate answers per (video, rater).
        holistic_task: Video → holistic Task rating(s) on 0–3; several are averaged.
        holistic_physics: Video → holistic Physics rating(s) on 0–4 (None/NaN = N/A).

    Returns:
        Table 18: per axis and variant the MAE (mean over raters of each rater's MAE) and
        ΔMAE against the full rubric.
    """
    rows: list[AblationRow] = []
    for axis, variants, scorer, holistic in (
        ("task", TASK_VARIANTS, task_scores, holistic_task),
        ("physics", PHYSICS_VARIANTS, physics_scores, holistic_physics),
    ):
        errors: dict[str, dict[str, list[float]]] = {}  # rater → variant → |error| per record
        n_records = 0
        for rec in records:
            ref = _holistic_mean(holistic.get(rec.video_id))
            got = scorer(rec)
            if ref is None or got is None:
                continue
            n_records += 1
            per = errors.setdefault(rec.rater, {v: [] for v in variants})
            for v in variants:
                per[v].append(abs(got[v] - ref))
        maes = {
            v: (sum(sum(e[v]) / len(e[v]) for e in errors.values()) / len(errors))
            if errors
            else math.nan
            for v in variants
        }
        for v in variants:
            rows.append(AblationRow(axis, v, maes[v], maes[v] - maes[FULL], n_records, len(errors)))
    return AblationTable(tuple(rows))
