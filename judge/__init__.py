"""VLM judges, model clients and the job runner."""

from judge._client import ModelCallFailed, OpenAIModel
from judge._kinds import JOB_KINDS, UnknownJobKindError, get_kind, register
from judge._profiles import (
    ModelProfile,
    load_profile,
    resolve_api_key,
    save_profile,
    store_api_key,
)
from judge._queue import JUDGE_KIND, MODES, QueueError, queue_judge
from judge._worker import WorkerStats, run_worker, stderr_log

__all__: list[str] = [
    "JOB_KINDS",
    "JUDGE_KIND",
    "MODES",
    "ModelCallFailed",
    "ModelProfile",
    "OpenAIModel",
    "QueueError",
    "UnknownJobKindError",
    "WorkerStats",
    "get_kind",
    "load_profile",
    "queue_judge",
    "register",
    "resolve_api_key",
    "run_worker",
    "save_profile",
    "stderr_log",
    "store_api_key",
]
