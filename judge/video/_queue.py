"""Queue judge jobs: one ``judge.video`` job per video, grouped in a named batch."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from judge.models import (
    ModelProfile,
    QueueError,
    enqueue_batch,
    load_profile,
    require_profiles,
)
from judge.video._config import MODES, JudgeConfig
from storage import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_RATE_LIMIT_BACKOFF_S,
    DEFAULT_RETRY_BACKOFF_S,
    Project,
)

JUDGE_KIND = "judge.video"


def queue_judge(
    project: Project,
    video_ids: Iterable[str],
    *,
    profile: str,
    mode: str = "gated",
    batch: str | None = None,
    config: Mapping[str, Any] | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    retry_backoff_s: float = DEFAULT_RETRY_BACKOFF_S,
    rate_limit_backoff_s: float = DEFAULT_RATE_LIMIT_BACKOFF_S,
) -> tuple[str, list[int]]:
    """Queue one judge job per video; returns the batch name and job ids.

    ``max_attempts``, ``retry_backoff_s`` and ``rate_limit_backoff_s`` are the queue's retry
    policy for these jobs (see :meth:`storage.Jobs.enqueue`).

    ``config`` holds :class:`judge.JudgeConfig` overrides, stored with each job and then with
    its run: ``{"continuity_windows": 3}`` offers the continuity scan's three strongest windows
    at the Physics gates (0, the default, offers none).

    Unknown videos or profile, an unknown mode, settings no run could use or an empty selection
    are refused before anything is written, so a typo never leaves half a batch behind.
    """
    ids = list(dict.fromkeys(video_ids))
    if not ids:
        raise QueueError("no videos selected")
    if mode not in MODES:
        raise QueueError(f"unknown judge mode {mode!r}; choose one of {', '.join(MODES)}")
    try:
        settings = JudgeConfig().with_overrides(config or {})
    except ValueError as err:
        raise QueueError(f"judge settings: {err}") from None
    if settings.continuity_windows and mode == "simple_vqa":
        raise QueueError(
            "continuity windows are offered at the gates, and mode simple_vqa has none: "
            "use mode gated or independent, or continuity_windows 0"
        )
    require_profiles(project, [profile])
    refusal = video_judge_refusal(load_profile(project.profiles, profile))
    if refusal:
        raise QueueError(refusal)
    known = {v.id for v in project.videos()}
    missing = [v for v in ids if v not in known]
    if missing:
        raise QueueError(f"no such video(s) in {project.root}: {', '.join(missing[:5])}")
    name = batch or f"judge-{mode}-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}"
    payloads = [
        {"video_id": v, "profile": profile, "mode": mode, "config": dict(config or {})} for v in ids
    ]
    return enqueue_batch(
        project, JUDGE_KIND, payloads, batch=name, max_attempts=max_attempts,
        retry_backoff_s=retry_backoff_s, rate_limit_backoff_s=rate_limit_backoff_s,
    )  # fmt: skip


def video_judge_refusal(profile: ModelProfile) -> str | None:
    """Why ``profile`` cannot be the video judge, in words, or None.

    The judge shows the model frames; a profile whose probe found the model text-only would
    fail every video at its first call, so it is refused before anything is queued. A profile
    never probed is let through (its first call with images then fails at once, not retried).
    """
    caps = profile.capabilities
    if caps is None or caps.images:
        return None
    return (
        f"profile {profile.name!r} cannot judge videos: its model {profile.model!r} takes no "
        f"images (probed {caps.probed_at}), and the judge decides from the video's frames. "
        "Choose a profile with a vision model, or probe again after changing the model "
        f"(`workbench judge profile probe {profile.name}`)"
    )
