"""Simulation episodes: migration, round trips, batched appends, prefixes, forks, videos."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storage import (
    ActionRecord,
    ActionSource,
    AmbiguousEpisodeError,
    AnomalyRecord,
    ArtifactRecord,
    ConditionRecord,
    EpisodeError,
    EpisodeMode,
    EpisodeNotFoundError,
    EpisodeStatus,
    Project,
    TickRecord,
)
from storage._db import connect, migrate
from storage._schema import MIGRATIONS
from tests.casefactory import write_video

CONTRACT = json.dumps({"type": "terminal_state", "predicates": [["on", "red", "blue"]]})


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    with Project.create(tmp_path / "p") as p:
        yield p


def _create(p: Project, **over: Any) -> str:
    args: dict[str, Any] = {
        "scenario": "stack_two",
        "scenario_sha": "s" * 64,
        "family": "lego",
        "mode": "physics",
        "agent": "rule",
        "seed": 7,
        "delta": 0.05,
        "contract_json": CONTRACT,
        "contract_hash": "c" * 64,
        "config": {"arm": "panda", "budgets": {"ticks": 300}},
    }
    return p.episodes.create(**(args | over))


def _ticks(start: int, stop: int) -> list[TickRecord]:
    return [
        TickRecord(
            tick=t,
            state_hash=f"h{t:04d}",
            diff_json=json.dumps({"moved": {"red": [t, 0, 0]}}) if t % 2 else "{}",
            controller_json=json.dumps({"phase": "reach"}),
            graph_json=json.dumps({"objects": ["red", "blue"]}) if t % 10 == 0 else None,
        )
        for t in range(start, stop)
    ]


def _count(p: Project, table: str) -> int:
    return int(p.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def test_new_project_has_the_sim_tables(project: Project) -> None:
    assert len(MIGRATIONS) >= 4  # v4 added them
    assert project.db["meta"].get("schema_version")["value"] == str(len(MIGRATIONS))
    for table in ("sim_episodes", "sim_ticks", "sim_actions", "sim_anomalies", "sim_conditions",
                  "sim_metrics", "sim_artifacts", "sim_snapshots"):  # fmt: skip
        assert table in project.db.table_names()


def test_v3_project_upgrades_in_place_and_keeps_data(tmp_path: Path) -> None:
    root = tmp_path / "old"
    root.mkdir()
    db = connect(root / "project.sqlite")
    migrate(db, MIGRATIONS[:3], root / "project.sqlite")  # a project written by schema v3
    db.table("raters").insert({"id": "alice", "name": "Alice", "created_at": "then"})
    assert "sim_episodes" not in db.table_names()
    db.close()
    with Project.open(root) as p:
        assert p.db["meta"].get("schema_version")["value"] == str(len(MIGRATIONS))
        assert p.db.table("raters").get("alice")["name"] == "Alice"
        eid = _create(p)
        assert p.episodes.get(eid).status is EpisodeStatus.RUNNING


def test_every_record_round_trips(project: Project) -> None:
    eps = project.episodes
    eid = _create(project, mode=EpisodeMode.SYMBOLIC, reference=True)
    rec = eps.get(eid)
    assert (rec.id, rec.scenario, rec.family, rec.mode, rec.agent) == (
        eid, "stack_two", "lego", EpisodeMode.SYMBOLIC, "rule",
    )  # fmt: skip
    assert (rec.seed, rec.delta, rec.ticks, rec.t_ref, rec.ended) == (7, 0.05, 0, None, None)
    assert rec.contract_json == CONTRACT and rec.contract_hash == "c" * 64
    assert rec.config == {"arm": "panda", "budgets": {"ticks": 300}}
    assert rec.reference and rec.parent_id is None and rec.fork_tick is None
    assert rec.started.endswith("+00:00")

    ticks = _ticks(0, 30)
    actions = [
        ActionRecord(idx=0, tick=0, source=ActionSource.AGENT, text="pick red",
                     action_json='{"verb": "pick", "obj": "red"}', accepted=True,
                     grounded_json='{"target": [0.1, 0.2, 0.0]}'),
        ActionRecord(idx=1, tick=3, source=ActionSource.REPAIR, text="open drawer",
                     action_json='{"verb": "open"}', accepted=False,
                     failed_json='[{"name": "reachable", "message": "too far"}]'),
    ]  # fmt: skip
    anomalies = [
        AnomalyRecord(idx=0, kind="displace", obj="blue", params_json='{"dx": 0.03}', tick=12,
                      trigger_json='{"after_action": 0}')
    ]  # fmt: skip
    snapshots = [(0, '{"qpos": [0.0]}'), (25, '{"qpos": [1.0]}')]
    eps.append(eid, ticks, actions, anomalies, snapshots)
    conditions = [
        ConditionRecord(idx=0, predicate_json='["on", "red", "blue"]', text="red on blue",
                        value="T", witness_tick=27),
        ConditionRecord(idx=1, predicate_json='["clear", "blue"]', text="blue clear", value="U"),
    ]  # fmt: skip
    eps.finish(eid, status="completed", ticks=30, t_ref=28, conditions=conditions,
               metrics={"gcr": 1.0, "collisions": 0})  # fmt: skip

    assert eps.ticks(eid) == ticks
    assert eps.ticks(eid, 10, 20) == ticks[10:20]
    assert eps.ticks(eid, 25) == ticks[25:]
    assert eps.hashes(eid) == [t.state_hash for t in ticks]
    assert eps.actions(eid) == actions
    assert eps.anomalies(eid) == anomalies
    assert eps.conditions(eid) == conditions
    assert eps.metrics(eid) == {"collisions": 0.0, "gcr": 1.0}
    assert eps.snapshot_at_or_before(eid, 24) == snapshots[0]
    assert eps.snapshot_at_or_before(eid, 25) == snapshots[1]
    assert eps.snapshot_at_or_before(eid, 1000) == snapshots[1]
    done = eps.get(eid)
    assert done.status is EpisodeStatus.COMPLETED and done.ticks == 30 and done.t_ref == 28
    assert done.ended is not None and done.ended >= done.started


def test_action_outcome_and_anomaly_classification_are_upserted(project: Project) -> None:
    eps = project.episodes
    eid = _create(project)
    submitted = ActionRecord(idx=0, tick=2, source=ActionSource.USER, text="place red on blue",
                             action_json='{"verb": "place"}', accepted=True)  # fmt: skip
    injected = AnomalyRecord(idx=0, kind="slip", obj="red", params_json="{}", tick=4)
    eps.append(eid, _ticks(0, 5), [submitted], [injected])
    assert eps.actions(eid) == [submitted]
    done = ActionRecord(**{**submitted.__dict__, "outcome": "failed: dropped", "finished_tick": 9})
    classified = AnomalyRecord(**{**injected.__dict__, "classification": "recovered"})
    eps.append(eid, _ticks(5, 10), [done], [classified])
    assert eps.actions(eid) == [done]
    assert eps.anomalies(eid) == [classified]
    assert _count(project, "sim_actions") == 1


def test_append_is_all_or_nothing(project: Project) -> None:
    eps = project.episodes
    eid = _create(project)
    eps.append(eid, _ticks(0, 25), snapshots=[(0, "{}")])
    ok_action = ActionRecord(idx=0, tick=25, source=ActionSource.AGENT, text="x",
                             action_json="{}", accepted=True)  # fmt: skip
    bad_json = [*_ticks(25, 40), TickRecord(tick=40, state_hash="h", diff_json="{not json")]
    with pytest.raises(EpisodeError, match=r"ticks\[15\]\.diff_json"):
        eps.append(eid, bad_json, [ok_action])
    bad_source = ActionRecord(idx=1, tick=25, source="robot", text="y",  # type: ignore[arg-type]
                              action_json="{}", accepted=True)  # fmt: skip
    with pytest.raises(EpisodeError, match=r"actions\[1\]\.source: 'robot'"):
        eps.append(eid, _ticks(25, 50), [ok_action, bad_source])
    # a row the database refuses (tick 24 again) undoes the rows before it in the batch
    with pytest.raises(EpisodeError, match="already stored"):
        eps.append(eid, [*_ticks(25, 30), *_ticks(24, 25)], [ok_action], [], [(25, "{}")])
    assert eps.hashes(eid) == [f"h{t:04d}" for t in range(25)]
    assert eps.actions(eid) == []
    assert _count(project, "sim_snapshots") == 1
    eps.append(eid, _ticks(25, 50), [ok_action])  # the corrected batch goes in whole
    assert len(eps.hashes(eid)) == 50


def test_bad_input_names_the_field_and_writes_nothing(project: Project) -> None:
    eps = project.episodes
    with pytest.raises(EpisodeError, match="mode: 'quantum'"):
        _create(project, mode="quantum")
    with pytest.raises(EpisodeError, match="contract_json"):
        _create(project, contract_json="{")
    with pytest.raises(EpisodeError, match="parent_id and fork_tick"):
        _create(project, fork_tick=3)
    with pytest.raises(EpisodeNotFoundError, match="parent_id: no episode 'deadbeef00'"):
        _create(project, parent_id="deadbeef00", fork_tick=3)
    assert eps.list() == []
    eid = _create(project)
    with pytest.raises(EpisodeError, match="status: 'won' is not one of running, completed"):
        eps.finish(eid, status="won", ticks=3, t_ref=None)
    with pytest.raises(EpisodeError, match=r"conditions\[0\]\.value: 'maybe'"):
        eps.finish(eid, status="completed", ticks=3, t_ref=None,
                   conditions=[ConditionRecord(0, "[]", "p", "maybe")])  # type: ignore[arg-type]  # fmt: skip
    with pytest.raises(EpisodeError, match=r"metrics\['gcr'\]: expected a finite number"):
        eps.finish(eid, status="completed", ticks=3, t_ref=None, metrics={"gcr": float("nan")})
    assert eps.get(eid).status is EpisodeStatus.RUNNING
    assert _count(project, "sim_conditions") == _count(project, "sim_metrics") == 0
    eps.finish(eid, status=EpisodeStatus.CANCELLED, ticks=0, t_ref=None)
    with pytest.raises(EpisodeError, match="is cancelled; only a running episode can append"):
        eps.append(eid, _ticks(0, 1))
    with pytest.raises(EpisodeError, match="only a running episode can finish"):
        eps.finish(eid, status="completed", ticks=0, t_ref=None)
    with pytest.raises(EpisodeNotFoundError, match="no episode"):
        eps.append("f" * 32, _ticks(0, 1))


def test_prefix_lookup_unique_ambiguous_unknown(project: Project) -> None:
    eps = project.episodes
    ids = [_create(project, seed=k) for k in range(40)]
    eid = ids[0]
    assert eps.get(eid[:6]).id == eid
    assert eps.get(eid[:8].upper()).id == eid
    assert eps.hashes(eid[:10]) == []
    with pytest.raises(EpisodeNotFoundError, match="at least 6 characters"):
        eps.get(eid[:5])
    with pytest.raises(EpisodeNotFoundError, match="no episode 'zzzzzz'"):
        eps.get("zzzzzz")
    # two ids sharing a 6-character prefix: make them directly, uuid4 rarely collides that far
    project.db.execute("UPDATE sim_episodes SET id = 'abcdef01' WHERE id = ?", [ids[1]])
    project.db.execute("UPDATE sim_episodes SET id = 'abcdef02' WHERE id = ?", [ids[2]])
    with pytest.raises(AmbiguousEpisodeError, match="abcdef01, abcdef02"):
        eps.get("abcdef")
    assert eps.get("abcdef02").seed == 2
    assert issubclass(AmbiguousEpisodeError, ValueError)
    assert issubclass(EpisodeNotFoundError, ValueError)


def test_list_newest_first_and_filters(project: Project) -> None:
    eps = project.episodes
    a = _create(project, scenario="one")
    b = _create(project, scenario="two", reference=True)
    c = _create(project, scenario="one")
    assert [e.id for e in eps.list()] == [c, b, a]
    assert [e.id for e in eps.list(scenario="one")] == [c, a]
    assert [e.id for e in eps.list(reference=True)] == [b]
    assert [e.id for e in eps.list(scenario="one", reference=False)] == [c, a]


def test_fork_links_to_parent_and_delete_cascades(project: Project) -> None:
    eps = project.episodes
    parent = _create(project)
    eps.append(
        parent, _ticks(0, 50),
        [ActionRecord(0, 1, ActionSource.AGENT, "pick", "{}", True)],
        [AnomalyRecord(0, "slip", "red", "{}", 3)],
        [(0, "{}"), (25, "{}")],
    )  # fmt: skip
    eps.finish(parent, status="execution_blocked", ticks=50, t_ref=None,
               conditions=[ConditionRecord(0, "[]", "p", "F")], metrics={"gcr": 0.0})  # fmt: skip
    fork = _create(project, parent_id=parent[:8], fork_tick=25, seed=8)
    assert eps.snapshot_at_or_before(parent, 30) == (25, "{}")
    rec = eps.get(fork)
    assert rec.parent_id == parent and rec.fork_tick == 25
    eps.append(fork, _ticks(25, 30))

    eps.delete(parent)
    with pytest.raises(EpisodeNotFoundError):
        eps.get(parent)
    for table in ("sim_actions", "sim_anomalies", "sim_conditions", "sim_metrics"):
        assert _count(project, table) == 0
    assert _count(project, "sim_snapshots") == 0
    assert _count(project, "sim_ticks") == 5  # the fork's own ticks stay
    orphan = eps.get(fork)
    assert orphan.parent_id is None and orphan.fork_tick == 25
    with pytest.raises(EpisodeNotFoundError):
        eps.delete(parent)


def test_add_video_stores_by_sha_and_is_idempotent(project: Project, tmp_path: Path) -> None:
    eps = project.episodes
    eid = _create(project)
    video = write_video(tmp_path / "wrist.mp4", n=6)
    sha = eps.add_video(eid, video, camera="wrist", fps=20.0, frames=6)
    assert sha == eps.add_video(eid, video, camera="wrist", fps=20.0, frames=6)
    stored = project.media_path(sha)
    assert stored.read_bytes() == video.read_bytes()
    assert stored.is_relative_to(project.media_dir) and sha in stored.name
    assert eps.artifacts(eid) == [ArtifactRecord("video", "wrist", sha, 20.0, 6)]
    assert _count(project, "media") == 1
    assert not list(project.media_dir.rglob("*.importing"))
    # the same file for a second camera shares the media row; a new take replaces the row
    eps.add_video(eid[:6], video, camera="scene", fps=20.0, frames=6)
    other = eps.add_video(eid, write_video(tmp_path / "w2.mp4", n=8, seed=3), camera="wrist",
                          fps=20.0, frames=8)  # fmt: skip
    assert [(a.camera, a.media_sha, a.frames) for a in eps.artifacts(eid)] == [
        ("scene", sha, 6), ("wrist", other, 8),
    ]  # fmt: skip
    assert _count(project, "media") == 2
    with pytest.raises(EpisodeError, match="fps"):
        eps.add_video(eid, video, camera="top", fps=0, frames=6)
    with pytest.raises(EpisodeNotFoundError):
        eps.add_video("0" * 32, video, camera="top", fps=20.0, frames=6)
    eps.delete(eid)
    assert _count(project, "sim_artifacts") == 0 and stored.exists()  # media are never deleted
