"""Typed records of audited judge runs: what the judge writes and what the trace view reads.

Storage does not import the judge, so these are the shapes both sides agree on; the judge builds
them from its results and :class:`storage.JudgeRuns` turns rows back into them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from annotation import Mark, PhysicsOutcome, Score, TaskOutcome, parse_levels

Roi = tuple[float, float, float, float]


@dataclass(frozen=True)
class RunSubgoal:
    """A planned subgoal. ``axis`` is task, physics, or physics_review (the dependency review)."""

    axis: str
    sid: str
    source: str = ""
    target: str | None = None
    action: str = ""
    end_state: str = ""
    requires: tuple[str, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class RunAnswer:
    """One gate row. ``gate`` is T1..P4, or VQA for the Simple VQA control (answer = level)."""

    axis: str
    gate: str
    sid: str
    answer: str  # yes | no | NA (VQA: the holistic level, or "null")
    unresolved: bool = False
    evidence_ids: tuple[str, ...] = ()
    timestamps_s: tuple[float, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class RunFrame:
    """A video frame the model saw, by the evidence id it cites."""

    evidence_id: str
    frame_index: int
    time_s: float
    roi: Roi | None = None
    origin: str = ""  # uniform_task | uniform_physics | inspect:N


@dataclass(frozen=True)
class RunInspection:
    """One ``inspect_video`` request and the frames it returned."""

    seq: int
    axis: str
    gate: str
    start_s: float
    end_s: float
    roi: Roi | None
    question: str
    expected_evidence: str
    n_frames: int
    evidence_ids: tuple[str, ...]


@dataclass(frozen=True)
class RunCall:
    """One model call as stored in ``judge_calls`` (images appear as evidence ids).

    The one record of a model call: a provider reports each call it makes as one
    (``judge.models.CallRecorder``), the judges store it as given, and
    :meth:`JudgeRuns.call_detail` reads it back."""

    stage: str
    prompt_version: str
    request: Mapping[str, Any]
    reply: str
    ok: bool
    error: str | None = None
    latency_s: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True)
class RuleScore:
    """A run's scores under one rule (sequential, independent, simple_vqa) and the levels."""

    rule: str
    score: Score
    task_levels: tuple[TaskOutcome, ...] = ()
    physics_levels: tuple[PhysicsOutcome, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return self.score.as_dict() | {
            "task_levels": [_level(v) for v in self.task_levels],
            "physics_levels": [_level(v) for v in self.physics_levels],
        }

    @classmethod
    def from_json(cls, rule: str, d: Mapping[str, Any]) -> RuleScore:
        def levels(key: str) -> tuple[int | Mark, ...]:
            raw = d.get(key) or []
            return tuple(parse_levels(",".join(raw), axis=key)) if raw else ()

        s = Score(
            d["T100"], d["P100"], d["S"], d["coverage"], d.get("T_native"), d.get("P_native"),
            d.get("n_subgoals", 0), d.get("n_scored_windows", 0),
        )  # fmt: skip
        return cls(rule, s, levels("task_levels"), levels("physics_levels"))


@dataclass(frozen=True)
class RunResult:
    """Everything :meth:`JudgeRuns.finish` writes for a finished run."""

    subgoals: tuple[RunSubgoal, ...]
    answers: tuple[RunAnswer, ...]
    frames: tuple[RunFrame, ...]
    inspections: tuple[RunInspection, ...]
    scores: Mapping[str, RuleScore]
    primary: str
    cost_usd: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    stats: Mapping[str, int | float] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)  # e.g. the Simple VQA reply, notes


@dataclass(frozen=True)
class RunSummary:
    """A ``judge_runs`` row."""

    id: int
    job_id: int | None
    video_id: str
    profile: str | None
    model: str | None
    mode: str
    prompt_version: str
    config: dict[str, Any]
    status: str  # running | done | failed | abandoned
    error: str | None
    t100: float | None
    p100: float | None
    s: float | None
    coverage: float | None
    scores: dict[str, Any]
    cost_usd: float
    tokens_in: int
    tokens_out: int
    created_at: str | None
    finished_at: str | None

    def rule_scores(self) -> dict[str, RuleScore]:
        """The stored scores of every rule, as records (empty until the run is done)."""
        return {k: RuleScore.from_json(k, v) for k, v in (self.scores.get("rules") or {}).items()}


@dataclass(frozen=True)
class GateTrace:
    axis: str
    gate: str
    rows: tuple[RunAnswer, ...]


@dataclass(frozen=True)
class InspectionTrace:
    inspection: RunInspection
    frames: tuple[RunFrame, ...]


