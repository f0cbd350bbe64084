"""The ``judge.video`` job: judge one video with the staged judge and store an audited run.

Payload: ``{"video_id": str, "profile": str, "mode": "gated" | "independent" | "simple_vqa",
"config": {JudgeConfig overrides}}``. With ``continuity_windows`` set, the video's stored
continuity scan supplies the windows offered (a video not scanned yet, or scanned by an older
version, is scanned first and the scan stored).

The run row is created before the first call and every call is written as it happens (each its
own transaction, on this job's own connection), so a crash keeps the trail; the results are
written by the worker in the transaction that marks the job done (:class:`JobOutcome`), so a
run is never half-finished.

Failures map to :class:`JobError`: a provider failure that says ``retryable`` is retried after
the queue's backoff for the job (``rate_limit`` waits the longer one); the spend cap, an
undecodable video, replies that keep breaking the rules, a missing video or bad settings fail
for good. The run row says why
(``failed``), or ``abandoned`` when the job was cancelled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from judge._api import CallFailed, CallRecord, CallRecorder, ModelAPI, SpendCapReached
from judge._pipeline import (
    MODES,
    PROMPT_VERSION,
    JudgeCancelled,
    JudgeConfig,
    JudgeResult,
    Mode,
    PipelineError,
    judge_video,
    run_config,
)
from judge._queue import JUDGE_KIND
from storage import (
    JobContext,
    JobError,
    JobOutcome,
    JudgeRuns,
    Project,
    ProjectError,
    RunCall,
    register,
)
from storage.continuity import Scan, scan_video
from storage.media import MediaError, read_image_rgb

MakeApi = Callable[[str, Project, CallRecorder, float | None], ModelAPI]
"""``(profile_name, project, recorder, spend_cap_usd) -> ModelAPI``; a None cap means the
profile's own."""


def default_make_api(
    profile: str, project: Project, recorder: CallRecorder, spend_cap_usd: float | None
) -> ModelAPI:
    """The OpenAI-compatible client for a profile stored in the project."""
    from judge._client import OpenAIModel  # lazily: the openai import is slow
    from judge._profiles import load_profile
    from storage import Profiles

    return OpenAIModel(
        load_profile(Profiles(project.db), profile), recorder=recorder, spend_cap_usd=spend_cap_usd
    )


def _profile_cap(project: Project, profile: str) -> float | None:
    """The profile's own spend cap, if the profile can be read (else the judge default)."""
    from judge._profiles import load_profile
    from storage import Profiles

    try:
        return float(load_profile(Profiles(project.db), profile).spend_cap_usd)
    except Exception:  # a missing profile fails later, in make_api, with its own message
        return None


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


@register(JUDGE_KIND)
def judge_video_job(ctx: JobContext) -> JobOutcome:
    """The registered ``judge.video`` kind (the real, configured model client)."""
    return run_judge_video(ctx)


def run_judge_video(
    ctx: JobContext,
    *,
    make_api: MakeApi = default_make_api,
    profile_cap: Callable[[Project, str], float | None] = _profile_cap,
) -> JobOutcome:
    """Judge the payload's video; see the module docstring."""
    req = parse_payload(ctx.payload)
    project = Project.open(ctx.project_root)
    try:
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
        config = _cap_left(project, ctx.job_id, config)
        result, run_id = _judge(ctx, project, req, config, make_api)
    finally:
        project.close()
    records = result.to_run_result()

    def write(p: Project) -> str:
        return JudgeRuns(p.db).finish(run_id, records)

    return JobOutcome(write=write, cost_usd=result.cost_usd)


def _judge(
    ctx: JobContext, project: Project, req: JudgeRequest, config: JudgeConfig, make_api: MakeApi
) -> tuple[JudgeResult, int]:
    runs = JudgeRuns(project.db)
    try:
        video = project.video(req.video_id)
        case = project.case(video.case_id)
        path, index = project.video_path(video), project.video_index(video)
        f1 = read_image_rgb(project.media_path(case.initial_image))
        scan = _continuity_scan(ctx, project, video.media) if config.continuity_windows else None
    except (ProjectError, MediaError) as err:
        raise JobError(f"judge.video: {err}") from None
    # an earlier attempt whose worker died left its run running: nobody else will end it
    runs.end_for_jobs([ctx.job_id], "abandoned: a later attempt of the job started", abandoned=True)
    run: list[int] = []

    def record(record: CallRecord) -> None:
        runs.record_call(run[0], run_call(record))

    try:
        api = make_api(req.profile, project, record, config.spend_cap_usd)
    except CallFailed as err:
        raise _job_error(err) from None
    run.append(
        runs.start(
            job_id=ctx.job_id,
            video_id=video.id,
            profile=req.profile,
            model=_model_name(api),
            mode=req.mode,
            prompt_version=PROMPT_VERSION,
            config=run_config(config, req.mode, scan),
        )
    )

    def progress(fraction: float, note: str) -> None:
        ctx.progress(fraction, note, cost_usd=api.spent_usd)

    try:
        result = judge_video(
            api, path, index, case.goal, f1, mode=cast(Mode, req.mode),
            config=config, should_stop=ctx.cancelled, progress=progress, continuity=scan,
        )  # fmt: skip
    except JudgeCancelled:
        runs.fail(run[0], "cancelled", abandoned=True)
        raise JobError("judge.video: cancelled") from None
    except MediaError as err:
        runs.fail(run[0], str(err))
        raise JobError(f"judge.video: video {video.id} cannot be decoded: {err}") from None
    except (CallFailed, PipelineError) as err:
        job_error = _job_error(err)
        runs.fail(run[0], str(job_error))
        raise job_error from None
    except Exception as err:
        runs.fail(run[0], f"crashed: {type(err).__name__}: {err}")
        raise
    return result, run[0]


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


def run_call(record: CallRecord) -> RunCall:
    """A provider's call record as ``storage`` keeps it in ``judge_calls``."""
    u = record.usage
    return RunCall(record.stage, record.prompt_version, record.request, record.reply,
                   record.ok, record.error, u.latency_s, u.tokens_in, u.tokens_out,
                   u.cost_usd)  # fmt: skip


def _job_error(err: Exception) -> JobError:
    """Spend cap and rule-breaking replies are permanent; a provider's say-so decides the rest."""
    if isinstance(err, SpendCapReached) or not isinstance(err, CallFailed):
        return JobError(f"judge.video: {err}")
    if getattr(err, "retryable", False):
        limited = getattr(err, "kind", "") == "rate_limit"
        return JobError(f"judge.video: {err}", retry=True, rate_limited=limited)
    return JobError(f"judge.video: {err}")


def _model_name(api: ModelAPI) -> str | None:
    """The provider's model name, where it tells (``OpenAIModel.profile.model``, ``.model``)."""
    profile = getattr(api, "profile", None)
    name = getattr(profile, "model", None) or getattr(api, "model", None)
    return str(name) if name else None
