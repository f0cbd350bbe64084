"""The ``judge.video`` job: judge one video with the staged judge and store an audited run.

Payload: ``{"video_id": str, "profile": str, "mode": "gated" | "independent" | "simple_vqa",
"config": {JudgeConfig overrides}}``. With ``continuity_windows`` set, the video's stored
continuity scan supplies the windows offered (a video not scanned yet, or scanned by an older
version, is scanned first and the scan stored).

A remote kind (:mod:`storage.jobs._remote`), so one implementation runs on a local worker and on a
Ray cluster (``workbench worker --ray``): :func:`prepare_judge_video` does everything that
touches the project, on the process that holds it; :func:`judge.video._task.judge_task` judges
the video anywhere, with plain inputs, the video and f₁ by sha256, and the API key only by the
*name* of the variable its process reads it from.

The run row is created before the first call and every call is written as it happens (each its
own transaction, on the holder's job connection, as the task streams it), so a task that dies
keeps its trail and its spend; the results are written by the worker in the transaction that
marks the job done (:class:`JobOutcome`), so a run is never half-finished.

Failures map to :class:`JobError`: a provider failure that says ``retryable`` is retried after
the queue's backoff for the job (``rate_limit`` waits the longer one), and so is a cluster
worker that died; the spend cap, an undecodable video, replies that keep breaking the rules, a
missing video, profile or key, or bad settings fail for good. The run row says why
(``failed``), or ``abandoned`` when the job was cancelled.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from judge.models import (
    CallFailed,
    MakeApi,
    ModelProfile,
    ProfileCap,
    default_make_api,
    job_error,
    load_profile,
    model_name,
    profile_spend_cap,
)
from judge.video._config import MODES, PROMPT_VERSION, JudgeConfig
from judge.video._queue import JUDGE_KIND
from judge.video._run import run_config
from judge.video._task import JudgeStoppedError, MadeClient, Relay, judge_task
from storage import (
    JobContext,
    JobError,
    JobOutcome,
    JudgeRuns,
    Project,
    ProjectError,
    RemoteTask,
    RunCall,
    RunResult,
    register,
    run_here,
)
from storage.media import MediaError
from storage.media.continuity import Scan, scan_video


@dataclass(frozen=True)
class JudgeRequest:
    video_id: str
    profile: str
    mode: str
    overrides: Mapping[str, Any]


def parse_payload(payload: Mapping[str, Any]) -> JudgeRequest:
    """The job's payload, checked (a bad one is a permanent failure, named by field)."""
    video_id, profile = payload.get("video_id"), payload.get("profile")
    mode, overrides = payload.get("mode", "gated"), payload.get("config") or {}
    if not isinstance(video_id, str) or not video_id:
        raise JobError("judge.video: payload field 'video_id' must be a video id")
    if not isinstance(profile, str) or not profile:
        raise JobError("judge.video: payload field 'profile' must name a model profile")
    if mode not in MODES:
        raise JobError(f"judge.video: payload field 'mode' must be one of {', '.join(MODES)}")
    if not isinstance(overrides, Mapping):
        raise JobError("judge.video: payload field 'config' must be an object of settings")
    return JudgeRequest(video_id, profile, str(mode), dict(overrides))


