"""Episode batches (schema v6): planned cells, jobs, exactly-once episodes, attributions."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from annotation import UserError
from storage import (
    AmbiguousBatchError,
    AttributionRecord,
    BatchCellRecord,
    BatchError,
    BatchNotFoundError,
    BatchRecord,
    EpisodeNotFoundError,
    Project,
)

MANIFEST = {"format": "workbench-batch/1", "scenarios": ["burger", "salad"], "runs": 2}


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    with Project.create(tmp_path / "p") as p:
        yield p


def _cells(
    scenarios: tuple[str, ...] = ("burger", "salad"), runs: int = 2
) -> list[BatchCellRecord]:
    return [
        BatchCellRecord(cell=c, run=r, scenario=s, persona="novice", assistant="oracle",
                        timing="fixed:2", seed=100 * c + r)
        for c, s in enumerate(scenarios)
        for r in range(runs)
    ]  # fmt: skip


def _episode(p: Project, seed: int = 1) -> str:
    return p.episodes.create(
        scenario="burger", scenario_sha="s", family="kitchen", mode="symbolic", agent="oracle",
        seed=seed, delta=1.0, contract_json="{}", contract_hash="h", config={},
    )  # fmt: skip


def test_create_get_list_and_cells_round_trip(project: Project) -> None:
    batches = project.batches
    bid = batches.create("pilot", MANIFEST, _cells())
    assert len(bid) == 32 and int(bid, 16) >= 0
    rec = batches.get(bid[:6])
    assert isinstance(rec, BatchRecord)
    assert (rec.id, rec.name, rec.manifest, rec.cells) == (bid, "pilot", MANIFEST, 2)
    assert rec.created.endswith("+00:00")
    assert batches.cells(bid) == _cells()  # no job, no episode yet
    assert batches.cell(bid, 1, 0) == _cells()[2]
    other = batches.create("second", {}, _cells(("tea",), runs=1))
    assert [b.id for b in batches.list()] == [other, bid]
    assert batches.status(bid) == {
        "planned": 4, "stored": 0, "unqueued": 4, "queued": 0, "running": 0, "done": 0,
        "failed": 0, "cancelled": 0,
    }  # fmt: skip


def test_bad_batches_are_refused_naming_the_field(project: Project) -> None:
    batches = project.batches
    good = _cells()
    cases: list[tuple[str, Any, Any, str]] = [
        ("", MANIFEST, good, "name: expected a non-empty name"),
        ("x", {"bad": {1, 2}}, good, "manifest: not JSON-serialisable"),
        ("x", MANIFEST, [], "cells: a batch needs at least one planned episode"),
        ("x", MANIFEST, [good[0], good[0]], r"cells\[1\]: cell 0 run 0 appears twice"),
        ("x", MANIFEST, [good[0], BatchCellRecord(0, 1, "salad", "novice", "oracle", "fixed:2", 1)],
         r"cells\[1\]\.scenario: cell 0 is 'burger' in run 0"),
        ("x", MANIFEST, [BatchCellRecord(0, 0, "", "novice", "oracle", "fixed:2", 1)],
         r"cells\[0\]\.scenario: expected a non-empty name"),
        ("x", MANIFEST, [BatchCellRecord(0, -1, "a", "b", "c", "d", 1)],
         r"cells\[0\]\.run: expected an int >= 0"),
        ("x", MANIFEST, [BatchCellRecord(0, 0, "a", "b", "c", "d", True)],  # type: ignore[arg-type]
         r"cells\[0\]\.seed: expected an int"),
        ("x", MANIFEST, [BatchCellRecord(0, 0, "a", "b", "c", "d", 1, episode_id="e" * 32)],
         r"cells\[0\]\.episode_id: set by store_episode"),
        ("x", MANIFEST, ["cell"], r"cells\[0\]: expected a BatchCellRecord"),
    ]  # fmt: skip
    for name, manifest, cells, match in cases:
        with pytest.raises(BatchError, match=match):
            batches.create(name, manifest, cells)
    assert batches.list() == []
    assert issubclass(BatchError, UserError)


def test_batch_ids_resolve_by_prefix_with_clear_errors(project: Project) -> None:
    batches = project.batches
    with pytest.raises(BatchNotFoundError, match="this project has no batches"):
        batches.get("abcdef")
    bid = batches.create("pilot", MANIFEST, _cells())
    assert batches.get(bid.upper()[:7]).id == bid
    with pytest.raises(BatchNotFoundError, match="at least 6 characters"):
        batches.get(bid[:5])
    with pytest.raises(BatchNotFoundError, match=rf"no batch 'zzzzzz'.*{bid[:8]}.*pilot"):
        batches.get("zzzzzz")
    batches.create("twin", MANIFEST, _cells())
    # two ids sharing a 6-character prefix: renamed directly, uuid4 rarely collides that far
    project.db.execute("PRAGMA foreign_keys = OFF")
    for name, new_id in (("pilot", "abcdef01"), ("twin", "abcdef02")):
        (old_id,) = project.db.execute(
            "SELECT id FROM sim_batches WHERE name = ?", [name]
        ).fetchone()
        for table, column in (("sim_batches", "id"), ("sim_batch_cells", "batch_id")):
            project.db.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ?",
                               [new_id, old_id])  # fmt: skip
    project.db.execute("PRAGMA foreign_keys = ON")
    with pytest.raises(AmbiguousBatchError, match=r"abcdef01 \(pilot\), abcdef02 \(twin\)"):
        batches.cells("abcdef")
    assert batches.get("abcdef02").name == "twin"


def test_jobs_are_linked_and_status_counts_cells_by_job_state(project: Project) -> None:
    batches, jobs = project.batches, project.jobs
    bid = batches.create("pilot", MANIFEST, _cells())
    ids = jobs.enqueue("sim.episode", [{"cell": k} for k in range(3)], batch=bid)
    batches.set_jobs(bid, {(0, 0): ids[0], (0, 1): ids[1]})
    batches.set_job(bid, 1, 0, ids[2])
    assert [c.job_id for c in batches.cells(bid)] == [ids[0], ids[1], ids[2], None]
    job = jobs.claim("w1", lease_s=60)
    assert job is not None and job.id == ids[0]
    assert jobs.complete(job.id, job.lease_owner or "", lambda: None)
    jobs.cancel([ids[1]])
    status = batches.status(bid)
    assert status == {
        "planned": 4, "stored": 0, "unqueued": 1, "queued": 1, "running": 0, "done": 1,
        "failed": 0, "cancelled": 1,
    }  # fmt: skip
    with pytest.raises(BatchError, match="job_id: no job 999"):
        batches.set_job(bid, 1, 1, 999)
    with pytest.raises(BatchError, match="cell 7 run 0: not planned in batch"):
        batches.set_job(bid, 7, 0, ids[0])
    with pytest.raises(BatchError, match="nothing was written"):
        batches.set_jobs(bid, {(1, 1): ids[0], (9, 9): ids[0]})
    assert batches.cell(bid, 1, 1).job_id is None
    project.db.execute("DELETE FROM jobs WHERE id = ?", [ids[2]])  # a purged job unlinks
    assert batches.cell(bid, 1, 0).job_id is None


def test_an_episode_is_stored_exactly_once_per_cell(project: Project) -> None:
    batches = project.batches
    bid = batches.create("pilot", MANIFEST, _cells())
    first, second = _episode(project, 1), _episode(project, 2)
    batches.store_episode(bid, 0, 1, first[:8])
    assert batches.cell(bid, 0, 1).episode_id == first
    with pytest.raises(BatchError, match=rf"cell 0 run 1 already has episode {first}"):
        batches.store_episode(bid, 0, 1, second)
    with pytest.raises(BatchError, match=rf"episode {first} is already stored in batch"):
        batches.store_episode(bid, 1, 0, first)
    with pytest.raises(EpisodeNotFoundError):
        batches.store_episode(bid, 1, 0, "f" * 32)
    with pytest.raises(BatchError, match="cell 5 run 0: not planned"):
        batches.store_episode(bid, 5, 0, second)
    assert batches.status(bid)["stored"] == 1
    # the database itself refuses a second episode for a cell, whoever writes it
    with pytest.raises(sqlite3.IntegrityError):
        project.db.execute(
            "UPDATE sim_batch_cells SET episode_id = ? WHERE batch_id = ? AND cell = 1 AND run = 0",
            [first, bid],
        )


def test_a_duplicate_store_rolls_back_the_whole_job_transaction(project: Project) -> None:
    """Two claims of the same cell (a worker killed after its write, its job re-run): the second
    job's episode, written in the transaction that completes the job, leaves no trace."""
    batches, jobs = project.batches, project.jobs
    bid = batches.create("pilot", MANIFEST, _cells())
    a, b = jobs.enqueue("sim.episode", [{"cell": 0, "run": 0}] * 2, batch=bid)

    def write_episode() -> str:
        eid = _episode(project, 9)
        project.episodes.finish(eid, status="completed", ticks=5, t_ref=4)
        batches.propose(eid, "none", "completed in time")
        batches.store_episode(bid, 0, 0, eid)
        return f"sim_episodes:{eid}"

    for expected in (a, b):
        job = jobs.claim("w", lease_s=60)
        assert job is not None and job.id == expected
        if expected == a:
            assert jobs.complete(job.id, job.lease_owner or "", write_episode)
        else:
            with pytest.raises(BatchError, match="already has episode"):
                jobs.complete(job.id, job.lease_owner or "", write_episode)
    assert len(project.episodes.list()) == 1
    assert project.db.execute("SELECT COUNT(*) FROM sim_attributions").fetchone()[0] == 1
    assert jobs.get(a).status.value == "done" and jobs.get(b).status.value == "running"
    assert batches.status(bid)["stored"] == 1


