"""What a ``judge.video`` job runs wherever it runs (a local worker's thread, a Ray worker on
another machine): one video through :func:`judge_video`, with no project and no SQLite.

Its inputs are plain data prepared by :mod:`judge.video._job` (the profile as its config, the
settings, the goal, the frame index, the continuity scan); its files are the video and f₁; the
API key is read from this process's environment (or OS keyring) by the client, as
:func:`~judge.models._profiles.resolve_api_key` does, and is never an input. Every call the client
makes is sent to the holder as it happens (``channel.event``), so a task that dies mid-video
leaves its trail and its spend recorded. The result comes back as the records
``JudgeRuns.finish`` writes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from judge.models import CallFailed, ModelAPI, ModelProfile, OpenAIModel, job_error
from judge.video._config import JudgeCancelled, JudgeConfig, Mode, PipelineError
from judge.video._run import judge_video
from storage import Channel, JobError, RunCall, RunResult
from storage.media import MediaError, VideoIndex, read_image_rgb
from storage.media.continuity import Scan


class JudgeStoppedError(JobError):
    """The run stopped because its job was cancelled (or its lease lost): the run is
    abandoned, not failed. A class of its own, so the holder tells it apart after it crossed
    a process boundary."""


@dataclass
class Relay:
    """The recorder of a client made on the holder before its task runs (the local test seam):
    what it records goes to the task's channel once the task has started."""

    send: Callable[[RunCall], None] | None = None

    def __call__(self, record: RunCall, /) -> None:
        if self.send is None:
            raise RuntimeError("the model client was called before its task started")
        self.send(record)


@dataclass(frozen=True)
class MadeClient:
    """A client the holder made already (tests inject scripted models so); local runs only."""

    api: ModelAPI
    relay: Relay = field(default_factory=Relay)


def judge_task(
    inputs: Mapping[str, Any],
    files: Mapping[str, Path],
    channel: Channel,
    *,
    made: MadeClient | None = None,
) -> RunResult:
    """The ``judge.video`` task: judge ``files["video"]`` and return the run's records.

    Raises:
        JobError: as the job fails (see :mod:`judge.video._job`); :class:`JudgeStoppedError` when
            the job was cancelled.
    """
    video_id = str(inputs["video_id"])
    config = JudgeConfig().with_overrides(inputs["config"])
    scan = Scan.from_dict(inputs["scan"]) if inputs.get("scan") else None
    index = VideoIndex.from_json(dict(inputs["index"]))
    try:
        f1 = read_image_rgb(files["f1"])
    except MediaError as err:
        raise JobError(f"judge.video: {err}") from None
    if made is not None:
        made.relay.send = channel.event
        api = made.api
    else:
        api = _client(inputs, channel, config.spend_cap_usd)

    def progress(fraction: float, note: str) -> None:
        channel.progress(fraction, note, api.spent_usd)

    try:
        result = judge_video(
            api, files["video"], index, str(inputs["goal"]), f1, mode=cast(Mode, inputs["mode"]),
            config=config, should_stop=channel.cancelled, progress=progress, continuity=scan,
        )  # fmt: skip
    except JudgeCancelled:
        raise JudgeStoppedError("judge.video: cancelled") from None
    except MediaError as err:
        raise JobError(f"judge.video: video {video_id} cannot be decoded: {err}") from None
    except (CallFailed, PipelineError) as err:
        raise job_error(err, "judge.video: ") from None
    return result.to_run_result()


def _client(inputs: Mapping[str, Any], channel: Channel, cap: float) -> ModelAPI:
    """The OpenAI-compatible client of the profile in ``inputs``; its key from this process."""
    profile = ModelProfile.from_config(str(inputs["profile"]), inputs["profile_config"])
    try:
        return OpenAIModel(profile, recorder=channel.event, spend_cap_usd=cap)
    except CallFailed as err:  # no key in this process's environment or keyring
        raise job_error(err, "judge.video: ") from None
