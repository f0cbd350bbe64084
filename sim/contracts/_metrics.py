"""Run records and the Ego2World run-level metrics, exactly as defined (spec B.8 / C.6.15).

Everything is task-macro over a fixed denominator: every assigned task counts, whatever its
status, so a planner cannot raise its score by failing to parse. Three things stay apart
because the paper's point is that they differ: action *acceptance* (validity), run
*completion* (the queue emptied) and goal *attainment* (contract conditions TRUE).

Decisions where the spec is silent:

- A task with zero attempts has no validity ``v_t`` (0/0). It is left out of the validity mean
  and counted by :func:`zero_attempt_tasks`; :func:`validity_summary` reports both together.
- Success needs at least one condition: a record with no conditions never succeeds.
- Reference coverage skips tasks whose reference has no key action types (undefined).
- Empty inputs give ``None``, never 0, so "no data" cannot read as "all failed".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sim.contracts._contract import CONTRACT_KINDS, ContractKind
from sim.contracts._truth import Truth, satisfied

RunStatus = Literal[
    "completed", "execution_blocked", "parse_failure", "empty_plan", "aborted", "budget_exhausted"
]
RUN_STATUSES: tuple[RunStatus, ...] = (
    "completed",
    "execution_blocked",
    "parse_failure",
    "empty_plan",
    "aborted",
    "budget_exhausted",
)
Endpoint = Literal["interrupted", "completed_zero", "completed_partial", "success"]
ENDPOINTS: tuple[Endpoint, ...] = ("interrupted", "completed_zero", "completed_partial", "success")
TaskSelection = Literal["all", "terminal", "event"]


@dataclass(frozen=True)
class TaskRun:
    """One task's outcome under one configuration: status, condition values, attempt counts.

    ``attempts`` and ``accepted_attempts`` are the task's own primitive attempts (planner
    actions; whether executor repairs count is the caller's choice, but it must be the same for
    every configuration). ``required`` are the gate indices; ``None`` means all conditions.
    """

    task_id: str
    kind: ContractKind
    status: RunStatus
    conditions: tuple[Truth, ...]
    accepted_attempts: int
    attempts: int
    reference_key_types: frozenset[str] = frozenset()
    attempted_types: frozenset[str] = frozenset()
    required: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if self.kind not in CONTRACT_KINDS:
            raise ValueError(f"{self.task_id}: kind {self.kind!r} not in {CONTRACT_KINDS}")
        if self.status not in RUN_STATUSES:
            raise ValueError(f"{self.task_id}: status {self.status!r} not in {RUN_STATUSES}")
        if not 0 <= self.accepted_attempts <= self.attempts:
            raise ValueError(
                f"{self.task_id}: accepted attempts {self.accepted_attempts} "
                f"not within 0..{self.attempts}"
            )
        if self.required is not None and any(
            not 0 <= i < len(self.conditions) for i in self.required
        ):
            raise ValueError(f"{self.task_id}: required index out of range")

    @property
    def completed(self) -> bool:
        return self.status == "completed"

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "kind": self.kind,
            "status": self.status,
            "conditions": [v.value for v in self.conditions],
            "accepted_attempts": self.accepted_attempts,
            "attempts": self.attempts,
            "reference_key_types": sorted(self.reference_key_types),
            "attempted_types": sorted(self.attempted_types),
            "required": None if self.required is None else list(self.required),
        }


def _mean(values: Iterable[float]) -> float | None:
    seen = list(values)
    return sum(seen) / len(seen) if seen else None


def _select(runs: Iterable[TaskRun], tasks: TaskSelection) -> list[TaskRun]:
    if tasks == "all":
        return list(runs)
    kind = "terminal_state" if tasks == "terminal" else "accepted_event"
    return [r for r in runs if r.kind == kind]


def succeeded(run: TaskRun) -> bool:
    """Completed and every required condition TRUE (UNKNOWN fails)."""
    if not run.completed or not run.conditions:
        return False
    gates = range(len(run.conditions)) if run.required is None else run.required
    return all(satisfied(run.conditions[i]) for i in gates)


def operational_tsr(runs: Iterable[TaskRun]) -> float | None:
    """Share of *all* tasks that succeeded; interrupted runs count as failures."""
    return _mean(float(succeeded(r)) for r in runs)


def strict_tsr(runs: Iterable[TaskRun]) -> float | None:
    """Operational success over terminal-state tasks only (event tasks leave the denominator)."""
    return operational_tsr(_select(runs, "terminal"))


def goal_completion(run: TaskRun) -> float:
    """g_t: fraction of conditions TRUE if the run completed, else 0 (even if some hold)."""
    if not run.completed or not run.conditions:
        return 0.0
    return sum(satisfied(v) for v in run.conditions) / len(run.conditions)


def gcr(runs: Iterable[TaskRun], *, tasks: TaskSelection = "all") -> float | None:
    """Goal completion ratio: mean g_t over the selected tasks (all, terminal or event)."""
    return _mean(goal_completion(r) for r in _select(runs, tasks))


def task_validity(runs: Iterable[TaskRun]) -> float | None:
    """Task-macro action validity: mean over tasks of accepted/attempts (zero-attempt excluded).

    This is *not* the pooled accepted/attempted ratio, which long rejected loops dominate.
    """
    return _mean(r.accepted_attempts / r.attempts for r in runs if r.attempts > 0)


def zero_attempt_tasks(runs: Iterable[TaskRun]) -> int:
    """Tasks without any attempt, which :func:`task_validity` leaves out (v_t is 0/0)."""
    return sum(1 for r in runs if r.attempts == 0)


def pooled_acceptance_rate(runs: Iterable[TaskRun]) -> float | None:
    """All accepted attempts over all attempts, pooled across tasks.

    A diagnostic only: never report it as validity (spec C.6.15: 18/95 vs task-macro 0.6156).
    """
    seen = list(runs)
    attempts = sum(r.attempts for r in seen)
    return sum(r.accepted_attempts for r in seen) / attempts if attempts else None


@dataclass(frozen=True)
class ValiditySummary:
    """Task-macro validity with the tasks it could not score, and the pooled diagnostic."""

    validity: float | None
    scored_tasks: int
    zero_attempt_tasks: int
    pooled_acceptance_rate: float | None


def validity_summary(runs: Iterable[TaskRun]) -> ValiditySummary:
    seen = list(runs)
    zero = zero_attempt_tasks(seen)
    return ValiditySummary(
        task_validity(seen), len(seen) - zero, zero, pooled_acceptance_rate(seen)
    )


def completed_run_rate(runs: Iterable[TaskRun]) -> float | None:
    """Share of tasks whose queue emptied; says nothing about goals."""
    return _mean(float(r.completed) for r in runs)


def reference_coverage(runs: Iterable[TaskRun]) -> float | None:
    """Macro-mean share of the reference's key action types the agent attempted (diagnostic).

    No check of bindings or success. Tasks whose reference lists no key types are skipped.
    """
    return _mean(
        len(r.reference_key_types & r.attempted_types) / len(r.reference_key_types)
        for r in runs
        if r.reference_key_types
    )


def endpoint(run: TaskRun) -> Endpoint:
    """The mutually exclusive endpoint of a task record (spec B.8, Fig. 2)."""
    if not run.completed:
        return "interrupted"
    if succeeded(run):
        return "success"
    if any(satisfied(v) for v in run.conditions):
        return "completed_partial"
    return "completed_zero"


def endpoint_counts(runs: Iterable[TaskRun]) -> dict[Endpoint, int]:
    """Counts per endpoint, every endpoint present, in display order; they sum to the runs."""
    counts: dict[Endpoint, int] = dict.fromkeys(ENDPOINTS, 0)
    for r in runs:
        counts[endpoint(r)] += 1
    return counts


def pass_rate(passed: Sequence[bool | int]) -> float | None:
    """Mean of binary outcomes; ``None`` for no tasks (never 0)."""
    return _mean(float(bool(b)) for b in passed)


def mean_score(scores: Sequence[float]) -> float | None:
    """Mean of continuous scores; ``None`` for no tasks (never 0)."""
    return _mean(float(s) for s in scores)