@dataclass(frozen=True)
class CallSummary:
    """A call without its (large) request and reply; see :meth:`JudgeRuns.call_detail`."""

    seq: int
    stage: str
    ok: bool
    error: str | None
    latency_s: float
    tokens_in: int
    tokens_out: int
    cost_usd: float
    created_at: str | None


@dataclass(frozen=True)
class RunTrace:
    """Read model of one run for the trace view."""

    run: RunSummary
    task_plan: tuple[RunSubgoal, ...]
    physics_plan: tuple[RunSubgoal, ...]
    review: tuple[RunSubgoal, ...]
    gates: tuple[GateTrace, ...]
    inspections: tuple[InspectionTrace, ...]
    frames: tuple[RunFrame, ...]
    calls: tuple[CallSummary, ...]

    def frame(self, evidence_id: str) -> RunFrame | None:
        """The frame an evidence id names (to seek the player), or None if unknown."""
        return next((f for f in self.frames if f.evidence_id == evidence_id), None)

    @property
    def total_cost_usd(self) -> float:
        return sum(c.cost_usd for c in self.calls)

    @property
    def total_tokens(self) -> tuple[int, int]:
        return sum(c.tokens_in for c in self.calls), sum(c.tokens_out for c in self.calls)

    @property
    def total_latency_s(self) -> float:
        return sum(c.latency_s for c in self.calls)


@dataclass(frozen=True)
class RecordedAnswers:
    """What re-scoring needs: the plans' ids and every recorded answer, in asking order."""

    run_id: int
    mode: str
    task_sids: tuple[str, ...]
    physics_sids: tuple[str, ...]
    answers: tuple[RunAnswer, ...]


ScoreFn = Callable[[RecordedAnswers], Mapping[str, RuleScore]]


def _level(v: int | Mark) -> str:
    return v.value if isinstance(v, Mark) else str(v)


def roi_json(roi: Roi | None) -> str | None:
    return None if roi is None else json.dumps(list(roi))


def _roi(raw: str | None) -> Roi | None:
    if not raw:
        return None
    x, y, w, h = (float(v) for v in json.loads(raw))
    return (x, y, w, h)


def row_to_frame(r: Mapping[str, Any]) -> RunFrame:
    return RunFrame(r["evidence_id"], r["frame_index"], r["time_s"], _roi(r["roi"]), r["origin"])


def row_to_subgoal(r: Mapping[str, Any]) -> RunSubgoal:
    return RunSubgoal(r["axis"], r["sid"], r["source"] or "", r["target"], r["action"] or "",
                      r["end_state"] or "", tuple(json.loads(r["requires"] or "[]")),
                      r["reason"] or "")  # fmt: skip


def row_to_answer(r: Mapping[str, Any]) -> RunAnswer:
    return RunAnswer(r["axis"], r["gate"], r["sid"], r["answer"], bool(r["unresolved"]),
                     tuple(json.loads(r["evidence_ids"] or "[]")),
                     tuple(json.loads(r["timestamps_s"] or "[]")), r["note"] or "")  # fmt: skip


def row_to_inspection(r: Mapping[str, Any]) -> RunInspection:
    return RunInspection(r["seq"], r["axis"], r["gate"], r["start_s"], r["end_s"], _roi(r["roi"]),
                         r["question"] or "", r["expected_evidence"] or "", r["n_frames"],
                         tuple(json.loads(r["evidence_ids"] or "[]")))  # fmt: skip


def row_to_call_summary(r: Mapping[str, Any]) -> CallSummary:
    return CallSummary(r["seq"], r["stage"], bool(r["ok"]), r["error"], r["latency_s"] or 0.0,
                       r["tokens_in"] or 0, r["tokens_out"] or 0, r["cost_usd"] or 0.0,
                       r["created_at"])  # fmt: skip


def row_to_summary(r: Mapping[str, Any]) -> RunSummary:
    return RunSummary(
        id=r["id"], job_id=r["job_id"], video_id=r["video_id"], profile=r["profile"],
        model=r["model"], mode=r["mode"], prompt_version=r["prompt_version"],
        config=json.loads(r["config"] or "{}"), status=r["status"], error=r["error"],
        t100=r["t100"], p100=r["p100"], s=r["s"], coverage=r["coverage"],
        scores=json.loads(r["scores"] or "{}"), cost_usd=r["cost_usd"] or 0.0,
        tokens_in=r["tokens_in"] or 0, tokens_out=r["tokens_out"] or 0,
        created_at=r["created_at"], finished_at=r["finished_at"],
    )  # fmt: skip
