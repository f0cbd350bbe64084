"""VLM judges, model clients and the job runner."""

from judge._kinds import JOB_KINDS, UnknownJobKindError, get_kind, register
from judge._queue import JUDGE_KIND, MODES, QueueError, queue_judge
from judge._worker import WorkerStats, run_worker, stderr_log

__all__: list[str] = [
    "JOB_KINDS",
    "JUDGE_KIND",
    "MODES",
    "QueueError",
    "UnknownJobKindError",
    "WorkerStats",
    "get_kind",
    "queue_judge",
    "register",
    "run_worker",
    "stderr_log",
]
