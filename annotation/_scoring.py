"""Scoring math of the gated rubric (spec ego2act.md §3), as pure functions.

Per subgoal a Task level t in 0..3 and a Physics state (a level 0..4, N/A, unattempted or
unresolved) combine into T (mean of all t), P (mean over numerically scored windows only) and the
final S = sqrt(T100 * P100). Missing stays missing: it is never filled with zero, except for the
rule that a rollout attempting nothing (T = 0, P undefined) scores S = 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

TASK_MAX: Final = 3
PHYSICS_MAX: Final = 4


class Mark(StrEnum):
    """Non-numeric per-subgoal outcomes."""

    NA = "NA"  # physics window not inspectable (allowed at P1 only); excluded from P
    UNATTEMPTED = "-"  # physics: task level was 0, nothing attempted; excluded from P
    UNRESOLVED = "?"  # a reached gate could not be decided: the whole axis is withheld


TaskOutcome = int | Mark  # 0..3 or UNRESOLVED
PhysicsOutcome = int | Mark  # 0..4, NA, UNATTEMPTED or UNRESOLVED


@dataclass(frozen=True)
class Score:
    """The scores of one rated video. ``None`` means missing/undefined, never zero."""

    t100: float | None
    p100: float | None
    s: float | None
    coverage: float | None  # share of physics windows scored numerically
    t_native: float | None = None
    p_native: float | None = None
    n_subgoals: int = 0
    n_scored_windows: int = 0

    def as_dict(self) -> dict[str, float | int | None]:
        return {
            "T100": self.t100,
            "P100": self.p100,
            "S": self.s,
            "coverage": self.coverage,
            "T_native": self.t_native,
            "P_native": self.p_native,
            "n_subgoals": self.n_subgoals,
            "n_scored_windows": self.n_scored_windows,
        }


def geometric_final(t100: float | None, p100: float | None) -> float | None:
    """Final S from the 0–100 axis scores, with the T = 0 rule and missing kept missing."""
    if p100 is not None and t100 is not None:
        return math.sqrt(t100 * p100)
    if t100 == 0:
        return 0.0
    return None


def score(task: Sequence[TaskOutcome], physics: Sequence[PhysicsOutcome]) -> Score:
    """Score one video from per-subgoal Task levels and Physics outcomes.

    ``task[i]`` and ``physics[i]`` belong to the same subgoal. A Physics window whose Task level is
    0 must be UNATTEMPTED (the human rubric sets it automatically); passing a number there is an
    error, because it would silently put an unattempted window into P.
    """
    if len(task) != len(physics):
        raise ValueError(f"{len(task)} task levels but {len(physics)} physics outcomes")
    for i, (t, p) in enumerate(zip(task, physics, strict=True)):
        _check_task(i, t)
        _check_physics(i, p)
        if t == 0 and p not in (Mark.UNATTEMPTED, Mark.UNRESOLVED, Mark.NA):
            raise ValueError(f"subgoal {i + 1}: task level 0 means physics is unattempted ('-')")
    n = len(task)
    t_native: float | None
    if n == 0 or any(t == Mark.UNRESOLVED for t in task):
        t_native = None
    else:
        t_native = sum(int(t) for t in task) / n
    scored = [int(p) for p in physics if not isinstance(p, Mark)]
    p_native: float | None
    if any(p == Mark.UNRESOLVED for p in physics) or not scored:
        p_native = None
    else:
        p_native = sum(scored) / len(scored)
    t100 = None if t_native is None else 100.0 * t_native / TASK_MAX
    p100 = None if p_native is None else 100.0 * p_native / PHYSICS_MAX
    return Score(
        t100=t100,
        p100=p100,
        s=geometric_final(t100, p100),
        coverage=(len(scored) / n) if n else None,
        t_native=t_native,
        p_native=p_native,
        n_subgoals=n,
        n_scored_windows=len(scored),
    )


def mean_of_scores(values: Sequence[float | None]) -> float | None:
    """Mean over available values (missing skipped); None when nothing is available."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def aggregate(scores: Sequence[Score]) -> float | None:
    """Model-level Agg: the mean of per-video S (not the geometric mean of mean T and mean P)."""
    return mean_of_scores([s.s for s in scores])


def _check_task(i: int, t: TaskOutcome) -> None:
    if isinstance(t, Mark):
        if t != Mark.UNRESOLVED:
            raise ValueError(f"subgoal {i + 1}: task level must be 0..3 or '?', got {t.value!r}")
    elif not 0 <= t <= TASK_MAX:
        raise ValueError(f"subgoal {i + 1}: task level must be 0..3, got {t}")


def _check_physics(i: int, p: PhysicsOutcome) -> None:
    if not isinstance(p, Mark) and not 0 <= p <= PHYSICS_MAX:
        raise ValueError(f"subgoal {i + 1}: physics level must be 0..4, got {p}")


def parse_levels(text: str, *, axis: str) -> list[int | Mark]:
    """Parse a comma list such as ``0,3,3`` or ``-,NA,?,4`` (the CLI's notation)."""
    out: list[int | Mark] = []
    for k, raw in enumerate(text.split(",")):
        tok = raw.strip()
        if tok in ("-", "NA", "?"):
            out.append(Mark(tok))
        elif tok.upper() == "NA":
            out.append(Mark.NA)
        elif tok.isdigit():
            out.append(int(tok))
        else:
            raise ValueError(f"{axis} item {k + 1}: {tok!r} is not a level, '-', 'NA' or '?'")
    return out
