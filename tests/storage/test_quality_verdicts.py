"""Interaction-quality verdicts (schema v7): the cache rows, their runs, and the migration."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from storage import (
    JudgeRuns,
    Project,
    QualityVerdictError,
    QualityVerdictRecord,
    QualityVerdicts,
    RunCall,
)
from storage._db import connect, migrate, write
from storage._schema import MIGRATIONS


def _episode(p: Project) -> str:
    return p.episodes.create(
        scenario="burger", scenario_sha="s", family="kitchen", mode="symbolic", agent="rule",
        seed=1, delta=0.1, contract_json="{}", contract_hash="h", config={"interactive": True},
    )  # fmt: skip


def _v(eid: str, **over: object) -> QualityVerdictRecord:
    base = QualityVerdictRecord(eid, "judge-a", "iq-judge@1", 0, 3, "T1", "P", "true claims")
    return replace(base, **over)  # type: ignore[arg-type]


def test_v6_project_upgrades_to_v7_and_keeps_its_runs(tmp_path: Path) -> None:
    root = tmp_path / "v6"
    root.mkdir()
    db = connect(root / "project.sqlite")
    migrate(db, MIGRATIONS[:6], root / "project.sqlite")  # a project written by schema v6
    db.execute(
        "INSERT INTO judge_runs (job_id, video_id, profile, mode, prompt_version, config, "
        "status) VALUES (NULL, NULL, 'local', 'gated', 'x', '{}', 'done')"
    )
    assert "sim_quality_verdicts" not in db.table_names()
    db.close()
    with Project.open(root) as p:
        assert len(MIGRATIONS) >= 7
        assert p.db.table("meta").get("schema_version")["value"] == str(len(MIGRATIONS))
        assert "sim_quality_verdicts" in p.db.table_names()
        (run,) = p.db.execute("SELECT mode, episode_id FROM judge_runs").fetchall()
        assert run == ("gated", None)


def test_verdicts_round_trip_and_a_cached_one_is_kept(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        eid = _episode(p)
        store = QualityVerdicts(p.db)
        rows = [_v(eid), _v(eid, item="T2", verdict="NA"), _v(eid, round=1, item="T1", verdict="F")]
        assert store.add(rows) == 3
        # the same key again (a concurrent job's answer): the stored one stays
        assert store.add([_v(eid, verdict="F", reason="other")]) == 0
        assert store.list(eid)[0] == rows[0]
        assert store.judged_rounds(eid, "judge-a", "iq-judge@1") == {0, 1}
        assert store.judged_rounds(eid, "judge-b", "iq-judge@1") == set()
        assert store.judged_rounds(eid, "judge-a", "iq-judge@2") == set()
        assert [v.item for v in store.list(eid, profiles=["judge-b"])] == []
        p.episodes.delete(eid)  # the verdicts go with their episode
        assert p.db.execute("SELECT COUNT(*) FROM sim_quality_verdicts").fetchone()[0] == 0


@pytest.mark.parametrize(
    ("over", "field"),
    [({"verdict": "pass"}, "verdicts[0].verdict"), ({"round": -1}, "verdicts[0].round"),
     ({"item": ""}, "verdicts[0].item"), ({"judge_profile": None}, "verdicts[0].judge_profile"),
     ({"reason": 3}, "verdicts[0].reason")],
)  # fmt: skip
def test_a_bad_verdict_is_refused_by_field_and_nothing_is_written(
    tmp_path: Path, over: dict[str, object], field: str
) -> None:
    with Project.create(tmp_path / "p") as p:
        eid = _episode(p)
        with pytest.raises(QualityVerdictError, match=field.replace("[", r"\[")):
            QualityVerdicts(p.db).add([_v(eid, **over), _v(eid, item="T2")])
        assert QualityVerdicts(p.db).list(eid) == []
        with pytest.raises(sqlite3.IntegrityError), write(p.db):  # and the table agrees
            p.db.execute(
                "INSERT INTO sim_quality_verdicts VALUES (?, 'a', 'v', 0, 'T1', 'yes', '', 0, "
                "NULL, 'now')",
                [eid],
            )


def test_quality_runs_count_their_calls_per_judge(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        eid = _episode(p)
        (job,) = p.jobs.enqueue("judge.quality", [{"episode_id": eid}])
        store, runs = QualityVerdicts(p.db), JudgeRuns(p.db)
        a = store.start_run(job_id=job, episode_id=eid, profile="judge-a", model="m",
                            prompt_version="iq-judge@1", config={"k": 1})  # fmt: skip
        b = store.start_run(job_id=job, episode_id=eid, profile="judge-b", model="m",
                            prompt_version="iq-judge@1", config={})  # fmt: skip
        call = RunCall("quality_round", "iq-judge@1", {}, "{}", True, None, 0.1, 10, 2, 0.25)
        runs.record_call(a, call)
        runs.record_call(a, call)
        runs.record_call(b, call)
        assert store.spent(job, "judge-a") == pytest.approx(0.5)
        assert store.spent(job, "judge-b") == pytest.approx(0.25)
        assert p.jobs.spend(job_id=job) == pytest.approx(0.75)  # the queue's own sum sees them
        store.finish_run(a)
        done = {r["profile"]: r for r in store.runs(eid)}
        assert done["judge-a"]["status"] == "done" and done["judge-a"]["cost_usd"] == 0.5
        assert done["judge-a"]["calls"] == 2 and done["judge-b"]["status"] == "running"
        with pytest.raises(QualityVerdictError, match="not a running quality run"):
            store.finish_run(a)