@register(JUDGE_KIND, remote=True)
def prepare_judge_video(
    ctx: JobContext,
    project: Project,
    *,
    make_api: MakeApi | None = None,
    profile_cap: ProfileCap = profile_spend_cap,
) -> RemoteTask:
    """Everything of a ``judge.video`` job that touches the project, on its holder: the
    settings and the cap left, the video, case, f₁, index and continuity scan (made now when
    missing), the run row; then the task that judges, and what ends the run.

    ``make_api`` (a test seam, local runs only): a client made here, on the holder, instead of
    the profile's OpenAI-compatible client made by the task.
    """
    req = parse_payload(ctx.payload)
    config = _config(project, ctx.job_id, req, profile_cap)
    runs = JudgeRuns(project.db)
    try:
        video = project.video(req.video_id)
        case = project.case(video.case_id)
        files = {"video": (video.media, project.video_path(video)),
                 "f1": (case.initial_image, project.media_path(case.initial_image))}  # fmt: skip
        index = project.video_index(video)
        scan = _continuity_scan(ctx, project, video.media) if config.continuity_windows else None
    except (ProjectError, MediaError) as err:
        raise JobError(f"judge.video: {err}") from None
    # an earlier attempt whose worker died left its run running: nobody else will end it
    runs.end_for_jobs([ctx.job_id], "abandoned: a later attempt of the job started", abandoned=True)
    inputs: dict[str, Any] = {
        "video_id": video.id, "profile": req.profile, "mode": req.mode,
        "config": config.as_dict(), "goal": case.goal, "index": index.to_json(),
        "scan": scan.to_dict() if scan is not None else None,
    }  # fmt: skip
    env: tuple[str, ...] = ()
    model: str | None
    fn: Callable[..., RunResult]
    if make_api is None:
        profile = _profile(project, req.profile)
        inputs["profile_config"] = profile.to_config()  # no key in it: profiles refuse keys
        env, model = ((profile.api_key_env,) if profile.api_key_env else ()), profile.model
        fn = judge_task
    else:
        made = _made_client(make_api, project, req.profile, config.spend_cap_usd)
        model = model_name(made.api)
        fn = functools.partial(judge_task, made=made)
    run_id = runs.start(
        job_id=ctx.job_id, video_id=video.id, profile=req.profile, model=model, mode=req.mode,
        prompt_version=PROMPT_VERSION, config=run_config(config, req.mode, scan),
    )  # fmt: skip

    def on_event(p: Project, record: RunCall) -> None:
        JudgeRuns(p.db).record_call(run_id, record)

    def on_failure(p: Project, err: JobError) -> None:
        stopped = isinstance(err, JudgeStoppedError) or ctx.cancelled()
        JudgeRuns(p.db).fail(run_id, "cancelled" if stopped else str(err), abandoned=stopped)

    def finish(records: RunResult) -> JobOutcome:
        def write(p: Project) -> str:
            return JudgeRuns(p.db).finish(run_id, records)

        return JobOutcome(write=write, cost_usd=records.cost_usd)

    return RemoteTask(fn=fn, inputs=inputs, finish=finish, files=files, env=env,
                      on_event=on_event, on_failure=on_failure)  # fmt: skip


def run_judge_video(
    ctx: JobContext,
    *,
    make_api: MakeApi | None = None,
    profile_cap: ProfileCap = profile_spend_cap,
) -> JobOutcome:
    """Judge the payload's video in this process; see the module docstring. ``make_api``
    injects a model client (tests: a scripted model)."""
    if make_api is default_make_api:
        make_api = None  # the same client, made by the task (its key from the environment)
    prepare = functools.partial(prepare_judge_video, make_api=make_api, profile_cap=profile_cap)
    return run_here(ctx, prepare)


def _config(
    project: Project, job_id: int, req: JudgeRequest, profile_cap: ProfileCap
) -> JudgeConfig:
    overrides = dict(req.overrides)
    if "spend_cap_usd" not in overrides:
        cap = profile_cap(project, req.profile)
        if cap is not None:
            overrides["spend_cap_usd"] = cap
    try:
        config = JudgeConfig().with_overrides(overrides)
    except ValueError as err:
        raise JobError(f"judge.video: {err}") from None
    if config.continuity_windows and req.mode == "simple_vqa":
        raise JobError("judge.video: continuity windows are offered at gates; simple_vqa "
                       "has none")  # fmt: skip
    return _cap_left(project, job_id, config)


def _profile(project: Project, name: str) -> ModelProfile:
    """The stored profile (a missing or invalid one fails the job for good, by name)."""
    try:
        return load_profile(project.profiles, name)
    except Exception as err:  # not found (a UserError), or no longer valid (pydantic)
        raise JobError(f"judge.video: model profile {name!r}: {err}") from None


def _made_client(make_api: MakeApi, project: Project, profile: str, cap: float) -> MadeClient:
    relay = Relay()
    try:
        return MadeClient(make_api(profile, project, relay, cap), relay)
    except CallFailed as err:
        raise job_error(err, "judge.video: ") from None


def _continuity_scan(ctx: JobContext, project: Project, sha256: str) -> Scan:
    """The file's current scan, made now (and stored) when there is none."""
    scan = project.continuity.get(sha256)
    if scan is None:
        ctx.progress(0.0, "continuity scan")
        scan = scan_video(project.media_path(sha256))
        project.continuity.save(sha256, scan)
    return scan


def _cap_left(project: Project, job_id: int, config: JudgeConfig) -> JudgeConfig:
    """The per-video cap holds across attempts: what earlier attempts' recorded calls cost
    (a dead worker's included) comes off this attempt's cap."""
    earlier = project.jobs.spend(job_id=job_id)
    if earlier <= 0:
        return config
    left = config.spend_cap_usd - earlier
    if left <= 0:
        raise JobError(
            f"judge.video: spend cap reached: earlier attempts of this job already spent "
            f"${earlier:.4f} of the ${config.spend_cap_usd:.2f} cap; no request was sent"
        )
    return config.with_overrides({"spend_cap_usd": left})
