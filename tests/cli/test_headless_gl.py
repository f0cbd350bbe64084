"""Commands that render, on a machine without a display: ``workbench demo`` and ``sim run
--video`` choose EGL themselves; with GL removed entirely they refuse in one line, naming what to
install, before writing anything. (``make test`` sets MUJOCO_GL=egl and a display: both are
removed from the child's environment here.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from storage import Project
from tests.gl_env import EGL_LIBS, GL_LIBS, OSMESA_LIBS, headless, hide_libraries, workbench

# The real `workbench demo` command with one short MuJoCo case instead of the demo's seven
# episodes (a minute of rendering); everything else — the GL choice, the synthetic cases, the
# import — runs as shipped.
DEMO_WITH_ONE_SIM_CASE = """
import sys
from sim.episode import _demo
_demo.SIM_CASES = (_demo.SimCase("sim_stack_two", "stack-two", "household_org_storage", (
    _demo.Variant("wb-scripted-arm", 1),)),)
from app.cli._main import cli
cli(["demo", "--project", sys.argv[1]])
"""


@pytest.fixture
def no_gl(tmp_path: Path) -> dict[str, str]:
    return hide_libraries(headless(), tmp_path / "no-gl", EGL_LIBS + GL_LIBS + OSMESA_LIBS)


def assert_refused(out: subprocess.CompletedProcess[str]) -> None:
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("error: MuJoCo cannot render: no OpenGL platform works here")
    assert "apt-get install libegl1 libgl1-mesa-dri" in lines[0] and "libosmesa6" in lines[0]


def test_demo_without_display_or_mujoco_gl_completes(tmp_path: Path) -> None:
    project = tmp_path / "demo"
    out = subprocess.run(
        [sys.executable, "-c", DEMO_WITH_ONE_SIM_CASE, str(project)],
        env=headless(), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    with Project.open(project) as p:
        (episode,) = p.episodes.list()
        assert p.episodes.metrics(episode.id)["success"] == 1.0
        (video,) = p.videos("sim_stack_two")
        assert p.video_index(video).frame_count == episode.ticks + 1


def test_sim_run_with_video_without_display_or_mujoco_gl(tmp_path: Path) -> None:
    out = workbench(
        "sim", "run", "stack-two", "--project", str(tmp_path / "p"), "--video", "head", "--json",
        env=headless(),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["videos"]["head"]


def test_gl_removed_demo_refuses_and_leaves_no_project(
    tmp_path: Path, no_gl: dict[str, str]
) -> None:
    out = workbench("demo", "--project", str(tmp_path / "demo"), env=no_gl)
    assert_refused(out)
    assert not (tmp_path / "demo").exists()


def test_gl_removed_sim_run_video_refuses_but_physics_runs(
    tmp_path: Path, no_gl: dict[str, str]
) -> None:
    project = tmp_path / "p"
    out = workbench("sim", "run", "stack-two", "--project", str(project), "--video", "head",
                    env=no_gl)  # fmt: skip
    assert_refused(out)
    assert not project.exists()
    out = workbench("sim", "run", "stack-two", "--project", str(project), "--json", env=no_gl)
    assert out.returncode == 0, out.stderr  # MuJoCo itself needs no GL
    assert json.loads(out.stdout)["success"] is True


@pytest.mark.slow
def test_gl_removed_demo_without_sim_needs_no_gl(tmp_path: Path, no_gl: dict[str, str]) -> None:
    out = workbench("demo", "--no-sim", "--project", str(tmp_path / "demo"), env=no_gl)
    assert out.returncode == 0, out.stderr
    assert "case(s) added" in out.stdout