def test_attributions_propose_edit_filter(project: Project) -> None:
    batches = project.batches
    bid = batches.create("pilot", MANIFEST, _cells())
    eps = [_episode(project, k) for k in range(3)]
    for (cell, run), eid in zip([(0, 0), (0, 1), (1, 0)], eps, strict=True):
        batches.store_episode(bid, cell, run, eid)
    loose = _episode(project, 99)  # not in any batch: attributable, never listed for the batch
    assert batches.propose(eps[0], "assistant", "missed the forgotten step at tick 12")
    assert batches.propose(eps[1], "user", "ignored correct advice")
    assert batches.propose(eps[2], "environment", "grasp failed twice")
    assert batches.propose(loose, "none", "")
    assert batches.propose(eps[1], "assistant", "re-proposed after a metrics fix")  # replaces
    batches.edit_attribution(eps[2], "assistant", "the advice was wrong, not the grasp", scope="r")
    assert not batches.propose(eps[2], "environment", "proposal again")  # an edit stands
    rec = batches.attribution(eps[2])
    assert isinstance(rec, AttributionRecord)
    assert (rec.episode_id, rec.party, rec.reason, rec.source) == (
        eps[2], "assistant", "the advice was wrong, not the grasp", "edited",
    )  # fmt: skip
    assert rec.updated.endswith("+00:00")
    assert [a.episode_id for a in batches.attributions(bid)] == eps
    assert [a.episode_id for a in batches.attributions(bid[:6], party="assistant")] == eps
    assert batches.attributions(bid, party="user") == []
    assert batches.attribution(_episode(project, 7)) is None
    with pytest.raises(BatchError, match="party: 'robot' is not one of assistant, user"):
        batches.propose(eps[0], "robot", "x")  # type: ignore[arg-type]
    with pytest.raises(BatchError, match="reason: expected text"):
        batches.edit_attribution(eps[0], "user", None, scope="r")  # type: ignore[arg-type]
    with pytest.raises(EpisodeNotFoundError):
        batches.propose("f" * 32, "user", "x")


def test_deleting_an_episode_frees_its_cell_and_drops_its_attribution(project: Project) -> None:
    batches = project.batches
    bid = batches.create("pilot", MANIFEST, _cells())
    eid = _episode(project)
    batches.store_episode(bid, 1, 1, eid)
    batches.propose(eid, "assistant", "late reply")
    project.episodes.delete(eid)
    assert batches.cell(bid, 1, 1).episode_id is None
    assert batches.attributions(bid) == []
    assert project.db.execute("SELECT COUNT(*) FROM sim_attributions").fetchone()[0] == 0
    assert batches.status(bid)["stored"] == 0
    rerun = _episode(project, 2)
    batches.store_episode(bid, 1, 1, rerun)  # the freed cell takes its re-run
    assert batches.cell(bid, 1, 1).episode_id == rerun
