"""Human consensus for one video (spec ego2act.md §3.2).

Per axis the arithmetic mean of the available ratings (Physics N/A is missing, never zero); the
final score is the geometric mean of the axis means, with a mean Task of 0 giving 0.
"""

from __future__ import annotations

from collections.abc import Sequence

from annotation._scoring import PHYSICS_MAX, TASK_MAX, Score, geometric_final, mean_of_scores


def consensus(task: Sequence[float | None], physics: Sequence[float | None]) -> Score:
    """Consensus score from per-rater native ratings (Task 0–3, Physics 0–4, None = N/A)."""
    t = mean_of_scores(task)
    p = mean_of_scores(physics)
    t100 = None if t is None else 100.0 * t / TASK_MAX
    p100 = None if p is None else 100.0 * p / PHYSICS_MAX
    n_p = sum(1 for v in physics if v is not None)
    return Score(
        t100=t100,
        p100=p100,
        s=geometric_final(t100, p100),
        coverage=(n_p / len(physics)) if physics else None,
        t_native=t,
        p_native=p,
        n_subgoals=len(task),
        n_scored_windows=n_p,
    )
