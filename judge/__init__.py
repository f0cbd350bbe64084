"""VLM judges, model clients and the job runner (built in issue 3)."""

from judge._client import ModelCallFailed, OpenAIModel
from judge._kinds import JOB_KINDS, UnknownJobKindError, get_kind, register
from judge._pipeline import (
    MODES,
    PROMPT_VERSION,
    JudgeCancelled,
    JudgeConfig,
    JudgeResult,
    PipelineError,
    judge_video,
    rule_scores,
)
from judge._profiles import (
    ModelProfile,
    load_profile,
    resolve_api_key,
    save_profile,
    store_api_key,
)
from judge._queue import JUDGE_KIND, QueueError, queue_judge
from judge._scripted import ScriptedModel, perfect_judge, scripted_judge
from judge._video_job import run_judge_video
from judge._worker import WorkerStats, run_worker, stderr_log

__all__: list[str] = [
    "JOB_KINDS",
    "JUDGE_KIND",
    "MODES",
    "PROMPT_VERSION",
    "JudgeCancelled",
    "JudgeConfig",
    "JudgeResult",
    "ModelCallFailed",
    "ModelProfile",
    "OpenAIModel",
    "PipelineError",
    "QueueError",
    "ScriptedModel",
    "UnknownJobKindError",
    "WorkerStats",
    "get_kind",
    "judge_video",
    "load_profile",
    "perfect_judge",
    "queue_judge",
    "register",
    "resolve_api_key",
    "rule_scores",
    "run_judge_video",
    "run_worker",
    "save_profile",
    "scripted_judge",
    "stderr_log",
    "store_api_key",
]
