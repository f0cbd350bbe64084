"""Environments for rendering tests: headless (no display, no ``MUJOCO_GL``) and without GL.

``make test`` runs pytest with ``MUJOCO_GL=egl`` (and pytest-xvfb sets ``DISPLAY``), so a test
of the workbench's own platform choice runs its subject in a child process with both removed.
"GL removed entirely" is a folder of files named like the GL libraries but that are not shared
libraries, put first on ``LD_LIBRARY_PATH``: the dynamic loader finds them before the system's
and fails, exactly as on a machine where the libraries were never installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EGL_LIBS = ("libEGL.so", "libEGL.so.1", "libGLESv2.so", "libGLESv2.so.2")
GL_LIBS = ("libGL.so", "libGL.so.1", "libOpenGL.so", "libOpenGL.so.0", "libGLX.so.0")
OSMESA_LIBS = ("libOSMesa.so", "libOSMesa.so.6", "libOSMesa.so.8")


def headless(**extra: str) -> dict[str, str]:
    drop = {"DISPLAY", "WAYLAND_DISPLAY", "MUJOCO_GL", "PYOPENGL_PLATFORM"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(extra)
    return env


def hide_libraries(env: dict[str, str], folder: Path, names: tuple[str, ...]) -> dict[str, str]:
    """``env`` in which the libraries ``names`` cannot be loaded (see the module docstring)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text("not a shared library\n")
    env = dict(env)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(folder), env.get("LD_LIBRARY_PATH")) if p
    )
    # the fake must really hide the system library, or a refusal test would pass for nothing
    check = subprocess.run(
        [sys.executable, "-c", f"import ctypes; ctypes.CDLL({names[-1]!r})"],
        env=env, capture_output=True, check=False,
    )  # fmt: skip
    assert check.returncode != 0, f"{names[-1]} still loads with {folder} first"
    return env


def python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )


def workbench(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
