"""What the judge's job kinds share about their model clients: one made for a profile stored in
the project, that profile's spend cap and model name, a provider failure as the job's error, and
the error of a queueing refused before anything was written."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from annotation import UserError
from judge.models._api import CallFailed, CallRecorder, ModelAPI, SpendCapReached
from judge.models._client import OpenAIModel
from judge.models._profiles import load_profile
from storage import JobError, Project

MakeApi = Callable[[str, Project, CallRecorder, float | None], ModelAPI]
"""``(profile_name, project, recorder, spend_cap_usd) -> ModelAPI``; a None cap means the
profile's own."""

ProfileCap = Callable[[Project, str], float | None]


class QueueError(UserError, ValueError):
    """Nothing was queued; the message says why."""


def require_profiles(project: Project, names: Sequence[str]) -> None:
    """Refuse (before anything is queued) a profile the project does not have.

    Raises:
        QueueError: names the first unknown profile and the ones there are.
    """
    unknown = [name for name in names if name not in project.profiles]
    if unknown:
        raise QueueError(
            f"no model profile {unknown[0]!r} in {project.root}; add one with "
            "`workbench judge profile add` (profiles: "
            f"{', '.join(project.profiles.list()) or 'none yet'})"
        )


def enqueue_batch(
    project: Project,
    kind: str,
    payloads: Sequence[Mapping[str, Any]],
    *,
    batch: str,
    max_attempts: int,
    retry_backoff_s: float,
    rate_limit_backoff_s: float,
) -> tuple[str, list[int]]:
    """Queue ``payloads`` as jobs of ``kind`` in the named batch; returns the name and job ids.

    Raises:
        QueueError: the queue refused the retry policy.
    """
    try:
        job_ids = project.jobs.enqueue(
            kind, [dict(p) for p in payloads], batch=batch, max_attempts=max_attempts,
            retry_backoff_s=retry_backoff_s, rate_limit_backoff_s=rate_limit_backoff_s,
        )  # fmt: skip
    except ValueError as err:
        raise QueueError(str(err)) from None
    return batch, job_ids


def default_make_api(
    profile: str, project: Project, recorder: CallRecorder, spend_cap_usd: float | None
) -> ModelAPI:
    """The OpenAI-compatible client for a profile stored in the project."""
    return OpenAIModel(
        load_profile(project.profiles, profile), recorder=recorder, spend_cap_usd=spend_cap_usd
    )


def profile_spend_cap(project: Project, profile: str) -> float | None:
    """The profile's own spend cap, if the profile can be read (else the judge default)."""
    try:
        return float(load_profile(project.profiles, profile).spend_cap_usd)
    except Exception:  # a missing profile fails later, with its own message
        return None


def model_name(api: ModelAPI) -> str | None:
    """The provider's model name, where it tells (``OpenAIModel.profile.model``, ``.model``)."""
    profile = getattr(api, "profile", None)
    name = getattr(profile, "model", None) or getattr(api, "model", None)
    return str(name) if name else None


def job_error(err: Exception, where: str) -> JobError:
    """``err`` as the job's error, its message after ``where``: the spend cap and replies that
    break the rules fail for good; a provider's ``retryable`` decides the rest (``rate_limit``
    waits the longer backoff)."""
    message = f"{where}{err}"
    if isinstance(err, SpendCapReached) or not isinstance(err, CallFailed):
        return JobError(message)
    if getattr(err, "retryable", False):
        return JobError(message, retry=True, rate_limited=getattr(err, "kind", "") == "rate_limit")
    return JobError(message)
