"""The judge.video job function end to end on a real tiny project, with a scripted model."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from judge import ModelCallFailed, ScriptedModel, perfect_judge, scripted_judge
from judge.models import CallFailed, CallRecorder, ModelAPI, SpendCapReached, Usage
from judge.video import prepare_judge_video, run_judge_video
from storage import JOB_KINDS, JobError, JobOutcome, JudgeRuns, Project, import_cases, run_worker
from storage._db import write
from tests.casefactory import make_case


@dataclass
class Ctx:
    """A JobContext as the worker hands it over."""

    job_id: int
    payload: Mapping[str, Any]
    project_root: Path
    stop_after: int | None = None
    reports: list[tuple[float, str, float | None]] = field(default_factory=list)

    def progress(self, fraction: float, note: str = "", cost_usd: float | None = None) -> None:
        self.reports.append((fraction, note, cost_usd))

    def cancelled(self) -> bool:
        return self.stop_after is not None and len(self.reports) >= self.stop_after

    def log(self, event: str, **fields: Any) -> None:
        pass


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    root = tmp_path / "proj"
    with Project.create(root) as p:
        import_cases(p, make_case(tmp_path / "cases", "stack_blocks", n_videos=1))
        yield root, p.videos()[0].id


def factory(respond: Any = None, cost: float = 0.001, **kw: Any) -> Any:
    seen: dict[str, Any] = {}

    def make_api(
        profile: str, project: Project, recorder: CallRecorder, cap: float | None
    ) -> ModelAPI:
        seen.update(profile=profile, cap=cap)
        api = ScriptedModel(
            respond or perfect_judge(), usage=Usage(100, 10, cost), spend_cap_usd=cap,
            recorder=recorder, model="scripted-vlm", **kw,
        )  # fmt: skip
        seen["api"] = api
        return api

    make_api.seen = seen  # type: ignore[attr-defined]
    return make_api


def enqueue(root: Path, video: str, **payload: Any) -> tuple[int, dict[str, Any]]:
    body = {"video_id": video, "profile": "local", "mode": "gated", "config": {}} | payload
    with Project.open(root) as p:
        (job_id,) = p.jobs.enqueue("judge.video", [body])
    return job_id, body


def test_job_judges_records_calls_and_writes_on_completion(project: tuple[Path, str]) -> None:
    root, video = project
    job_id, body = enqueue(root, video, config={"max_inspections_per_gate": 2})
    ctx = Ctx(job_id, body, root)
    make_api = factory()
    outcome = run_judge_video(ctx, make_api=make_api)
    assert isinstance(outcome, JobOutcome) and outcome.cost_usd == pytest.approx(0.01)
    assert make_api.seen["profile"] == "local" and make_api.seen["cap"] == 2.0
    with Project.open(root) as p:
        runs = JudgeRuns(p.db)
        (run,) = runs.runs(video)
        # Before the worker completes the job: running, and every call already recorded.
        assert run.status == "running" and run.model == "scripted-vlm" and run.job_id == job_id
        assert run.config["max_inspections_per_gate"] == 2 and run.config["mode"] == "gated"
        assert len(runs.trace(run.id).calls) == 10
        claimed = p.jobs.claim("w1", lease_s=30)
        assert claimed is not None and claimed.id == job_id
        owner = claimed.lease_owner or ""
        assert p.jobs.complete(job_id, owner, lambda: outcome.write(p), cost_usd=outcome.cost_usd)
        assert p.jobs.get(job_id).result_ref == f"judge_runs:{run.id}"
        done = runs.get(run.id)
        assert done.status == "done" and (done.t100, done.p100, done.s) == (100.0, 100.0, 100.0)
        t = runs.trace(run.id)
        assert [s.stage for s in t.calls][:3] == ["plan_task", "plan_physics", "review"]
        assert sum(len(g.rows) for g in t.gates) == 2 * 3 + 2 * 4
        assert len(t.frames) == 8 + 12  # a 12-frame clip: its 24 P times give 12 frames
        assert done.cost_usd == pytest.approx(0.01)
        assert runs.call_detail(run.id, 1).request["messages"][0]["role"] == "system"
    fractions = [f for f, _, _ in ctx.reports]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert ctx.reports[-1][2] == pytest.approx(0.01)


def _failing(exc: Exception) -> Any:
    base = perfect_judge()

    def respond(stage: str, messages: Any, tools: Any) -> Any:
        if stage == "gate:T2":
            raise exc
        return base(stage, messages, tools)

    return respond


@pytest.mark.parametrize(
    ("exc", "retry"),
    [
        (ModelCallFailed("endpoint timed out after 180 s", retryable=True, kind="timeout"), True),
        (ModelCallFailed("HTTP 401: bad key", retryable=False, kind="auth"), False),
        (CallFailed("no valid reply"), False),
    ],
)
def test_call_failures_map_to_job_errors(
    project: tuple[Path, str], exc: Exception, retry: bool
) -> None:
    root, video = project
    job_id, body = enqueue(root, video)
    with pytest.raises(JobError) as err:
        run_judge_video(Ctx(job_id, body, root), make_api=factory(_failing(exc)))
    assert err.value.retry is retry and err.value.backoff_s is None  # the queue's backoff
    with Project.open(root) as p:
        (run,) = JudgeRuns(p.db).runs(video)
        assert run.status == "failed" and str(exc) in (run.error or "")
        failed = [c for c in JudgeRuns(p.db).trace(run.id).calls if not c.ok]
        assert [c.stage for c in failed] == ["gate:T2"]


def test_spend_cap_is_a_permanent_failure(project: tuple[Path, str]) -> None:
    root, video = project
    job_id, body = enqueue(root, video, config={"spend_cap_usd": 0.05})
    cap = r"spend cap reached: the next call costs \$0\.0100 but only \$0\.0000 of the \$0\.05"
    with pytest.raises(JobError, match=cap) as err:
        run_judge_video(Ctx(job_id, body, root), make_api=factory(cost=0.01))
    assert not err.value.retry
    with Project.open(root) as p:
        (run,) = JudgeRuns(p.db).runs(video)
        assert run.status == "failed" and run.cost_usd == pytest.approx(0.05)
    assert isinstance(SpendCapReached("x"), CallFailed)  # why the order of checks matters


def test_undecodable_video_fails_for_good_naming_the_file(project: tuple[Path, str]) -> None:
    root, video = project
    with Project.open(root) as p:
        path = p.video_path(p.video(video))
    path.chmod(0o644)
    path.write_bytes(path.read_bytes()[:200])  # truncated: the header survives, frames do not
    job_id, body = enqueue(root, video)
    make_api = factory()
    with pytest.raises(JobError, match=path.name) as err:
        run_judge_video(Ctx(job_id, body, root), make_api=make_api)
    assert not err.value.retry
    assert make_api.seen["api"].seen == []  # nothing was spent on an unreadable video
    with Project.open(root) as p:
        (run,) = JudgeRuns(p.db).runs(video)
        assert run.status == "failed" and path.name in (run.error or "")


def test_cancel_abandons_the_run_and_bad_payloads_are_refused(project: tuple[Path, str]) -> None:
    root, video = project
    job_id, body = enqueue(root, video)
    with pytest.raises(JobError, match="cancelled"):
        run_judge_video(Ctx(job_id, body, root, stop_after=2), make_api=factory())
    with Project.open(root) as p:
        (run,) = JudgeRuns(p.db).runs(video)
        assert run.status == "abandoned"
    for bad, field_name in (({"video_id": ""}, "video_id"), ({"mode": "vibes"}, "mode"),
                            ({"config": {"frames": 3}}, "unknown judge setting"),
                            ({"video_id": "V-NOPE"}, "no video")):  # fmt: skip
        with pytest.raises(JobError, match=field_name):
            run_judge_video(Ctx(job_id, body | bad, root), make_api=factory())


def test_retry_abandons_the_earlier_attempts_run(project: tuple[Path, str]) -> None:
    root, video = project
    job_id, body = enqueue(root, video, mode="independent")
    with Project.open(root) as p:
        stale = JudgeRuns(p.db).start(
            job_id=job_id, video_id=video, profile="local", model=None, mode="independent",
            prompt_version="x", config={},
        )  # fmt: skip
    answers = {"T1": {"S1": "no"}}
    outcome = run_judge_video(
        Ctx(job_id, body, root), make_api=factory(scripted_judge(answers=answers))
    )
    with Project.open(root) as p:
        runs = JudgeRuns(p.db)
        assert runs.get(stale).status == "abandoned"
        with write(p.db):
            ref = outcome.write(p)
        run = runs.get(int(ref.split(":")[1]))
        assert run.mode == "independent" and set(run.scores["rules"]) == {
            "sequential", "independent"
        }  # fmt: skip


def test_the_kind_is_registered() -> None:
    assert JOB_KINDS["judge.video"].prepare is prepare_judge_video


def test_a_worker_runs_the_job_and_writes_the_run_with_the_job(
    project: tuple[Path, str], test_kind: Callable[[str, Any], None]
) -> None:
    root, video = project
    test_kind("test.judge", lambda ctx: run_judge_video(ctx, make_api=factory()))
    with Project.open(root) as p:
        (job_id,) = p.jobs.enqueue("test.judge", [{"video_id": video, "profile": "local"}])
    stats = run_worker(root, drain=True, poll_s=0.05, kinds=["test.judge"], log=lambda _r: None)
    assert stats.done == 1
    with Project.open(root) as p:
        job = p.jobs.get(job_id)
        (run,) = JudgeRuns(p.db).runs(video)
        assert job.result_ref == f"judge_runs:{run.id}" and run.status == "done"
        assert job.cost_usd == pytest.approx(run.cost_usd) and run.s == 100.0


def test_the_cap_holds_across_attempts(project: tuple[Path, str]) -> None:
    """Calls an earlier attempt recorded (its worker then died) come off the next one's cap."""
    root, video = project
    job_id, body = enqueue(root, video, config={"spend_cap_usd": 0.05})
    with pytest.raises(JobError, match="spend cap"):  # attempt 1 spends the whole cap
        run_judge_video(Ctx(job_id, body, root), make_api=factory(cost=0.01))
    with Project.open(root) as p:
        assert p.jobs.get(job_id).cost_usd == pytest.approx(0.05)
    make_api = factory(cost=0.01)
    with pytest.raises(JobError, match="earlier attempts of this job already spent") as err:
        run_judge_video(Ctx(job_id, body, root), make_api=make_api)
    assert not err.value.retry and "api" not in make_api.seen  # no client made, nothing sent
    with Project.open(root) as p:
        assert p.jobs.get(job_id).cost_usd == pytest.approx(0.05)  # not a cent more


def test_an_attempt_gets_only_what_earlier_attempts_left(project: tuple[Path, str]) -> None:
    root, video = project
    job_id, body = enqueue(root, video, config={"spend_cap_usd": 0.5})
    with pytest.raises(JobError):
        run_judge_video(Ctx(job_id, body, root, stop_after=3), make_api=factory(cost=0.01))
    with Project.open(root) as p:
        spent = p.jobs.get(job_id).cost_usd
    assert spent > 0
    make_api = factory(cost=0.01)
    run_judge_video(Ctx(job_id, body, root), make_api=make_api)
    assert make_api.seen["cap"] == pytest.approx(0.5 - spent)
