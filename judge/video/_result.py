"""What a judge run returns: plans, every gate's rows, frames, inspections, scores, costs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from judge.models import FrameImage
from judge.video._context import InspectionBlock
from judge.video._replies import VqaAnswer
from storage import RuleScore, RunAnswer, RunFrame, RunInspection, RunResult, RunSubgoal


@dataclass(frozen=True)
class GateResult:
    """One gate on one axis: who was asked, the rows, and the inspections made first.

    ``inspections`` are run-wide inspection numbers (``I{n}``); ``inspect_cut`` says why
    inspection stopped being offered, if it did (limit, budget share, spend cap).
    """

    axis: str
    gate: str
    asked: tuple[str, ...]
    rows: tuple[RunAnswer, ...]
    inspections: tuple[int, ...] = ()
    inspect_cut: str = ""


@dataclass(frozen=True)
class JudgeResult:
    """The outcome of :func:`judge_video`. ``scores`` maps a rule to its scores; ``primary``
    names the rule stored as the run's T/P/S (sequential, or simple_vqa for that mode)."""

    mode: str
    prompt_version: str
    config: Mapping[str, Any]
    task_plan: tuple[RunSubgoal, ...]
    physics_plan: tuple[RunSubgoal, ...]  # as planned; see ``review`` for the kept ordering
    review: tuple[RunSubgoal, ...]
    gates: tuple[GateResult, ...]
    frames: tuple[RunFrame, ...]
    inspections: tuple[RunInspection, ...]
    scores: Mapping[str, RuleScore]
    primary: str
    vqa: VqaAnswer | None = None
    cost_usd: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    calls: int = 0
    frames_decoded: int = 0
    frames_sent: int = 0
    images_sent: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def answers(self) -> tuple[RunAnswer, ...]:
        """Every gate row in asking order (for VQA mode: the two holistic rows)."""
        if self.vqa is not None:
            return vqa_rows(self.vqa)
        return tuple(r for g in self.gates for r in g.rows)

    @property
    def stats(self) -> dict[str, int | float]:
        return {"calls": self.calls, "frames_decoded": self.frames_decoded,
                "frames_sent": self.frames_sent, "images_sent": self.images_sent,
                "inspections": len(self.inspections)}  # fmt: skip

    def to_run_result(self) -> RunResult:
        """The records ``storage.JudgeRuns.finish`` writes."""
        extra: dict[str, Any] = {"notes": list(self.notes)}
        if self.vqa is not None:
            extra["vqa"] = self.vqa.as_dict()
        return RunResult(
            subgoals=self.task_plan + self.physics_plan + self.review,
            answers=self.answers,
            frames=self.frames,
            inspections=self.inspections,
            scores=self.scores,
            primary=self.primary,
            cost_usd=self.cost_usd,
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            stats=self.stats,
            extra=extra,
        )


def vqa_rows(v: VqaAnswer) -> tuple[RunAnswer, ...]:
    """Simple VQA as answer rows (gate VQA, answer = the holistic level or "null")."""
    physics = "null" if v.physics is None else str(v.physics)
    return (
        RunAnswer("task", "VQA", "video", str(v.task), note=v.reasoning),
        RunAnswer("physics", "VQA", "video", physics),
    )


def frame_record(f: FrameImage) -> RunFrame:
    return RunFrame(f.evidence_id, f.frame_index, f.time_s, f.roi, f.origin)


def inspection_record(b: InspectionBlock) -> RunInspection:
    w = b.window
    return RunInspection(
        seq=b.number,
        axis=b.axis,
        gate=b.gate,
        start_s=w.start_s,
        end_s=w.end_s,
        roi=w.roi,
        question=b.question,
        expected_evidence=b.expected_evidence,
        n_frames=w.n_frames,
        evidence_ids=tuple(f.evidence_id for f in b.frames),
    )
