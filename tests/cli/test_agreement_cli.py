"""``workbench agreement --json`` on a project with two raters and a judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from annotation import Answer, GateMode
from annotation._ablation import FULL
from app.cli._main import cli
from storage import Project, import_cases
from tests.app.rated import rate


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
        p.annotations.set_gate_mode(GateMode.RECORD_ALL)
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
    from judge import ModelProfile, queue_judge, save_profile
    from judge.models.loopback import FakeServer
    from judge.video import scripted_judge
    from judge.video.loopback import wire_responder
    from storage import run_worker

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


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_no_ratings_unknown_study_and_empty_ablation_are_one_line_errors(
    tmp_path: Path, cases_dir: Path
) -> None:
    empty = tmp_path / "empty"
    Project.create(empty).close()
    unrated = tmp_path / "unrated"
    with Project.create(unrated) as p:
        import_cases(p, cases_dir)
    cases = [
        (("agreement", "--project", str(empty)), "error: no ratings: this project has no videos"),
        (("agreement", "--project", str(unrated)), "error: no ratings: none of the 3 videos"),
        (("agreement", "--project", str(unrated), "--disagreements"), "error: no ratings"),
        (("agreement", "--project", str(unrated), "--study", "nope"), "error: no study 'nope'"),
        (("ablation", "--project", str(empty)), "error: no ratings for the ablation"),
        (("ablation", "--project", str(unrated), "--json"), "error: no ratings for the ablation"),
        (("ablation", "--project", str(unrated), "--study", "nope"), "error: no study 'nope'"),
    ]
    for args, start in cases:
        res = _run(*args)
        assert res.exit_code == 2, (args, res.output)
        assert res.output.startswith(start) and res.output.count("\n") == 1, (args, res.output)
        assert "Traceback" not in res.output


def test_plain_output_names_what_was_computed_and_why_a_row_is_empty(
    tmp_path: Path, cases_dir: Path
) -> None:
    project = tmp_path / "p"
    with Project.create(project) as p:
        import_cases(p, cases_dir)
        v = p.videos()[0]
        rate(p, "alice", v.id, "P2")  # one rater on one video: nothing to compare between raters
    res = _run("agreement", "--project", str(project), "--n-boot", "50", "--seed", "7")
    assert res.exit_code == 0, res.output
    head = res.output.splitlines()[:2]
    assert head[0] == "Agreement on 3 videos of this project (1 rated by humans) · no judge runs"
    assert head[1] == (
        "95% case-bootstrap percentile intervals from 50 resamples of 2 cases (seed 7); "
        "Human (+) recordings as rated"
    )
    icc = next(line for line in res.output.splitlines() if "icc_avg" in line and "task" in line)
    assert icc.endswith("—  n=0  (no video has two or more ratings on this axis)")


def test_disagreement_queue_from_the_cli_is_the_core_queue(tmp_path: Path, cases_dir: Path) -> None:
    from storage import disagreements, rated_panel

    project = tmp_path / "p"
    with Project.create(project) as p:
        import_cases(p, cases_dir)
        for k, v in enumerate(p.videos()):
            rate(p, "alice", v.id, ("T3", None, "P2")[k % 3])
            rate(p, "bob", v.id, ("T1", "P4", None)[k % 3])
        expected = disagreements(rated_panel(p))
    res = _run("agreement", "--project", str(project), "--disagreements", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["evaluator"] is None and out["disagreements"] == expected.to_rows()
    assert [r["video_id"] for r in out["disagreements"]] == [r.video_id for r in expected.rows]
    spreads = [r["spread"] for r in out["disagreements"]]
    assert spreads == sorted(spreads, reverse=True)
    assert spreads[0] == pytest.approx(200 / 3)  # T 66.7 (T3 no) against T 0 (T1 no)
    text = _run("agreement", "--project", str(project), "--disagreements")
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    assert lines[0].startswith("Disagreement queue: 3 videos") and "no judge" in lines[0]
    assert lines[2].split()[0] == expected.rows[0].video_id
    bad = _run("agreement", "--project", str(project), "--disagreements", "--judge", "nope")
    assert bad.exit_code == 2 and "no evaluator 'nope'" in bad.output


def test_agreement_csv_columns_match_the_rows() -> None:
    import dataclasses

    from annotation import AgreementRow
    from app.cli._agreement_cmd import AGREEMENT_COLUMNS

    names = [f.name for f in dataclasses.fields(AgreementRow)]
    assert list(AGREEMENT_COLUMNS) == [*names, "why_empty"]
