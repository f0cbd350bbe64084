"""The staged, gated VLM judge of spec ego2act.md §4 (and its §5.5 / §6 control modes), and its
``judge.video`` job.

``judge_video`` runs one video: Task plan, Physics window plan and dependency review from the
goal and initial image alone, then the Task gates T1–T3 and Physics gates P1–P4 over uniform
frames, each gate one call with optional ``inspect_video`` requests, then T, P, S through
``annotation``. ``rule_scores`` re-derives the scores from recorded answers (what
``storage.JudgeRuns.rescore`` needs). ``queue_judge`` queues one ``judge.video`` job per video;
the job (``run_judge_video``) prepares on the project's holder and judges anywhere (a local
worker or a Ray cluster). ``scripted_judge`` and ``perfect_judge`` play the judge's side for
tests and demos; :mod:`judge.video.loopback` plays them on the loopback server.
"""

from judge._prompts import DATA_CLOSE, DATA_OPEN
from judge.video._config import (
    MAX_CONTINUITY_WINDOWS,
    MODES,
    PROMPT_VERSION,
    JudgeCancelled,
    JudgeConfig,
    Mode,
    PipelineError,
)
from judge.video._continuity import offered_windows
from judge.video._frames import FrameSampler, check_window, mid_bin_times, uniform_indices
from judge.video._job import prepare_judge_video, run_judge_video
from judge.video._prompts import prompt_digest
from judge.video._queue import JUDGE_KIND, queue_judge, video_judge_refusal
from judge.video._replies import VqaAnswer
from judge.video._result import GateResult, JudgeResult
from judge.video._run import judge_video, run_config
from judge.video._scoring import axis_score, rule_scores, vqa_score
from judge.video._scripts import perfect_judge, scripted_judge

__all__ = [
    "DATA_CLOSE",
    "DATA_OPEN",
    "JUDGE_KIND",
    "MAX_CONTINUITY_WINDOWS",
    "MODES",
    "PROMPT_VERSION",
    "FrameSampler",
    "GateResult",
    "JudgeCancelled",
    "JudgeConfig",
    "JudgeResult",
    "Mode",
    "PipelineError",
    "VqaAnswer",
    "axis_score",
    "check_window",
    "judge_video",
    "mid_bin_times",
    "offered_windows",
    "perfect_judge",
    "prepare_judge_video",
    "prompt_digest",
    "queue_judge",
    "rule_scores",
    "run_config",
    "run_judge_video",
    "scripted_judge",
    "uniform_indices",
    "video_judge_refusal",
    "vqa_score",
]
