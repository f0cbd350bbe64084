"""Every command, given an empty project, a project that does not exist, unknown ids and missing
paths, answers in one line: success, or ``error: …`` naming what is wrong. Never a traceback,
never the bug line (a bug is any exception that is not a ``UserError``).

The table covers every leaf command: a new command without a row fails
``test_every_command_is_swept``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from app.cli._main import cli
from storage import Project

# {P}: an empty project, {N}: a folder that is no project, {X}: a path that does not exist.
# Commands that never touch a project take other bad input instead.
SWEEP: dict[str, list[str]] = {
    "score": ["--task", "x", "--physics", "1"],
    "agreement": ["--project", "{P}"],
    "ablation": ["--project", "{P}"],
    "video info": ["{X}"],
    "video frame": ["{X}", "3", "--out", "{X}.png"],
    "import": ["{X}", "--project", "{P}"],
    "export": ["--project", "{P}"],
    "export demos": ["--format", "lerobot", "--project", "{P}", "--out", "{X}"],
    "teleop": ["nope", "--project", "{P}"],
    "demos list": ["--project", "{P}"],
    "demos import": ["{X}", "--format", "robomimic", "--project", "{P}"],
    "demos rate": ["--project", "{P}"],
    "demo": ["--project", "{N}", "--no-sim"],
    "self-test": ["--project", "{X}"],
    "corrupt": ["{X}", "--kind", "swap", "--out", "{X}.mp4"],
    "corrupt-bench": ["--videos", "{X}"],
    "continuity scan": ["{X}"],
    "continuity status": ["--project", "{P}"],
    "continuity queue": ["--project", "{P}"],
    "worker": ["--project", "{P}", "--drain"],
    "jobs status": ["--project", "{P}", "--batch", "nope"],
    "jobs cancel": ["--project", "{P}", "999"],
    "jobs retry": ["--project", "{P}", "999"],
    "judge run": ["--project", "{P}", "--videos", "V-NOPE", "--profile", "nope"],
    "judge status": ["--project", "{P}", "--batch", "nope"],
    "judge quality": ["nope", "--project", "{P}", "--profile", "a", "--profile", "b"],
    "judge rescore": ["--project", "{P}", "--run", "999"],
    "judge profile add": ["nope", "--project", "{P}", "--base-url", "nonsense", "--model", "m"],
    "judge profile list": ["--project", "{P}"],
    "judge profile remove": ["nope", "--project", "{P}"],
    "judge profile probe": ["nope", "--project", "{P}"],
    "study create": ["s1", "--project", "{P}", "--raters-per-video", "0"],
    "study add-rater": ["", "--project", "{P}"],
    "study build-panel": ["nope", "--project", "{P}", "--per-domain", "2"],
    "study add-cases": ["nope", "c1", "--project", "{P}"],
    "study assign": ["nope", "--project", "{P}", "--rater", "r1"],
    "study calibration set": ["nope", "{X}", "--project", "{P}"],
    "study calibration report": ["nope", "r1", "--project", "{P}"],
    "study calibration complete": ["nope", "r1", "--project", "{P}"],
    "study export-assignment": ["nope", "r1", "--project", "{P}", "--out", "{X}.zip"],
    "study open-assignment": ["{X}", "--project", "{P}"],
    "study export-work": ["--project", "{P}", "--out", "{X}.zip"],
    "study import-work": ["{X}", "--project", "{P}"],
    "study status": ["nope", "--project", "{P}"],
    "sim list": [],
    "sim run": ["nope", "--project", "{P}"],
    "sim replay": ["nope", "--project", "{P}"],
    "sim fork": ["nope", "3", "--project", "{P}"],
    "sim episodes": ["--project", "{P}"],
    "sim check": ["{X}", "--ee-site", "s", "--arm-joints", "j1", "--gripper", "g"],
    "arm add": [
        "nope",
        "{X}",
        "--ee-site",
        "s",
        "--arm-joints",
        "j1",
        "--gripper",
        "g",
        "--project",
        "{P}",
    ],
    "arm list": ["--project", "{P}"],
    "arm show": ["nope@2", "--project", "{P}"],
    "arm remove": ["nope", "--project", "{P}"],
    "episode run": ["nope", "--project", "{P}"],
    "episode import": ["{X}", "--project", "{P}"],
    "episode note": ["nope", "why", "--project", "{P}"],
    "episode export": ["nope", "--rrd", "{X}.rrd", "--project", "{P}"],
    "batch run": ["{X}.json", "--project", "{P}"],
    "batch status": ["nope", "--project", "{P}"],
    "batch list": ["--project", "{P}"],
    "batch attribution": ["nope", "--project", "{P}"],
    "batch attribute": ["nope", "user", "why", "--project", "{P}"],
    "metrics": ["nope", "--project", "{P}"],
    "blind on": ["--project", "{P}", "--passphrase", "short"],
    "blind off": ["--project", "{P}", "--passphrase", "not the lead's"],
    "blind status": ["--project", "{P}"],
    "init": ["--project", "{N}"],
    "project backup": ["--project", "{P}"],
    "project backups": ["--project", "{P}"],
    "project restore": ["nope", "--project", "{P}"],
}
# Variants run on top of the table: the same command on a project path that does not exist, and
# on a folder that is not a project.
NOT_A_PROJECT = ("{N}", "{X}")
NO_PROJECT_NEEDED = {"score", "video info", "video frame", "sim list", "sim check", "demo",
                     "self-test", "corrupt", "corrupt-bench", "continuity scan"}  # fmt: skip
# ``import``/``demo`` create the project they are given; the rest must refuse a missing one.
CREATES_PROJECT = {"import", "demo", "study open-assignment", "init"}


def leaf_commands(group: click.Group = cli, prefix: str = "") -> list[str]:
    names: list[str] = []
    for name, sub in group.commands.items():
        full = f"{prefix} {name}".strip()
        if isinstance(sub, click.Group):
            if sub.invoke_without_command:  # `export` runs by itself too (annotations)
                names.append(full)
            names += leaf_commands(sub, full)
        elif full != "gui":  # opens a window; its project errors go through the GUI boundary
            names.append(full)
    return names


def test_every_command_is_swept() -> None:
    assert sorted(leaf_commands()) == sorted(SWEEP)


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("sweep")
    Project.create(root / "empty").close()
    (root / "not-a-project").mkdir()
    (root / "not-a-project" / "notes.txt").write_text("hello")
    return {
        "{P}": str(root / "empty"),
        "{N}": str(root / "not-a-project"),
        "{X}": str(root / "missing" / "thing"),
    }


def invoke(args: list[str], places: dict[str, str]) -> click.testing.Result:
    filled = []
    for a in args:
        for key, value in places.items():
            a = a.replace(key, value)
        filled.append(a)
    return CliRunner().invoke(cli, filled, catch_exceptions=True)


def assert_one_line_answer(result: click.testing.Result, args: list[str]) -> None:
    text = result.output
    assert "Traceback" not in text, f"{args}: traceback\n{text}"
    assert "this is a bug" not in text, f"{args}: reported as a bug\n{text}"
    assert result.exit_code in (0, 2), f"{args}: exit {result.exit_code}\n{text}"
    if result.exit_code == 2:
        errors = [ln for ln in text.splitlines() if ln.startswith(("error:", "Error:"))]
        assert errors, f"{args}: no error line\n{text}"
    # an exception escaping the boundary shows up here even when click swallowed its text
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{args}: {result.exception!r}"
    )


@pytest.mark.parametrize("command", sorted(SWEEP))
def test_bad_ids_on_an_empty_project(command: str, places: dict[str, str]) -> None:
    args = [*command.split(), *SWEEP[command]]
    assert_one_line_answer(invoke(args, places), args)


@pytest.mark.parametrize("where", NOT_A_PROJECT)
@pytest.mark.parametrize(
    "command", sorted(set(SWEEP) - NO_PROJECT_NEEDED - CREATES_PROJECT), ids=str
)
def test_no_project_there(command: str, where: str, places: dict[str, str]) -> None:
    args = [*command.split(), *(where if a == "{P}" else a for a in SWEEP[command])]
    result = invoke(args, places)
    assert_one_line_answer(result, args)
    assert result.exit_code == 2, f"{args}: accepted a missing project\n{result.output}"
    # refusing must not leave a project behind
    assert not Path(places["{X}"]).exists()
    assert not (Path(places["{N}"]) / "project.sqlite").exists()


@pytest.mark.setting("WB_LOG_DIR")
def test_a_bug_is_one_line_naming_its_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Any exception that is not a UserError — here a KeyError deep in a command — is a bug."""
    monkeypatch.setenv("WB_LOG_DIR", str(tmp_path / "logs"))

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("frame_index")

    monkeypatch.setattr(Project, "open", broken)
    result = CliRunner().invoke(cli, ["export", "--project", str(tmp_path)])
    assert result.exit_code == 1
    (line,) = result.output.splitlines()
    assert line.startswith("error: this is a bug in the workbench") and "KeyError" in line
    (log,) = (tmp_path / "logs").glob("bug-*.log")
    assert str(log) in line
    text = log.read_text()
    assert "Traceback" in text and "frame_index" in text and "workbench" in text


def test_an_unknown_run_is_one_line_from_a_real_process(tmp_path: Path) -> None:
    Project.create(tmp_path / "p").close()
    cmd = ["judge", "rescore", "--project", str(tmp_path / "p"), "--run", "7"]
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", *cmd],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "WB_LOG_DIR": str(tmp_path / "logs")},
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.strip().splitlines() == [out.stderr.strip()] and "7" in out.stderr
    assert not (tmp_path / "logs").exists()


def test_gui_without_a_display_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    result = CliRunner().invoke(cli, ["gui"])
    assert result.exit_code == 2 and "no display" in result.output and "xvfb-run" in result.output


def test_a_bad_setting_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WB_FRAME_CACHE_MB", "3")
    result = CliRunner().invoke(cli, ["gui"])
    assert result.exit_code == 2
    assert result.output.startswith("error: bad setting: WB_FRAME_CACHE_MB")
