"""VLM judges, model clients and the job runner (built in issue 3)."""

from judge._queue import JUDGE_KIND, MODES, QueueError, queue_judge

__all__: list[str] = [
    "JUDGE_KIND",
    "MODES",
    "QueueError",
    "queue_judge",
]
