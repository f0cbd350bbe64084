"""Judge runs in the project: start → calls → finish → trace, failure states, re-scoring."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from annotation import Mark, Score
from judge import rule_scores
from storage import (
    JudgeRunError,
    JudgeRuns,
    Project,
    RecordedAnswers,
    RuleScore,
    RunAnswer,
    RunCall,
    RunFrame,
    RunInspection,
    RunResult,
    RunSubgoal,
    import_cases,
)
from storage._db import write


@pytest.fixture
def env(tmp_path: Path, cases_dir: Path) -> Iterator[tuple[Project, str, int]]:
    with Project.create(tmp_path / "p") as p:
        import_cases(p, cases_dir / "stack_blocks")
        (job_id,) = p.jobs.enqueue("judge.video", [{"video_id": "x"}])
        yield p, p.videos()[0].id, job_id


def yes(axis: str, gate: str, sid: str, answer: str = "yes", **kw: object) -> RunAnswer:
    return RunAnswer(axis, gate, sid, answer, **kw)  # type: ignore[arg-type]


# Independent-mode answers (every gate asked): task S1 = n,y,y (spec case 20), S2 all yes;
# physics S1 = y,n,y,y (case 21), S2 NA at P1.
ANSWERS = (
    yes("task", "T1", "S1", "no", evidence_ids=("T02",), timestamps_s=(0.4,), note="reach away"),
    yes("task", "T1", "S2"),
    yes("task", "T2", "S1"), yes("task", "T2", "S2"),
    yes("task", "T3", "S1"), yes("task", "T3", "S2"),
    yes("physics", "P1", "S1"), yes("physics", "P1", "S2", "NA"),
    yes("physics", "P2", "S1", "no"), yes("physics", "P3", "S1"), yes("physics", "P4", "S1"),
)  # fmt: skip


def result(mode: str) -> RunResult:
    plan = tuple(
        RunSubgoal(axis, f"S{k}", f"block {k}", "tray", "place", "on tray", (), "why")
        for axis in ("task", "physics")
        for k in (1, 2)
    )
    review = (RunSubgoal("physics_review", "S1", reason="independent"),
              RunSubgoal("physics_review", "S2", reason="independent"))  # fmt: skip
    rec = RecordedAnswers(0, mode, ("S1", "S2"), ("S1", "S2"), ANSWERS)
    frames = (RunFrame("T01", 1, 0.08, None, "uniform_task"),
              RunFrame("I1-01", 5, 0.42, (0.1, 0.2, 0.5, 0.5), "inspect:1"))  # fmt: skip
    inspection = RunInspection(1, "task", "T1", 0.3, 0.6, (0.1, 0.2, 0.5, 0.5), "reach?", "hand",
                               12, ("I1-01",))  # fmt: skip
    return RunResult(plan + review, ANSWERS, frames, (inspection,), rule_scores(rec), "sequential",
                     cost_usd=0.03, tokens_in=900, tokens_out=90,
                     stats={"frames_decoded": 24, "frames_sent": 33})  # fmt: skip


def call(stage: str, cost: float, ok: bool = True) -> RunCall:
    return RunCall(stage, "ego2act-judge@1", {"messages": [{"role": "user", "text": stage}]},
                   '{"name": "x"}', ok, None if ok else "timeout", 1.5, 300, 30, cost)  # fmt: skip


def start(runs: JudgeRuns, video: str, job_id: int | None, mode: str = "independent") -> int:
    return runs.start(job_id=job_id, video_id=video, profile="local", model="m", mode=mode,
                      prompt_version="ego2act-judge@1", config={"spend_cap_usd": 2.0})  # fmt: skip


def test_a_run_round_trips_through_trace(env: tuple[Project, str, int]) -> None:
    p, video, job_id = env
    runs = JudgeRuns(p.db)
    rid = start(runs, video, job_id)
    assert runs.get(rid).status == "running" and runs.latest(video) is None
    assert [runs.record_call(rid, call(s, 0.01)) for s in ("plan_task", "gate:T1", "gate:T1")] == [
        1, 2, 3
    ]  # fmt: skip
    with write(p.db):  # as the worker does: inside the job's completion transaction
        assert runs.finish(rid, result("independent")) == f"judge_runs:{rid}"
    run = runs.get(rid)
    assert run.status == "done" and run.finished_at and run.config == {"spend_cap_usd": 2.0}
    assert (run.t100, run.p100, run.coverage) == (50.0, 25.0, 0.5)  # sequential is primary
    assert run.scores["primary"] == "sequential" and set(run.scores["rules"]) == {
        "sequential", "independent"
    }  # fmt: skip
    assert run.scores["rules"]["independent"]["task_levels"] == ["2", "3"]
    assert run.scores["rules"]["sequential"]["physics_levels"] == ["1", "NA"]
    assert run.scores["stats"]["frames_decoded"] == 24
    assert (run.cost_usd, run.tokens_in, run.tokens_out) == (0.03, 900, 90)
    assert runs.latest(video) == run
    assert run.rule_scores() == dict(result("independent").scores)  # levels survive JSON
    t = runs.trace(rid)
    assert [s.sid for s in t.task_plan] == ["S1", "S2"] and len(t.physics_plan) == 2
    assert [r.reason for r in t.review] == ["independent"] * 2
    assert [(g.axis, g.gate, len(g.rows)) for g in t.gates] == [
        ("task", "T1", 2), ("task", "T2", 2), ("task", "T3", 2),
        ("physics", "P1", 2), ("physics", "P2", 1), ("physics", "P3", 1), ("physics", "P4", 1),
    ]  # fmt: skip
    first = t.gates[0].rows[0]
    assert (first.answer, first.evidence_ids, first.timestamps_s, first.note) == (
        "no", ("T02",), (0.4,), "reach away"
    )  # fmt: skip
    (ins,) = t.inspections
    assert ins.inspection.roi == (0.1, 0.2, 0.5, 0.5) and [f.frame_index for f in ins.frames] == [5]
    assert t.frame("I1-01") == RunFrame("I1-01", 5, 0.42, (0.1, 0.2, 0.5, 0.5), "inspect:1")
    assert t.frame("P99") is None
    assert [c.seq for c in t.calls] == [1, 2, 3] and t.total_cost_usd == pytest.approx(0.03)
    assert t.total_tokens == (900, 90) and t.total_latency_s == pytest.approx(4.5)
    detail = runs.call_detail(rid, 2)
    assert detail.stage == "gate:T1" and detail.request["messages"][0]["text"] == "gate:T1"
    with pytest.raises(JudgeRunError, match="is done, not running"):
        runs.finish(rid, result("independent"))


def test_rescore_recomputes_from_recorded_answers_without_calls(
    env: tuple[Project, str, int],
) -> None:
    p, video, job_id = env
    runs = JudgeRuns(p.db)
    rid = start(runs, video, job_id)
    runs.finish(rid, result("independent"))
    rec = runs.answers_for_rescore(rid)
    assert rec.mode == "independent" and rec.task_sids == ("S1", "S2") and rec.answers == ANSWERS
    again = runs.rescore(rid, rule_scores)
    assert again["independent"].task_levels == (2, 3)
    assert again["independent"].physics_levels == (3, Mark.NA)
    assert again["sequential"].score.t100 == 50.0  # (0 + 3) / 2 of 3
    assert again == dict(result("independent").scores)

    def harsh(r: RecordedAnswers) -> dict[str, RuleScore]:
        return {"sequential": RuleScore("sequential", Score(0.0, 0.0, 0.0, 1.0))}

    runs.rescore(rid, harsh)
    run = runs.get(rid)
    assert (run.t100, run.s) == (0.0, 0.0) and run.scores["stats"]["frames_sent"] == 33
    assert runs.trace(rid).calls == ()  # nothing was called


def test_failed_abandoned_and_atomic_finish(env: tuple[Project, str, int]) -> None:
    p, video, job_id = env
    runs = JudgeRuns(p.db)
    rid = start(runs, video, job_id)
    runs.record_call(rid, call("plan_task", 0.02))
    runs.record_call(rid, call("plan_physics", 0.0, ok=False))
    runs.fail(rid, "judge.video: spend cap reached ($0.0200 of $0.02)")
    run = runs.get(rid)
    assert run.status == "failed" and run.cost_usd == 0.02 and "spend cap" in (run.error or "")
    with pytest.raises(JudgeRunError, match="only done runs"):
        runs.rescore(rid, rule_scores)
    # A result write that is rolled back leaves the run running and writes no rows.
    rid2 = start(runs, video, job_id)
    with pytest.raises(RuntimeError), write(p.db):
        runs.finish(rid2, result("gated"))
        raise RuntimeError("the job was not ours any more")
    assert runs.get(rid2).status == "running" and runs.trace(rid2).gates == ()
    # A later attempt of the same job abandons the stale run; other jobs' runs are untouched.
    other = start(runs, video, None)
    assert runs.end_for_jobs([job_id], "abandoned: a later attempt", abandoned=True) == 1
    assert runs.get(rid2).status == "abandoned" and runs.get(other).status == "running"
    assert [r.id for r in runs.runs(video)] == [rid, rid2, other]
    assert runs.latest(video, status=None) == runs.get(other)
    with pytest.raises(JudgeRunError, match="no judge run 999"):
        runs.get(999)
