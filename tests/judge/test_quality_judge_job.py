"""The judge.quality job end to end: queue → a real worker → loopback server → cached verdicts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judge import QUALITY_KIND, QueueError, quality_scores, queue_quality
from judge.models.loopback import FakeServer, Reply, Status
from judge.quality._job import judge_quality_job
from sim.metrics import round_score
from storage import JOB_KINDS, JobStatus, JudgeRuns, Project, QualityVerdicts, run_worker
from tests.judge.quality_judge_helpers import (
    ALL_PASS,
    PRICE_IN,
    PRICE_OUT,
    Ctx,
    Verdicts,
    add_judges,
    bad_verdict,
    judge_data,
    make_episode,
    rows_by_round,
    spoken_turns,
    verdict_args,
)

TOOL = "submit_quality_verdicts"
CALL_USD = (100 * PRICE_IN + 20 * PRICE_OUT) / 1e6  # the loopback bills 100 in, 20 out


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    root = tmp_path / "proj"
    with Project.create(root) as p:
        yield root, make_episode(p)


def drain(root: Path) -> None:
    stats = run_worker(root, drain=True, poll_s=0.02, kinds=[QUALITY_KIND], log=lambda _r: None)
    assert stats.done + stats.failed >= 1


def queue(root: Path, eid: str, *profiles: str, **kw: object) -> int:
    with Project.open(root) as p:
        _batch, (job_id,) = queue_quality(p, [eid], profiles=profiles, **kw)  # type: ignore[arg-type]
    return job_id


def test_two_judges_grade_every_round_and_the_verdicts_are_stored(
    project: tuple[Path, str],
) -> None:
    root, eid = project
    script = Verdicts({("judge-b", 2): "F P P NA P P NA NA NA P"})
    with FakeServer(script) as srv:
        with Project.open(root) as p:
            add_judges(p, srv, "judge-a", "judge-b")
            n = spoken_turns(p, eid)
        job_id = queue(root, eid, "judge-a", "judge-b")
        drain(root)
        bodies = [r.body for r in srv.chat_requests]
    assert n >= 5 and len(bodies) == 2 * n  # one call per round per judge
    assert sorted(script.calls) == sorted((j, r) for j in ("judge-a", "judge-b")
                                          for r in range(1, n + 1))  # fmt: skip
    first = judge_data(bodies[0])
    assert first["round"] == 1 and first["rounds"] == n and first["response"]["text"]
    assert bodies[0]["tool_choice"]["function"]["name"] == TOOL
    with Project.open(root) as p:
        job = p.jobs.get(job_id)
        assert job.status is JobStatus.DONE and job.result_ref == f"sim_quality_verdicts:{eid}"
        assert job.calls == 2 * n and job.cost_usd == pytest.approx(2 * n * CALL_USD)
        rows = rows_by_round(p, eid)
        assert len(rows) == 2 * n and rows[("judge-b", 1)] == "F P P NA P P NA NA NA P"
        assert rows[("judge-a", 1)] == ALL_PASS
        stored = QualityVerdicts(p.db).list(eid, profiles=["judge-b"])
        assert {v.reason for v in stored if v.round == 1 and v.item == "T1"} == {"T1 is F"}
        turns = [t.idx for t in p.episodes.turns(eid) if t.speaker == "assistant" and t.text]
        assert sorted({(v.round, v.turn_idx) for v in stored}) == list(enumerate(turns))
        runs = QualityVerdicts(p.db).runs(eid)
        assert [(r["profile"], r["status"], r["calls"]) for r in runs] == [
            ("judge-a", "done", n), ("judge-b", "done", n)
        ]  # fmt: skip
        call = JudgeRuns(p.db).call_detail(runs[0]["id"], 1)  # the exact prompt, audited
        assert call.stage == "quality_round" and call.prompt_version == "iq-judge@1"
        # the gate: judge B failed T1 on the second round, which scores (0 + 1) / 2 for it
        scores = quality_scores(p, eid)
        by_round = {r.round_id: round_score(r) for r in scores.rounds}
        assert by_round["1"] == 0.5 and by_round["0"] == 1.0
        assert scores.overall.value == pytest.approx((n - 0.5) / n)
        assert scores.categories["FG"].value == pytest.approx((n - 0.5) / n)
        assert scores.categories["SR"].value == 1.0  # no gate on category scores
        assert scores.judges == ("judge-a", "judge-b")


def test_a_second_job_for_the_same_episode_makes_no_call(project: tuple[Path, str]) -> None:
    root, eid = project
    script = Verdicts()
    with FakeServer(script) as srv:
        with Project.open(root) as p:
            add_judges(p, srv, "judge-a", "judge-b", "judge-c")
            n = spoken_turns(p, eid)
        queue(root, eid, "judge-a", "judge-b")
        drain(root)
        assert len(srv.chat_requests) == 2 * n
        with Project.open(root) as p:
            before = rows_by_round(p, eid)
            scores = quality_scores(p, eid)
        again = queue(root, eid, "judge-b", "judge-a")
        drain(root)
        assert len(srv.chat_requests) == 2 * n  # not one more
        with Project.open(root) as p:
            job = p.jobs.get(again)
            assert job.status is JobStatus.DONE and job.calls == 0 and job.cost_usd == 0
            assert rows_by_round(p, eid) == before and quality_scores(p, eid) == scores
        # a new judge next to a cached one: only the new judge is asked
        queue(root, eid, "judge-a", "judge-c")
        drain(root)
        assert len(srv.chat_requests) == 3 * n
        assert {m for m, _ in script.calls[2 * n :]} == {"judge-c"}


def test_a_malformed_reply_is_repaired_by_asking_again(project: tuple[Path, str]) -> None:
    root, eid = project
    good = Reply(TOOL, verdict_args())
    script = Verdicts({("judge-a", 1): [bad_verdict("H2", "maybe"), good]})
    with FakeServer(script) as srv:
        with Project.open(root) as p:
            add_judges(p, srv, "judge-a", "judge-b")
            n = spoken_turns(p, eid)
        job_id = queue(root, eid, "judge-a", "judge-b")
        drain(root)
        repair = srv.chat_requests[1].body["messages"]
    assert "items.H2.verdict" in repair[-1]["content"]  # the re-ask quotes the error
    with Project.open(root) as p:
        job = p.jobs.get(job_id)
        assert job.status is JobStatus.DONE and job.calls == 2 * n + 1
        assert len(rows_by_round(p, eid)) == 2 * n
        run = QualityVerdicts(p.db).runs(eid)[0]
        oks = [c.ok for c in JudgeRuns(p.db).trace(run["id"]).calls]
        assert oks[:2] == [False, True] and all(oks[2:])


def test_a_reply_that_stays_malformed_fails_clearly_and_stores_nothing(
    project: tuple[Path, str],
) -> None:
    root, eid = project
    script = Verdicts({("judge-b", 3): [bad_verdict("T2", "maybe")]})
    with FakeServer(script) as srv:
        with Project.open(root) as p:
            add_judges(p, srv, "judge-a", "judge-b", schema_retries=2)
        job_id = queue(root, eid, "judge-a", "judge-b")
        drain(root)
    assert script.calls.count(("judge-b", 3)) == 3  # asked, then re-asked twice
    with Project.open(root) as p:
        job = p.jobs.get(job_id)
        assert job.status is JobStatus.FAILED and job.attempts == 1  # not worth a retry
        assert "judge 'judge-b', round 3" in (job.error or "")
        assert "did not match the submit_quality_verdicts schema after 3 tries" in (job.error or "")
        assert "$.items.T2.verdict" in (job.error or "")
        assert QualityVerdicts(p.db).list(eid) == []  # no half-graded episode
        assert {r["status"] for r in QualityVerdicts(p.db).runs(eid)} == {"failed"}
        assert job.cost_usd == pytest.approx(job.calls * CALL_USD)  # what was sent is paid


def test_a_reply_breaking_a_consistency_rule_is_re_asked_then_fails(
    project: tuple[Path, str],
) -> None:
    root, eid = project
    lying = verdict_args(claims=[{"claim": "the pan is empty", "status": "false"}])  # T1 says P
    script = Verdicts({("judge-a", 1): [Reply(TOOL, lying)]})
    with FakeServer(script) as srv:
        with Project.open(root) as p:
            add_judges(p, srv, "judge-a", "judge-b")
        job_id = queue(root, eid, "judge-a", "judge-b")
        drain(root)
        told = srv.chat_requests[1].body["messages"][-1]["content"]
    assert "so T1 must be F" in told
    with Project.open(root) as p:
        job = p.jobs.get(job_id)
        assert job.status is JobStatus.FAILED and script.calls.count(("judge-a", 1)) == 3
        assert "broke a consistency rule 3 time(s)" in (job.error or "")
        assert "'the pan is empty' is marked false" in (job.error or "")


def test_a_retryable_failure_retries_and_the_spend_cap_is_permanent(
    project: tuple[Path, str],
) -> None:
    root, eid = project
    script = Verdicts({("judge-a", 2): [Status(503, no_retry=True), Reply(TOOL, verdict_args())]})
    with FakeServer(script) as srv:
        with Project.open(root) as p:
            add_judges(p, srv, "judge-a", "judge-b")
            n = spoken_turns(p, eid)
        job_id = queue(root, eid, "judge-a", "judge-b", retry_backoff_s=0.0)
        drain(root)
        with Project.open(root) as p:
            job = p.jobs.get(job_id)
            assert job.status is JobStatus.DONE and job.attempts == 2
            assert len(rows_by_round(p, eid)) == 2 * n
            statuses = sorted(r["status"] for r in QualityVerdicts(p.db).runs(eid))
            assert statuses == ["done", "done", "failed", "failed"]  # attempt 1 kept its trail
        # a cap below one call's worst case: refused before anything is sent
        with Project.open(root) as p:
            p.db.execute("DELETE FROM sim_quality_verdicts")
        sent = len(srv.chat_requests)
        capped = queue(root, eid, "judge-a", "judge-b", spend_cap_usd=0.0001)
        drain(root)
        assert len(srv.chat_requests) == sent
    with Project.open(root) as p:
        job = p.jobs.get(capped)
        assert job.status is JobStatus.FAILED and "spend cap" in (job.error or "")


def test_bad_selections_are_refused_before_anything_is_queued(
    project: tuple[Path, str],
) -> None:
    root, eid = project
    with FakeServer(Verdicts()) as srv, Project.open(root) as p:
        add_judges(p, srv, "judge-a", "judge-b")
        for episodes, profiles, match in (
            ([], ["judge-a", "judge-b"], "no episodes"),
            ([eid], ["judge-a"], "two different judge profiles"),
            ([eid], ["judge-a", "judge-a"], "two different judge profiles"),
            ([eid], ["judge-a", "nope"], "no model profile 'nope'"),
            (["f" * 32], ["judge-a", "judge-b"], "no episode"),
        ):
            with pytest.raises(QueueError, match=match):
                queue_quality(p, episodes, profiles=profiles)
        assert p.jobs.query() == []
        one = {"episode_id": eid, "profiles": ["judge-a"]}
        gone = {"episode_id": eid, "profiles": ["judge-a", "gone"]}  # removed after queueing
        bad, removed = p.jobs.enqueue(QUALITY_KIND, [one, gone])
    drain(root)
    with Project.open(root) as p:
        assert "two different model profiles" in (p.jobs.get(bad).error or "")
        assert "judge 'gone': no model profile" in (p.jobs.get(removed).error or "")
        assert p.jobs.get(removed).attempts == 1
    assert JOB_KINDS[QUALITY_KIND].run is judge_quality_job


def test_the_verdicts_are_written_with_the_job_not_before(project: tuple[Path, str]) -> None:
    """Until the worker completes the job, the episode has calls recorded but no verdict."""
    from judge import run_judge_quality

    root, eid = project
    with FakeServer(Verdicts()) as srv:
        with Project.open(root) as p:
            add_judges(p, srv, "judge-a", "judge-b")
            job_id = queue(root, eid, "judge-a", "judge-b")
            job = p.jobs.get(job_id)

        outcome = run_judge_quality(Ctx(job.id, job.payload, root))
    with Project.open(root) as p:
        assert QualityVerdicts(p.db).list(eid) == [] and p.jobs.get(job_id).calls > 0
        claimed = p.jobs.claim("w1", lease_s=30)
        assert claimed is not None
        assert p.jobs.complete(job_id, claimed.lease_owner or "", lambda: outcome.write(p))
        assert len(QualityVerdicts(p.db).list(eid)) == 10 * 2 * spoken_turns(p, eid)
        assert json.loads(p.db.execute("SELECT config FROM judge_runs").fetchone()[0])["rounds"]


def test_the_spend_cap_holds_across_attempts(project: tuple[Path, str]) -> None:
    """What an earlier attempt's recorded calls cost comes off the next attempt's cap."""
    from judge import run_judge_quality
    from judge.models import default_make_api
    from storage import JobError

    root, eid = project
    script = Verdicts({("judge-b", 3): [Status(503, no_retry=True), Reply(TOOL, verdict_args())]})
    caps: list[tuple[str, float | None]] = []

    def make_api(profile: str, p: Project, recorder: Any, cap: float | None) -> Any:
        caps.append((profile, cap))
        return default_make_api(profile, p, recorder, cap)

    with FakeServer(script) as srv:
        with Project.open(root) as p:
            add_judges(p, srv, "judge-a", "judge-b")
        job_id = queue(root, eid, "judge-a", "judge-b", spend_cap_usd=1.0)
        with Project.open(root) as p:
            job = p.jobs.get(job_id)
        with pytest.raises(JobError) as err:
            run_judge_quality(Ctx(job.id, job.payload, root), make_api=make_api)
        assert err.value.retry  # a 503 may work later
        run_judge_quality(Ctx(job.id, job.payload, root), make_api=make_api)
    # attempt 1 paid rounds 1-3 of judge-a and rounds 1-2 of judge-b (its 503 cost nothing)
    assert caps[:2] == [("judge-a", 1.0), ("judge-b", 1.0)]
    assert caps[2][0] == "judge-a" and caps[2][1] == pytest.approx(1.0 - 3 * CALL_USD)
    assert caps[3][0] == "judge-b" and caps[3][1] == pytest.approx(1.0 - 2 * CALL_USD)
