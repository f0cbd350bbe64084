"""Batches in process: manifests refused by field, planning, jobs through a real worker, the
results table against a hand computation, drill-down, attributions proposed and edited."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

import pytest

from sim.batch import (
    EPISODE_KIND,
    ManifestError,
    ResultsError,
    drill_down,
    load_manifest,
    parse_manifest,
    plan_cells,
    propose_attribution,
    queue_batch,
    results_table,
)
from storage import BatchError, Project, run_worker


def manifest(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "format": "workbench-batch/1", "name": "t", "scenarios": ["cook-patty", "cheeseburger"],
        "personas": ["novice", "expert"], "assistants": ["oracle"], "runs": 3,
    }  # fmt: skip
    return {**base, **over}


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"format": "workbench-batch/2"}, "m.json: format: expected 'workbench-batch/1'"),
        ({"scenarios": ["nope"]}, "m.json: scenarios[0] (nope): 'nope' is neither"),
        ({"personas": ["nov"]}, "m.json: personas: [0]: no persona 'nov'"),
        ({"personas": [{"name": "x", "trust": "weird"}]}, "m.json: personas: [0].trust"),
        ({"assistants": ["gpt"]}, "m.json: assistants[0].kind: no assistant 'gpt'"),
        ({"user": "robot"}, "m.json: user.kind: no simulated user 'robot'"),
        ({"runs": 0}, "m.json: runs: Input should be greater than or equal to 1"),
        ({"timing": ["slow"]}, "m.json: timing.0:"),
        ({"personas": ["novice", "novice"]}, "m.json: personas[1]: 'novice' appears twice"),
        ({"colour": "red"}, "m.json: colour: Extra inputs are not permitted"),
    ],
)
def test_bad_manifests_name_the_field(over: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestError) as info:
        parse_manifest(manifest(**over), source="m.json")
    assert str(info.value).startswith(message), str(info.value)


def test_manifest_files_json_and_toml(tmp_path: Path) -> None:
    (tmp_path / "m.json").write_text(json.dumps(manifest()))
    (tmp_path / "m.toml").write_text(
        'format = "workbench-batch/1"\nname = "t"\nscenarios = ["cook-patty"]\n'
        'personas = ["novice"]\nassistants = ["oracle"]\nruns = 2\n'
    )
    assert len(plan_cells(load_manifest(tmp_path / "m.json"))) == 12
    assert len(plan_cells(load_manifest(tmp_path / "m.toml"))) == 2
    (tmp_path / "bad.json").write_text('{"format": "workbench-batch/1",\n "name": }')
    with pytest.raises(ManifestError, match=r"bad.json: line 2: not JSON"):
        load_manifest(tmp_path / "bad.json")
    with pytest.raises(ManifestError, match=r"missing.json: cannot read"):
        load_manifest(tmp_path / "missing.json")


def test_plan_order_and_seeds() -> None:
    cells = plan_cells(parse_manifest(manifest(seed=100)))
    assert [(c.cell, c.run) for c in cells[:4]] == [(0, 0), (0, 1), (0, 2), (1, 0)]
    assert [(c.scenario, c.persona) for c in cells[::3]] == [
        ("cook-patty", "novice"), ("cook-patty", "expert"),
        ("cheeseburger", "novice"), ("cheeseburger", "expert"),
    ]  # fmt: skip
    # run r is the same world in every cell: seed + r
    assert {c.seed for c in cells if c.run == 1} == {101}


def test_a_missing_profile_queues_nothing(tmp_path: Path) -> None:
    m = parse_manifest(
        manifest(assistants=[{"name": "a", "kind": "oracle", "options": {"profile": "nope"}}])
    )
    with Project.create(tmp_path / "p") as p:
        with pytest.raises(ManifestError, match=r"assistants\[0\].options.profile: no model"):
            queue_batch(p, m)
        assert p.batches.list() == [] and p.jobs.query() == []


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("batch") / "p"
    with Project.create(root) as p:
        batch_id, jobs = queue_batch(p, parse_manifest(manifest()))
        assert len(jobs) == 12
        assert {j.kind for j in p.jobs.query()} == {EPISODE_KIND}
    stats = run_worker(root, concurrency=2, drain=True, kind_modules=["sim.batch"],
                       log=lambda _r: None)  # fmt: skip
    assert stats.done == 12 and stats.failed == 0
    return root, batch_id


def test_every_planned_episode_is_stored_once(ran: tuple[Path, str]) -> None:
    root, batch_id = ran
    with Project.open(root) as p:
        cells = p.batches.cells(batch_id)
        assert p.batches.status(batch_id)["stored"] == 12
        ids = [c.episode_id for c in cells]
        assert None not in ids and len(set(ids)) == 12
        assert {e.id for e in p.episodes.list(reference=False)} == set(ids)
        for c in cells:  # each episode is what its cell planned
            ep = p.episodes.get(str(c.episode_id))
            assert (ep.scenario, ep.seed, ep.config["persona"]["name"]) == (
                c.scenario, c.seed, c.persona,
            )  # fmt: skip
            assert p.jobs.get(int(str(c.job_id))).result_ref == f"sim_episodes:{c.episode_id}"
        with pytest.raises(BatchError, match="already has episode"):
            p.batches.store_episode(batch_id, 0, 0, str(cells[1].episode_id))


def test_results_table_matches_a_hand_computation(ran: tuple[Path, str]) -> None:
    root, batch_id = ran
    with Project.open(root) as p:
        cells = p.batches.cells(batch_id)
        table = results_table(p, batch_id, by=["scenario"])
        assert [r.key for r in table.rows] == [("cook-patty",), ("cheeseburger",)]
        for row in table.rows:
            per_run = []
            for r in range(3):
                eps = [c.episode_id for c in cells if c.run == r and c.scenario == row.key[0]]
                per_run.append(statistics.fmean(p.episodes.metrics(str(e))["gcr"] for e in eps))
            s = row.summaries["goal_completion"]
            assert s.mean == pytest.approx(statistics.fmean(per_run))
            assert s.sd == pytest.approx(statistics.pstdev(per_run))
            assert [v.n for v in s.runs] == [2, 2, 2]
            # detection pools the run's triggered errors: Σ detected / Σ triggered
            det = []
            for r in range(3):
                ms = [p.episodes.metrics(str(c.episode_id)) for c in cells
                      if c.run == r and c.scenario == row.key[0]]  # fmt: skip
                det.append(sum(m["errors_detected"] for m in ms)
                           / sum(m["errors_triggered"] for m in ms))  # fmt: skip
            assert row.summaries["detection"].mean == pytest.approx(statistics.fmean(det))
            assert [v.n for v in row.summaries["detection"].runs] == [2, 2, 2]
            assert row.summaries["in_time_success"].mean is not None  # T_ref from a reference
            behind = drill_down(table, row.key, "success")
            assert sorted(behind) == sorted(
                str(c.episode_id) for c in cells if c.scenario == row.key[0]
            )
        whole = results_table(p, batch_id)
        assert [r.key for r in whole.rows] == [("oracle",)] and whole.rows[0].stored == 12
        with pytest.raises(ResultsError, match="no axis 'colour'"):
            results_table(p, batch_id, by=["colour"])
        with pytest.raises(ResultsError, match="no row"):
            drill_down(table, ("fetch-mug",), "success")


def test_attributions_proposed_and_edits_kept(ran: tuple[Path, str]) -> None:
    root, batch_id = ran
    with Project.open(root) as p:
        rows = p.batches.attributions(batch_id)
        assert len(rows) == 12 and {r.source for r in rows} == {"proposed"}
        for r in rows:
            success = p.episodes.metrics(r.episode_id)["success"]
            assert (r.party == "none") == (success == 1.0)
        failed = [r for r in rows if r.party != "none"]
        assert failed, "the cheeseburger runs fail today: the table needs a failure to attribute"
        target = failed[0].episode_id
        p.batches.edit_attribution(target, "environment", "the bun slid off (looked at video)",
                                   scope="r")  # fmt: skip
        party, _reason = propose_attribution(p, target)
        assert not p.batches.propose(target, party, "again")
        got = p.batches.attribution(target)
        assert got is not None and (got.party, got.source) == ("environment", "edited")
        assert [r.episode_id for r in p.batches.attributions(batch_id, "environment")] == [target]


def test_a_stale_rerun_stores_nothing(ran: tuple[Path, str]) -> None:
    root, batch_id = ran
    with Project.open(root) as p:
        before = len(p.episodes.list())
        cell = p.batches.cells(batch_id)[0]
        # a second job for a run already stored (a script queued the payload again)
        (dup,) = p.jobs.enqueue(EPISODE_KIND, [{"batch_id": batch_id, "cell": 0, "run": 0}])
    stats = run_worker(root, drain=True, kind_modules=["sim.batch"], log=lambda _r: None)
    with Project.open(root) as p:
        assert stats.done == 1 and len(p.episodes.list()) == before
        assert p.jobs.get(dup).result_ref == f"sim_episodes:{cell.episode_id}"
        assert p.batches.cell(batch_id, cell.cell, cell.run).episode_id == cell.episode_id


def test_agents_in_a_batch_scripted_and_external(tmp_path: Path) -> None:
    example = Path(__file__).parents[3] / "docs" / "examples" / "external_agent.py"
    argv = [sys.executable, str(example), "pick up the red brick",
            "put the red brick on the blue brick"]  # fmt: skip
    m = parse_manifest(manifest(
        scenarios=["stack-two"], personas=["novice"], assistants=["oracle"], runs=2,
        agents=["scripted", {"name": "mine", "kind": "external", "options": {"argv": argv}}],
    ))  # fmt: skip
    cells = plan_cells(m)
    assert [(c.persona, c.assistant, c.timing) for c in cells[::2]] == [
        ("novice", "oracle", "fixed"), ("-", "scripted", "-"), ("-", "mine", "-"),
    ]  # fmt: skip
    root = tmp_path / "p"
    with Project.create(root) as p:
        batch_id, _ = queue_batch(p, m)
    stats = run_worker(root, drain=True, kind_modules=["sim.batch"], log=lambda _r: None)
    assert stats.done == 6 and stats.failed == 0
    with Project.open(root) as p:
        table = results_table(p, batch_id)
        rows = {r.key[0]: r for r in table.rows}
        assert rows["scripted"].summaries["success"].mean == 1.0
        assert rows["mine"].summaries["success"].mean == 1.0
        for c in p.batches.cells(batch_id):
            ep = p.episodes.get(str(c.episode_id))
            if c.assistant == "mine":  # the protocol messages are stored with the episode
                kinds = [json.loads(x.sent_json)["type"] for x in p.episodes.exchanges(ep.id)]
                assert kinds[0] == "hello" and kinds[-1] == "end"
            assert (ep.agent, bool(ep.config.get("interactive"))) == {
                "oracle": ("rule+oracle", True),
                "scripted": ("scripted", False),
                "mine": ("external", False),
            }[c.assistant]


def test_agent_manifest_errors(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match=r"agents\[0\].kind: no agent 'robot'"):
        parse_manifest(manifest(agents=["robot"]))
    with pytest.raises(ManifestError, match=r"agents: 'oracle' also names an assistant"):
        parse_manifest(manifest(agents=[{"name": "oracle", "kind": "scripted"}]))
    with pytest.raises(ManifestError, match="at least one assistant"):
        parse_manifest(manifest(assistants=[]))
    bad = parse_manifest(manifest(assistants=[], agents=[{"name": "x", "kind": "external"}]))
    with Project.create(tmp_path / "p") as p:
        with pytest.raises(ManifestError, match=r"agents\[0\]: agent option argv"):
            queue_batch(p, bad)
        assert p.batches.list() == []


def test_a_physics_batch_runs_on_a_named_arm_profile(tmp_path: Path) -> None:
    """The manifest's ``arm`` (a profile here: a lab's copy of wb6) is what every episode and
    the batch's reference run on, recorded by label; a profile the project lacks is refused
    before anything is queued, naming the field."""
    import shutil

    from sim.episode import add_arm
    from sim.mujoco import WB6

    lab = tmp_path / "lab_six.xml"
    shutil.copy(WB6.mjcf, lab)
    root = tmp_path / "p"
    m = parse_manifest(manifest(scenarios=["stack-two"], personas=["novice"], runs=1,
                                mode="physics", arm="lab-six"))  # fmt: skip
    with Project.create(root) as p:
        with pytest.raises(ManifestError, match=r"manifest 't': arm.*lab-six"):
            queue_batch(p, m)
        assert p.batches.list() == [] and p.episodes.list() == []
        add_arm(p, "lab-six", lab, trials=0, ee_site=WB6.ee_site, arm_joints=WB6.arm_joints,
                gripper_actuators=WB6.gripper_actuators)  # fmt: skip
        batch_id, _ = queue_batch(p, m)
    stats = run_worker(root, drain=True, kind_modules=["sim.batch"], log=lambda _r: None)
    assert stats.done == 1 and stats.failed == 0
    with Project.open(root) as p:
        arms = {e.config.get("arm") for e in p.episodes.list()}
        assert arms == {"lab-six@1"}  # the cell's episode and the reference
        assert len(p.episodes.list(reference=True)) == 1
        (cell,) = p.batches.cells(batch_id)
        assert p.episodes.get(str(cell.episode_id)).status.value == "completed"
