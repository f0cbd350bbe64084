"""``workbench study …``: a small study end to end on the command line, and its user errors."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from app.cli._main import cli
from app.cli._study_cmds import study
from storage import Project, import_cases
from tests.storage import test_studies
from tests.storage.test_studies import CALIBRATION_CASE, DOMAINS, annotate

study_cases = test_studies.study_cases  # the shared session fixture


@pytest.fixture
def wb() -> click.Group:
    """The real entry point with the study group (added here until _main registers it)."""
    if "study" not in cli.commands:
        cli.add_command(study)
    return cli


def run(wb: click.Group, *args: str | Path) -> Result:
    return CliRunner().invoke(wb, [str(a) for a in args])


def ok(wb: click.Group, *args: str | Path) -> str:
    res = run(wb, *args)
    assert res.exit_code == 0, res.output
    return res.output


def test_study_round_trip_on_the_command_line(
    wb: click.Group, tmp_path: Path, study_cases: Path
) -> None:
    lead = tmp_path / "lead"
    with Project.create(lead) as p:
        import_cases(p, study_cases)
        calib = p.videos(CALIBRATION_CASE)[0].id
    refs = tmp_path / "refs.json"
    refs.write_text(json.dumps({calib: {"task": [3], "physics": [4], "notes": "clean"}}))
    lp = ("--project", lead)
    ok(wb, "study", "create", "pilot", *lp, "--raters-per-video", "1")
    ok(wb, "study", "add-rater", "ann", "--name", "Ann", *lp)
    out = ok(wb, "study", "build-panel", "pilot", *lp, "--per-domain", "1", "--seed", "1",
             "--domain", DOMAINS[0], "--domain", DOMAINS[1])  # fmt: skip
    assert "2 case(s)" in out and "8 video(s) added" in out
    ok(wb, "study", "calibration", "set", "pilot", refs, *lp)
    assert "ann: 8 video(s)" in ok(
        wb, "study", "assign", "pilot", *lp, "--rater", "ann", "--seed", "3"
    )
    out = ok(wb, "study", "export-assignment", "pilot", "ann", *lp, "--out", tmp_path / "a1.wbz")
    assert "calibration videos only" in out
    rater = tmp_path / "rater"
    ok(wb, "study", "open-assignment", tmp_path / "a1.wbz", "--project", rater)
    with Project.open(rater) as rp:
        annotate(rp, "ann", calib, [3], [4])
    ok(wb, "study", "export-work", "--project", rater, "--out", tmp_path / "w1.wbz")
    assert "8 added" in ok(wb, "study", "import-work", tmp_path / "w1.wbz", *lp)
    assert "PASSED" in ok(wb, "study", "calibration", "report", "pilot", "ann", *lp)
    report = json.loads(ok(wb, "study", "calibration", "report", "pilot", "ann", *lp, "--json"))
    assert report["passed"] and report["items"][0]["video_id"] == calib
    assert "production work unlocked" in ok(
        wb, "study", "calibration", "complete", "pilot", "ann", *lp
    )
    out = ok(wb, "study", "export-assignment", "pilot", "ann", *lp, "--out", tmp_path / "a2.wbz")
    assert "calibration and production" in out
    assert "8 video(s) added" in ok(
        wb, "study", "open-assignment", tmp_path / "a2.wbz", "--project", rater
    )
    ok(wb, "study", "export-work", "--project", rater, "--out", tmp_path / "w2.wbz")
    assert "unchanged" in ok(wb, "study", "import-work", tmp_path / "w2.wbz", *lp)
    assert "already imported" in ok(wb, "study", "import-work", tmp_path / "w2.wbz", *lp)
    status = json.loads(ok(wb, "study", "status", "pilot", *lp, "--json"))
    assert status["panel_videos"] == 8 and status["calibration_videos"] == 1
    assert status["raters"]["ann"]["calibration"] == "passed"
    assert "ann: 0 assigned, 8 exported, 1 returned" in ok(wb, "study", "status", "pilot", *lp)

    # user errors: one line, exit status 2, naming the file or the thing
    broken = tmp_path / "broken.wbz"
    broken.write_bytes((tmp_path / "w2.wbz").read_bytes()[:100])
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{nope")
    for args, message in (
        (("study", "import-work", broken, *lp), f"{broken}: bundle is truncated or damaged"),
        (("study", "create", "pilot", *lp), "study 'pilot' already exists"),
        (("study", "calibration", "set", "pilot", bad_json, *lp), f"{bad_json}: not valid JSON"),
        (("study", "assign", "pilot", *lp, "--rater", "ann", "--seed", "1"), "already has"),
        (("study", "status", "nope", *lp), "no study 'nope'"),
        (("study", "export-work", *lp, "--out", tmp_path / "x.wbz"), "not a rater project"),
        (("study", "status", "pilot", "--project", tmp_path / "void"), "not a workbench project"),
    ):  # fmt: skip
        res = run(wb, *args)
        assert res.exit_code == 2, (args, res.output)
        assert message in res.output and "Traceback" not in res.output
