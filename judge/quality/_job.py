"""The ``judge.quality`` job: two judges grade every round of an interactive episode.

Payload: ``{"episode_id": str, "profiles": [str, str], "spend_cap_usd": float (optional),
"reply_retries": int (optional)}``. For each round (spec §4.3; :mod:`judge.quality._rounds`)
and each judge, one structured-output call returns P / F / NA with a reason for the 10 rubric
items. Verdicts are cached: a round that already has verdicts under a judge's profile and
:data:`PROMPT_VERSION` is not asked again, so a second job for the same episode makes no call.

Like ``judge.video``: a run row per judge is created before its first call and every call is
recorded as it happens (each its own transaction), so a crash keeps the audit trail and what was
spent; the verdicts are written by the worker in the transaction that marks the job done
(:class:`JobOutcome`), so an episode is never half-graded by one job. The spend cap (the
profile's own, or ``spend_cap_usd``) is per judge per episode and holds across attempts: what
earlier attempts' recorded calls cost comes off it.

Failures map to :class:`JobError`: a provider failure that says ``retryable`` is retried after
the queue's backoff; the spend cap, replies that keep breaking the schema or a consistency rule,
an episode that cannot be judged and bad payloads fail for good, naming the judge and round.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from annotation import UserError
from judge.models import (
    CallFailed,
    MakeApi,
    Message,
    ModelAPI,
    ProfileCap,
    Tool,
    default_make_api,
    job_error,
    model_name,
    profile_spend_cap,
)
from judge.quality._prompt import (
    PROMPT_VERSION,
    STAGE,
    TOOL,
    ItemVerdict,
    ReplyProblem,
    parse_verdicts,
    prompt_digest,
    rejected_messages,
    round_messages,
)
from judge.quality._rounds import QualityRound, QualityRoundsError, episode_rounds
from storage import (
    EpisodeError,
    JobContext,
    JobError,
    JobOutcome,
    JudgeRuns,
    Project,
    QualityVerdictRecord,
    QualityVerdicts,
    RunCall,
    register,
)

QUALITY_KIND = "judge.quality"
REPLY_RETRIES = 2
"""Re-asks after a schema-valid reply that breaks a consistency rule (the client re-asks a
schema-invalid one itself, ``schema_retries`` times)."""
_PAYLOAD_KEYS = {"episode_id", "profiles", "spend_cap_usd", "reply_retries"}


@dataclass(frozen=True)
class QualityRequest:
    episode_id: str
    profiles: tuple[str, ...]
    spend_cap_usd: float | None = None
    reply_retries: int = REPLY_RETRIES


def parse_payload(payload: Mapping[str, Any]) -> QualityRequest:
    """The job's payload, checked (a bad one is a permanent failure, named by field)."""
    unknown = sorted(set(payload) - _PAYLOAD_KEYS)
    if unknown:
        raise JobError(f"judge.quality: unknown payload field(s): {', '.join(unknown)}")
    episode, profiles = payload.get("episode_id"), payload.get("profiles")
    cap, retries = payload.get("spend_cap_usd"), payload.get("reply_retries", REPLY_RETRIES)
    if not isinstance(episode, str) or not episode:
        raise JobError("judge.quality: payload field 'episode_id' must be an episode id")
    if (
        not isinstance(profiles, list)
        or len(profiles) != 2
        or not all(isinstance(p, str) and p for p in profiles)
        or profiles[0] == profiles[1]
    ):
        raise JobError(
            "judge.quality: payload field 'profiles' must name two different model profiles "
            f"(the spec's two judges), got {profiles!r}"
        )
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int | float) or cap < 0):
        raise JobError("judge.quality: payload field 'spend_cap_usd' must be US$ >= 0")
    if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= 10:
        raise JobError("judge.quality: payload field 'reply_retries' must be 0..10")
    return QualityRequest(episode, tuple(profiles), None if cap is None else float(cap), retries)


@register(QUALITY_KIND)
def judge_quality_job(ctx: JobContext) -> JobOutcome:
    """The registered ``judge.quality`` kind (the real, configured model clients)."""
    return run_judge_quality(ctx)


@dataclass
class _Judge:
    profile: str
    rounds: list[QualityRound]
    api: ModelAPI | None = None
    run_id: int | None = None


def run_judge_quality(
    ctx: JobContext,
    *,
    make_api: MakeApi = default_make_api,
    profile_cap: ProfileCap = profile_spend_cap,
) -> JobOutcome:
    """Grade the payload's episode; see the module docstring."""
    req = parse_payload(ctx.payload)
    project = Project.open(ctx.project_root)
    try:
        try:
            episode_id = project.episodes.get(req.episode_id).id
            rounds = episode_rounds(project, episode_id)
        except (EpisodeError, QualityRoundsError) as err:
            raise JobError(f"judge.quality: {err}") from None
        store = QualityVerdicts(project.db)
        judges = []
        for profile in req.profiles:
            done = store.judged_rounds(episode_id, profile, PROMPT_VERSION)
            judges.append(_Judge(profile, [r for r in rounds if r.index not in done]))
        # an earlier attempt whose worker died left its runs running: nobody else will end them
        JudgeRuns(project.db).end_for_jobs(
            [ctx.job_id], "abandoned: a later attempt of the job started", abandoned=True
        )
        records = _grade(ctx, project, req, episode_id, judges, profile_cap, make_api)
        spent = sum(j.api.spent_usd for j in judges if j.api is not None)
    finally:
        project.close()
    run_ids = [j.run_id for j in judges if j.run_id is not None]

    def write(p: Project) -> str:
        verdicts = QualityVerdicts(p.db)
        verdicts.add(records)
        for run_id in run_ids:
            verdicts.finish_run(run_id)
        return f"sim_quality_verdicts:{episode_id}"

    return JobOutcome(write=write, cost_usd=spent)


