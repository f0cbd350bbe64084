"""Choosing MuJoCo's OpenGL platform: explicit MUJOCO_GL wins, a display means GLFW, none EGL
then OSMesa; every choice is proven by rendering a frame (in child processes, as a user's
command runs: ``make test`` sets MUJOCO_GL=egl and a display, so both are removed here)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sim.gl import RenderUnavailableError, candidates
from tests.gl_env import EGL_LIBS, GL_LIBS, OSMESA_LIBS, headless, hide_libraries, python

CHOOSE = "from sim.gl import require_rendering; print(require_rendering())"


def test_the_order_of_candidates() -> None:
    assert candidates({"MUJOCO_GL": "OSMesa "}) == ("osmesa",)  # explicit wins, alone
    assert candidates({"DISPLAY": ":0", "MUJOCO_GL": "egl"}) == ("egl",)
    assert candidates({"DISPLAY": ":0"}) == ("glfw", "egl", "osmesa")
    assert candidates({}) == ("egl", "osmesa")
    assert issubclass(RenderUnavailableError, __import__("annotation").UserError)


def test_without_display_or_mujoco_gl_egl_is_chosen_before_mujoco_loads() -> None:
    code = "import sys, sim.gl; print('mujoco' in sys.modules); " + CHOOSE
    out = python(code, headless())
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "egl"]  # importing sim.gl loads no MuJoCo


def test_a_display_that_answers_is_used_with_glfw() -> None:
    display = os.environ.get("DISPLAY")
    if not display:
        pytest.skip("no X display (pytest-xvfb provides one under make test)")
    out = python(CHOOSE, headless(DISPLAY=display))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["glfw"]


def test_a_display_that_does_not_answer_falls_back_to_egl() -> None:
    out = python(CHOOSE, headless(DISPLAY=":977"))  # no X server listens there
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["egl"]


def test_gl_removed_entirely_is_one_error_naming_what_to_install(tmp_path: Path) -> None:
    env = hide_libraries(headless(), tmp_path / "libs", EGL_LIBS + GL_LIBS + OSMESA_LIBS)
    code = (
        "from sim.mujoco import WB6\n"  # MuJoCo loads first
        "from sim.gl import RenderUnavailableError, require_rendering\n"
        "try:\n    require_rendering()\nexcept RenderUnavailableError as e:\n    print(e)\n"
    )
    out = python(code, env)
    assert out.returncode == 0, out.stderr
    message = out.stdout.strip()
    assert message.startswith("MuJoCo cannot render: no OpenGL platform works here")
    assert "egl: libEGL.so.1 cannot be loaded" in message
    assert "libegl1 libgl1-mesa-dri" in message and "libosmesa6" in message
    assert "\n" not in message


def test_an_egl_library_without_a_driver_is_refused_by_the_probe(tmp_path: Path) -> None:
    # libEGL loads but finds no vendor driver (libegl-mesa0 missing): only rendering shows it
    env = hide_libraries(
        headless(__EGL_VENDOR_LIBRARY_DIRS=str(tmp_path / "none")), tmp_path / "libs", OSMESA_LIBS
    )
    out = python(CHOOSE, env)
    assert out.returncode == 1
    last = out.stderr.strip().splitlines()[-1]
    assert "RenderUnavailableError: MuJoCo cannot render: no OpenGL platform" in last
    assert "egl: ImportError: Cannot initialize a EGL device display" in last


def test_an_explicit_platform_is_not_replaced(tmp_path: Path) -> None:
    env = hide_libraries(headless(MUJOCO_GL="osmesa"), tmp_path / "libs", OSMESA_LIBS)
    out = python(CHOOSE, env)
    last = out.stderr.strip().splitlines()[-1]
    assert out.returncode == 1 and "MUJOCO_GL=osmesa opens no OpenGL context" in last
    assert "libosmesa6" in last and "or unset MUJOCO_GL" in last  # EGL works, but was not asked


def test_a_refusal_is_remembered_not_probed_again(tmp_path: Path) -> None:
    # libEGL loads but has no driver: only a probe (a child process) can tell, so a second
    # question must be answered from the first refusal, not by probing again
    env = hide_libraries(
        headless(__EGL_VENDOR_LIBRARY_DIRS=str(tmp_path / "none")), tmp_path / "libs", OSMESA_LIBS
    )
    code = (
        "import subprocess, sim.gl as gl\n"
        "for attempt in ('first', 'again'):\n"
        "    try:\n        gl.require_rendering()\n"
        "    except gl.RenderUnavailableError as e:\n        print(attempt, 'refused')\n"
        "    def no_probe(*a, **k):\n        raise AssertionError('probed again')\n"
        "    subprocess.run = no_probe\n"
    )
    out = python(code, env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["first", "refused", "again", "refused"]
