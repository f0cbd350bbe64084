"""The window at 1366×768 (a common lab laptop): no workspace grows it past the screen and every
dock's key widgets stay in view. The check runs in a child pytest with its own Xvfb of exactly
that size, since the session's display is smaller and fixed for the whole run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

pytestmark = pytest.mark.gui

HERE = Path(__file__).parent
ROOT = HERE.parent.parent


def test_every_workspace_fits_1366x768(tmp_path: Path) -> None:
    shots = tmp_path / "screens"
    env = os.environ | {"SCREENSHOT_DIR": str(shots), "QT_QPA_PLATFORM": "xcb"}
    env.pop("DISPLAY", None)  # the child's pytest-xvfb starts its own 1366×768 server
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-o", "xvfb_width=1366", "-o", "xvfb_height=768", "-o", "xvfb_colordepth=24",
         "--basetemp", str(tmp_path / "child"), str(HERE / "small_screen_check.py")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert "1 passed" in proc.stdout
    pngs = sorted(shots.glob("*.png"))
    assert len(pngs) >= 4  # each workspace, then back to the first
    for png in pngs:
        img = QImage(str(png))
        assert (img.width(), img.height()) == (1366, 768), png.name