def _grade(
    ctx: JobContext,
    project: Project,
    req: QualityRequest,
    episode_id: str,
    judges: list[_Judge],
    profile_cap: ProfileCap,
    make_api: MakeApi,
) -> list[QualityVerdictRecord]:
    """Every missing (round, judge) verdict, one call each, round by round."""
    total = sum(len(j.rounds) for j in judges)
    if total == 0:
        ctx.progress(1.0, "every round already judged", cost_usd=0.0)
        return []
    runs = JudgeRuns(project.db)
    records: list[QualityVerdictRecord] = []
    done = 0
    try:
        for judge in judges:
            if judge.rounds:
                _open(ctx, project, req, episode_id, judge, profile_cap, make_api)
        for index in sorted({r.index for j in judges for r in j.rounds}):
            for judge in judges:
                round_ = next((r for r in judge.rounds if r.index == index), None)
                if round_ is None:
                    continue
                verdicts = _ask(judge, round_, req.reply_retries, ctx.cancelled)
                records += [
                    QualityVerdictRecord(episode_id, judge.profile, PROMPT_VERSION, round_.index,
                                         round_.turn_idx, item, v.verdict, v.reason, judge.run_id)
                    for item, v in verdicts.items()
                ]  # fmt: skip
                done += 1
                spent = sum(j.api.spent_usd for j in judges if j.api is not None)
                ctx.progress(done / total, f"round {index + 1}: {judge.profile}", cost_usd=spent)
    except _CancelledError:
        _fail_runs(runs, judges, "cancelled", abandoned=True)
        raise JobError("judge.quality: cancelled") from None
    except _RoundFailedError as err:
        where = f"judge.quality: judge {err.profile!r}, round {err.index + 1}: "
        error = job_error(err.cause, where)
        _fail_runs(runs, judges, str(error))
        raise error from None
    except JobError as err:
        _fail_runs(runs, judges, str(err))
        raise
    except Exception as err:
        _fail_runs(runs, judges, f"crashed: {type(err).__name__}: {err}")
        raise
    return records


def _open(
    ctx: JobContext,
    project: Project,
    req: QualityRequest,
    episode_id: str,
    judge: _Judge,
    profile_cap: ProfileCap,
    make_api: MakeApi,
) -> None:
    """The judge's model client (capped by what earlier attempts left) and its run row."""
    runs, store = JudgeRuns(project.db), QualityVerdicts(project.db)
    cap = (
        req.spend_cap_usd if req.spend_cap_usd is not None else profile_cap(project, judge.profile)
    )
    earlier = store.spent(ctx.job_id, judge.profile)
    if cap is not None and earlier > 0:
        if cap - earlier <= 0:
            raise JobError(
                f"judge.quality: judge {judge.profile!r}: spend cap reached: earlier attempts "
                f"of this job already spent ${earlier:.4f} of the ${cap:.2f} cap; no request "
                "was sent"
            )
        cap -= earlier
    run: list[int] = []

    def record(rec: RunCall) -> None:
        runs.record_call(run[0], rec)

    try:
        judge.api = make_api(judge.profile, project, record, cap)
    except CallFailed as err:
        raise job_error(err, f"judge.quality: judge {judge.profile!r}: ") from None
    except UserError as err:  # the profile was removed or edited into an unusable one
        raise JobError(f"judge.quality: judge {judge.profile!r}: {err}") from None
    run.append(
        store.start_run(
            job_id=ctx.job_id,
            episode_id=episode_id,
            profile=judge.profile,
            model=model_name(judge.api),
            prompt_version=PROMPT_VERSION,
            config={
                "prompt_digest": prompt_digest(),
                "spend_cap_usd": cap,
                "reply_retries": req.reply_retries,
                "rounds": [r.index for r in judge.rounds],
            },
        )
    )
    judge.run_id = run[0]


class _CancelledError(Exception):
    """The job was cancelled (or lost its lease) between two calls."""


class _RoundFailedError(Exception):
    """A call for one judge and round failed for good; ``cause`` says how."""

    def __init__(self, profile: str, index: int, cause: Exception) -> None:
        super().__init__(str(cause))
        self.profile, self.index, self.cause = profile, index, cause


def _ask(
    judge: _Judge, round_: QualityRound, retries: int, cancelled: Callable[[], bool]
) -> dict[str, ItemVerdict]:
    """One round's verdicts from one judge; a rule-breaking reply is re-asked with the reason."""
    assert judge.api is not None
    api, profile = judge.api, judge.profile
    messages = round_messages(round_)
    tools: list[Tool] = [TOOL]
    extra: list[Message] = []
    problem = ""
    for _attempt in range(retries + 1):
        if cancelled():
            raise _CancelledError
        try:
            call, _usage = api.call(
                stage=STAGE, prompt_version=PROMPT_VERSION, messages=[*messages, *extra],
                tools=tools,
            )  # fmt: skip
        except CallFailed as err:
            raise _RoundFailedError(profile, round_.index, err) from None
        try:
            return parse_verdicts(call)
        except ReplyProblem as exc:
            problem = str(exc)
        except (KeyError, TypeError, ValueError) as exc:  # a provider that skipped the schema
            problem = f"arguments do not match the schema ({exc!r})"
        extra = rejected_messages(call, problem)
    raise _RoundFailedError(
        profile,
        round_.index,
        ReplyProblem(
            f"the reply broke a consistency rule {retries + 1} time(s); last problem: {problem}"
        ),
    )


def _fail_runs(
    runs: JudgeRuns, judges: list[_Judge], error: str, *, abandoned: bool = False
) -> None:
    for judge in judges:
        if judge.run_id is not None:
            runs.fail(judge.run_id, error, abandoned=abandoned)
