"""``judge_video``: one video through the staged, gated judge (spec §4.6) or a control mode."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from judge.models import FrameImage, ModelAPI
from judge.video._config import MODES, PROMPT_VERSION, JudgeConfig, Mode, PipelineError
from judge.video._continuity import continuity_record, offered_windows
from judge.video._frames import FrameSampler, ReaderFactory, uniform_indices
from judge.video._prompts import prompt_digest
from judge.video._result import (
    JudgeResult,
    frame_record,
    inspection_record,
    vqa_rows,
)
from judge.video._scoring import SEQUENTIAL, SIMPLE_VQA, rule_scores
from judge.video._session import Progress, Session, StopCheck
from judge.video._stages import AxisInput, GateRunner, plan_physics, plan_task, review
from judge.video._vqa import simple_vqa
from storage import RecordedAnswers
from storage.media import VideoIndex
from storage.media.continuity import Scan

# Share of the progress bar each step takes: 3 planning calls, then 7 gates.
_STEPS = ("plan_task", "plan_physics", "review", "T1", "T2", "T3", "P1", "P2", "P3", "P4")


def run_config(config: JudgeConfig, mode: str, continuity: Scan | None = None) -> dict[str, object]:
    """The configuration stored with a run: settings, mode, prompt version and digest, and the
    continuity windows offered when the run offers them."""
    versions = {"mode": mode, "prompt_version": PROMPT_VERSION, "prompt_digest": prompt_digest()}
    return config.as_dict() | versions | continuity_record(config, continuity)


def judge_video(
    api: ModelAPI,
    video_path: Path,
    index: VideoIndex,
    goal: str,
    initial_image_rgb: npt.NDArray[np.uint8],
    *,
    mode: Mode = "gated",
    config: JudgeConfig | None = None,
    should_stop: StopCheck | None = None,
    progress: Progress | None = None,
    reader_factory: ReaderFactory | None = None,
    continuity: Scan | None = None,
) -> JudgeResult:
    """Judge one video against its goal and initial image.

    Args:
        api: The model provider (it validates schemas, enforces the spend cap, records calls).
        video_path: The video file; decoded at source time through ``storage.media``.
        index: Its frame index.
        goal: The goal text G (passed to the model as data only).
        initial_image_rgb: The initial scene f₁ (HxWx3 uint8 RGB).
        mode: ``gated`` (spec §4.6), ``independent`` (every gate asked, both rules scored,
            §5.5) or ``simple_vqa`` (one holistic call, §6).
        config: Run settings; defaults follow the paper.
        should_stop: Checked before every call; True stops the run (JudgeCancelled).
        progress: Called with (fraction, note) as stages finish.
        reader_factory: Frame reader to use (tests count decodes with it).
        continuity: The video's continuity scan; needed when ``config.continuity_windows``
            is above 0 (its strongest windows are named at the Physics gates), else unused.

    Raises:
        MediaError: The video (or the frames it needs) cannot be decoded; nothing was spent.
        SpendCapReached: A required call could not be afforded ("spend cap reached ($x of $y)").
        CallFailed: The provider gave up on a call.
        PipelineError: Replies kept breaking the rules, or the input is unusable.
        JudgeCancelled: ``should_stop`` said so.
    """
    config = config or JudgeConfig()
    config.check()
    if mode not in MODES:
        raise PipelineError(f"unknown judge mode {mode!r} (use {', '.join(MODES)})")
    if not goal.strip():
        raise PipelineError("the case has an empty goal; nothing to judge against")
    if mode == SIMPLE_VQA and config.continuity_windows > 0:
        raise PipelineError("continuity windows are offered at gates; simple_vqa has none")
    offered = offered_windows(config, continuity)
    s = Session(api, config, should_stop=should_stop, progress=progress)
    sampler = FrameSampler(
        video_path, index, max_side=config.max_side, jpeg_quality=config.jpeg_quality,
        reader_factory=reader_factory,
    )  # fmt: skip
    try:
        f1 = sampler.image(initial_image_rgb, "F1", "initial_image")
        # Both axes' samples come from one forward pass over the file. The first frame is
        # decoded before any call (an unreadable video costs nothing); the rest decode on a
        # helper thread while the three planning calls, which need only G and f1, are out.
        wanted = uniform_indices(index, config.task_frames)
        if mode != SIMPLE_VQA:
            wanted += uniform_indices(index, config.physics_frames)
        sampler.prefetch(sorted(wanted)[:1])
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="judge-frames")
        decoding = pool.submit(sampler.prefetch, wanted)
        pool.shutdown(wait=False)
        if mode == SIMPLE_VQA:
            decoding.result()
            task_frames = sampler.uniform(config.task_frames, "T", "uniform_task")
            vqa = simple_vqa(s, goal, f1, task_frames)
            s.progress(1.0, "simple VQA answered")
            rec = RecordedAnswers(0, mode, (), (), vqa_rows(vqa))
            return JudgeResult(
                **_common(s, sampler, mode, config, task_frames, continuity),
                task_plan=(), physics_plan=(), review=(), gates=(), inspections=(),
                scores=rule_scores(rec), primary=SIMPLE_VQA, vqa=vqa,
            )  # fmt: skip
        try:
            task_plan = plan_task(s, goal, f1)
            s.progress(_fraction("plan_task"), f"task plan: {len(task_plan)} subgoal(s)")
            draft = plan_physics(s, goal, f1)
            s.progress(_fraction("plan_physics"), f"physics plan: {len(draft)} window(s)")
            review_rows = review(s, goal, f1, draft)
            s.progress(_fraction("review"), "dependency review done")
        finally:
            decoding.result()  # never leave the helper thread using the reader
        task_frames = sampler.uniform(config.task_frames, "T", "uniform_task")
        physics_frames = sampler.uniform(config.physics_frames, "P", "uniform_physics")

        def on_gate(gate: str) -> None:
            s.progress(_fraction(gate, before=True), f"gate {gate}")

        runner = GateRunner(s, sampler, on_gate)
        independent = mode == "independent"
        gates = runner.run_axis(AxisInput("task", goal, f1, task_plan, task_frames, independent))
        gates += runner.run_axis(
            AxisInput("physics", goal, f1, draft, physics_frames, independent, offered)
        )
        s.progress(1.0, "gates done")
        answers = tuple(r for g in gates for r in g.rows)
        rec = RecordedAnswers(
            0, mode, tuple(p.sid for p in task_plan), tuple(p.sid for p in draft), answers
        )
        inspected = tuple(f for b in runner.blocks for f in b.frames)
        return JudgeResult(
            **_common(s, sampler, mode, config, task_frames + physics_frames + inspected,
                      continuity),
            task_plan=task_plan, physics_plan=draft, review=review_rows, gates=tuple(gates),
            inspections=tuple(inspection_record(b) for b in runner.blocks),
            scores=rule_scores(rec), primary=SEQUENTIAL,
        )  # fmt: skip
    finally:
        sampler.close()


def _fraction(step: str, *, before: bool = False) -> float:
    k = _STEPS.index(step) + (0 if before else 1)
    return k / len(_STEPS)


def _common(
    s: Session,
    sampler: FrameSampler,
    mode: str,
    config: JudgeConfig,
    frames: tuple[FrameImage, ...],
    continuity: Scan | None,
) -> dict[str, Any]:
    """The JudgeResult fields every mode fills the same way."""
    return {
        "mode": mode,
        "prompt_version": PROMPT_VERSION,
        "config": run_config(config, mode, continuity),
        "frames": tuple(frame_record(f) for f in frames),
        "cost_usd": s.spent_usd,
        "tokens_in": s.tokens_in,
        "tokens_out": s.tokens_out,
        "calls": s.calls,
        "frames_decoded": sampler.frames_decoded,
        "frames_sent": len(frames),
        "images_sent": s.images_sent,
        "notes": tuple(s.notes),
    }
