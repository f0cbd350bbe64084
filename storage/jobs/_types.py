"""What a job function sees and returns; workers run registered kinds by name."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from storage._project import Project


class JobContext(Protocol):
    """Handed to a job function by the worker."""

    job_id: int
    payload: Mapping[str, Any]
    project_root: Path

    def progress(self, fraction: float, note: str = "", cost_usd: float | None = None) -> None:
        """Report progress (it also renews the lease)."""
        ...

    def cancelled(self) -> bool:
        """True once the job was cancelled or its lease was lost: stop soon, write nothing."""
        ...

    def log(self, event: str, **fields: Any) -> None:
        """A structured log line (JSON) on the worker's stderr."""
        ...


@dataclass(frozen=True)
class JobOutcome:
    """A finished job's result. ``write`` runs inside the transaction that marks the job done,
    on the worker's own project connection, and returns a reference such as ``judge_runs:12``."""

    write: Callable[[Project], str | None]
    cost_usd: float = 0.0


class JobError(Exception):
    """A job that failed. ``retry`` says whether another attempt could succeed (timeouts, 5xx);
    ``rate_limited`` that the provider asked us to slow down (the queue's longer backoff).
    ``backoff_s`` overrides the queue's backoff for this one failure (a Retry-After)."""

    def __init__(
        self,
        message: str,
        *,
        retry: bool = False,
        rate_limited: bool = False,
        backoff_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.retry = retry
        self.rate_limited = rate_limited
        self.backoff_s = backoff_s


JobFunction = Callable[[JobContext], JobOutcome]
