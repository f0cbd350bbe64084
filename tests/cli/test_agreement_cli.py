"""``workbench agreement --json`` on a project with two raters and a judge."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from annotation import Answer
from annotation._ablation import FULL
from app.cli._main import cli
from storage import Project, import_cases
from tests.app.test_results_workspace import rate


def test_agreement_json(tmp_path: Path, cases_dir: Path) -> None:
    project = tmp_path / "p"
    with Project.create(project) as p:
        import_cases(p, cases_dir)
        for k, v in enumerate(p.videos()):
            rate(p, "alice", v.id, ("T3", None, "P2")[k % 3])
            rate(p, "bob", v.id, ("T3", "P4", "P2")[k % 3])
    res = CliRunner().invoke(
        cli, ["agreement", "--project", str(project), "--json", "--n-boot", "200",
              "--csv", str(tmp_path / "a.csv")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["videos"] == 3 and out["n_boot"] == 200 and out["evaluators"] == []
    icc = next(r for r in out["agreement"] if r["metric"] == "icc_avg" and r["axis"] == "task")
    assert icc["group"] == "human-human" and icc["n"] == 3
    assert (tmp_path / "a.csv").read_text().startswith("group,evaluator,axis,metric")
    again = json.loads(
        CliRunner()
        .invoke(cli, ["agreement", "--project", str(project), "--json", "--n-boot", "200"])
        .output
    )
    assert again["agreement"] == out["agreement"]  # seeded: reproducible


def test_ablation_from_recorded_gates_and_holistic_ratings(tmp_path: Path, cases_dir: Path) -> None:
    project = tmp_path / "p"
    with Project.create(project) as p:
        import_cases(p, cases_dir)
        for k, v in enumerate(p.videos()):
            rate(p, "alice", v.id, ("T1", None, "P2")[k % 3])
            if k % 3 == 0:  # pilot mode: every gate recorded, also after the T1 failure
                sg = p.annotations.plan(v.case_id, "alice")[0]
                for gate in ("T2", "T3"):
                    p.annotations.set_answer(v.id, "alice", sg.id, gate, Answer.PASS)
            # holistic judgements that agree with the full rubric on two of three videos
            p.annotations.set_holistic(
                v.id, "alice", task=(0, 3, 2)[k % 3], physics=(4, 4, 1)[k % 3]
            )
    res = CliRunner().invoke(cli, ["ablation", "--project", str(project), "--json"])
    assert res.exit_code == 0, res.output
    rows = {(r["axis"], r["variant"]): r for r in json.loads(res.output)}
    full_task = rows[("task", FULL)]
    assert full_task["n_records"] == 3 and full_task["delta_mae"] == 0
    # video 0 failed T1 (t = 0) and its holistic task is 0: removing T1 makes it disagree
    assert rows[("task", "No T1")]["mae"] > full_task["mae"]


def test_paired_difference_between_two_rules(tmp_path: Path, cases_dir: Path) -> None:
    from judge import ModelProfile, queue_judge, run_worker, save_profile
    from judge._scripted import scripted_judge
    from tests.judge.fakeserver import FakeServer
    from tests.judge.wire import wire_responder

    project = tmp_path / "p"
    with Project.create(project) as p:
        import_cases(p, cases_dir)
        for k, v in enumerate(p.videos()):
            rate(p, "alice", v.id, ("T2", None, "P3")[k % 3])
            rate(p, "bob", v.id, ("T3", "P4", "P3")[k % 3])
    # T1 no, T2 yes, T3 yes for S1: sequential t = 0, independent count = 2
    judge = scripted_judge(answers={"T1": {"S1": "no"}})
    with FakeServer(wire_responder(judge)) as srv:
        with Project.open(project) as p:
            save_profile(p.profiles, ModelProfile(name="loop", base_url=srv.base_url,
                                                  model="m", api_key_env=""))  # fmt: skip
            queue_judge(p, [v.id for v in p.videos()], profile="loop", mode="independent")
        run_worker(project, concurrency=3, drain=True, log=lambda _r: None)
    res = CliRunner().invoke(
        cli, ["agreement", "--project", str(project), "--json", "--n-boot", "100",
              "--paired", "loop · independent · independent",
              "loop · independent · sequential"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert len(out["paired"]) == 12
    mae_task = next(d for d in out["paired"] if d["axis"] == "task" and d["metric"] == "mae")
    assert mae_task["delta"] == mae_task["estimate_a"] - mae_task["estimate_b"]
    bad = CliRunner().invoke(
        cli,
        [
            "agreement",
            "--project",
            str(project),
            "--paired",
            "nope",
            "loop · independent · sequential",
        ],
    )
    assert bad.exit_code == 2 and "no evaluator 'nope'" in bad.output
