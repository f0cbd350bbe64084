"""The ``workbench`` command line, run as a user would (a subprocess), plus in-process checks."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli._main import cli
from storage import Project


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, check=False
    )


def test_score_json_matches_spec_example() -> None:
    out = run("score", "--task", "0,3,3", "--physics", "-,4,4", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data == pytest.approx(
        {"T100": 66.6666667, "P100": 100.0, "S": 81.6496581, "coverage": 2 / 3}
    )


def test_score_undefined_and_unresolved() -> None:
    res = CliRunner().invoke(cli, ["score", "--task", "3,3", "--physics", "NA,NA", "--json"])
    assert json.loads(res.output) == {"T100": 100.0, "P100": None, "S": None, "coverage": 0.0}
    res = CliRunner().invoke(cli, ["score", "--task", "2,?", "--physics", "4,4"])
    assert "T100 undefined" in res.output and "S undefined" in res.output


def test_score_bad_level_is_a_usage_error() -> None:
    res = CliRunner().invoke(cli, ["score", "--task", "0,9", "--physics", "-,4"])
    assert res.exit_code == 2 and "task level must be 0..3" in res.output


def test_import_export_roundtrip(tmp_path: Path, cases_dir: Path) -> None:
    project = tmp_path / "p"
    out = run("import", str(cases_dir), "--project", str(project))
    assert out.returncode == 0, out.stderr
    assert "2 case(s) added" in out.stdout
    again = run("import", str(cases_dir), "--project", str(project))
    assert "0 case(s) added, 2 unchanged" in again.stdout
    with Project.open(project) as p:
        v = p.videos("stack_blocks")[0]
        sg = p.annotations.add_subgoal("stack_blocks", "r1", source="red block", action="lift")
        from annotation import Answer

        p.annotations.set_answer(v.id, "r1", sg.id, "T1", Answer.FAIL)
    res = run("export", "--project", str(project), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert rows[0]["T1"] == "fail" and rows[0]["physics_state"] == "unattempted"
    assert float(rows[0]["video_S"]) == 0.0
    res = run(
        "export", "--project", str(project), "--format", "json", "--out", str(tmp_path / "e.json")
    )
    assert res.returncode == 0 and json.loads((tmp_path / "e.json").read_text())["ratings"]


def test_user_errors_have_no_traceback(tmp_path: Path) -> None:
    (tmp_path / "junk.mp4").write_text("hello")
    out = run("video", "info", str(tmp_path / "junk.mp4"))
    assert out.returncode == 2 and "junk.mp4" in out.stderr and "Traceback" not in out.stderr
    out = run("import", str(tmp_path), "--project", str(tmp_path / "p"))
    assert out.returncode == 2 and "no case.json" in out.stderr and "Traceback" not in out.stderr
    out = run("export", "--project", str(tmp_path / "nothing"))
    assert out.returncode == 2 and "not a workbench project" in out.stderr


def test_video_info_and_frame(tmp_path: Path, cases_dir: Path) -> None:
    clip = cases_dir / "stack_blocks" / "videos" / "gen_0.mp4"
    info = json.loads(run("video", "info", str(clip), "--json").stdout)
    assert info["frame_count"] == 12 and len(info["frame_times_s"]) == 12
    assert info["frame_times_s"][0] == 0.0 and info["keyframes"][0] == 0
    out = run("video", "frame", str(clip), "5", "--out", str(tmp_path / "f.png"))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"
    bad = run("video", "frame", str(clip), "12", "--out", str(tmp_path / "g.png"))
    assert bad.returncode == 2 and "0..11" in bad.stderr


def test_help_is_fast_and_lists_commands() -> None:
    out = run("--help")
    for command in ("import", "export", "demo", "score", "video", "gui"):
        assert command in out.stdout
    # heavy libraries stay unimported for --help
    probe = subprocess.run(
        [sys.executable, "-c",
         "import sys; from app.cli import main; sys.argv=['workbench','--help']\n"
         "try: main()\nexcept SystemExit: pass\n"
         "print(sorted(m for m in ('av','cv2','PySide6','mujoco','openai') if m in sys.modules))"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert probe.stdout.strip().splitlines()[-1] == "[]"
