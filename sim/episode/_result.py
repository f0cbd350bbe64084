"""Score a finished episode against its task contract (Ego2World B.8 definitions, per task)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from sim.contracts import Truth, evaluate
from sim.episode._trace import EpisodeResult

if TYPE_CHECKING:
    from sim.episode._runner import EpisodeRunner


def episode_result(
    runner: EpisodeRunner, status: str, end_reason: str | None = None, ticks: int | None = None
) -> EpisodeResult:
    """Conditions on the final graph, success, GCR, validity and counts for one run.

    Success needs status ``completed`` and every condition TRUE; GCR is the TRUE fraction for a
    completed run and 0 otherwise; validity is accepted/attempted for this task (absent when
    nothing was attempted). ``ticks``: the last tick recorded, when a run that raised ended
    before the world's current tick was (default: the world's tick).
    """
    ticks = runner.tick if ticks is None else ticks
    graph = runner.world.graph
    result = evaluate(runner.scenario.contract, graph, tuple(runner.events))
    conditions = tuple(
        replace(c, witness_tick=runner.witnesses[c.index] if c.value is Truth.T else None)
        for c in result.conditions
    )
    values = [c.value for c in conditions]
    completed = status == "completed"
    true = sum(1 for v in values if v is Truth.T)
    success = completed and bool(values) and true == len(values)
    attempts = [a for a in runner.actions if a.verdict is not None]
    accepted = [a for a in attempts if a.accepted]
    metrics: dict[str, float] = {
        "success": float(success),
        "gcr": true / len(values) if completed and values else 0.0,
        "conditions_true": float(true),
        "conditions": float(len(values)),
        "completed": float(completed),
        "ticks": float(ticks),
        "seconds": ticks * runner.world.delta,
        "attempts": float(len(attempts)),
        "accepted": float(len(accepted)),
        "rejected": float(len(attempts) - len(accepted)),
        "execution_failures": float(
            sum(1 for a in accepted if a.outcome and a.outcome.startswith("failed"))
        ),
        "anomalies": float(len(runner.anomaly_log)),
    }
    if attempts:
        metrics["validity"] = len(accepted) / len(attempts)
    return EpisodeResult(status, ticks, conditions, metrics, success, end_reason)
