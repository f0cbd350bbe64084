"""The staged, gated VLM judge of spec ego2act.md §4 (and its §5.5 / §6 control modes).

``judge_video`` runs one video: Task plan, Physics window plan and dependency review from the
goal and initial image alone, then the Task gates T1–T3 and Physics gates P1–P4 over uniform
frames, each gate one call with optional ``inspect_video`` requests, then T, P, S through
``annotation``. ``rule_scores`` re-derives the scores from recorded answers (what
``storage.JudgeRuns.rescore`` needs).
"""

from judge._pipeline._config import (
    MAX_CONTINUITY_WINDOWS,
    MODES,
    PROMPT_VERSION,
    JudgeCancelled,
    JudgeConfig,
    Mode,
    PipelineError,
)
from judge._pipeline._continuity import offered_windows
from judge._pipeline._frames import FrameSampler, check_window, mid_bin_times, uniform_indices
from judge._pipeline._prompts import DATA_CLOSE, DATA_OPEN, prompt_digest
from judge._pipeline._replies import VqaAnswer
from judge._pipeline._result import GateResult, JudgeResult
from judge._pipeline._run import judge_video, run_config
from judge._pipeline._scoring import axis_score, rule_scores, vqa_score

__all__ = [
    "DATA_CLOSE",
    "DATA_OPEN",
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
    "prompt_digest",
    "rule_scores",
    "run_config",
    "uniform_indices",
    "vqa_score",
]
