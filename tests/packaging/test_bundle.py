"""The frozen bundle on its own: its self-test and the whole demo project with networking cut
off (a network namespace with no interfaces up) and no Python on the PATH; the window under
Xvfb, screenshotted; nothing written inside the bundle."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np

from tests.packaging.conftest import DIST, clean_env


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.lstat().st_size, p.lstat().st_mtime_ns)
            for p in root.rglob("*")}  # fmt: skip


def _offline(
    argv: list[str], env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """Run in a new network namespace: only a loopback interface, and that one down."""
    unshare = shutil.which("unshare")
    assert unshare, "unshare (util-linux) is needed to cut the network off"
    return subprocess.run([unshare, "--net", "--", *argv], env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)  # fmt: skip


def test_the_namespace_really_has_no_network(tmp_path: Path) -> None:
    """The premise of the offline tests: nothing can be reached from inside, not even loopback."""
    probe = (
        "import socket\ntry:\n socket.create_connection(('127.0.0.1', 9), 2)\n"
        "except OSError as e:\n print(e.errno)"
    )
    out = _offline([shutil.which("python3") or "python3", "-c", probe], dict(os.environ), 30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "101", out.stdout  # ENETUNREACH: no interface up


def test_self_test_and_the_demo_pass_offline_with_no_python(bundle: Path, tmp_path: Path) -> None:
    empty = tmp_path / "path"
    empty.mkdir()
    assert shutil.which("python3", path=str(empty)) is None
    root = bundle.parent
    before = _tree(root)
    env = clean_env(tmp_path / "home", empty)
    out = _offline([str(bundle), "self-test", "--full", "--json"], env, timeout=900)
    records = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert out.returncode == 0, out.stdout + out.stderr
    checks = {r["check"]: r for r in records if "check" in r}
    assert records[-1] == {"passed": True, "failed": []}
    assert f"frozen bundle at {root}" in checks["install"]["detail"]
    assert str(tmp_path / "home") in checks["install"]["detail"]  # settings in the user's folders
    assert "rendered" in checks["opengl"]["detail"]
    assert re.search(r"; [1-9]\d* MuJoCo episode\(s\)", checks["demo project"]["detail"])
    (DIST / "self-test.json").write_text(out.stdout, "utf-8")  # for the note and bench/package

    # the demo command itself, into a project the next test opens
    demo = tmp_path / "demo"
    out = _offline([str(bundle), "demo", "--no-sim", "--project", str(demo)], env, timeout=600)
    assert out.returncode == 0, out.stderr
    assert (demo / "project.sqlite").exists()
    assert _tree(root) == before, "the bundle wrote into its own folder"


def test_the_window_opens_from_the_bundle(bundle: Path, tmp_path: Path) -> None:
    assert os.environ.get("DISPLAY"), "pytest-xvfb gives this test a display"
    env = clean_env(tmp_path / "home", tmp_path, DISPLAY=os.environ["DISPLAY"])
    demo = tmp_path / "demo"
    made = subprocess.run([str(bundle), "demo", "--no-sim", "--project", str(demo)], env=env,
                          capture_output=True, text=True, timeout=900, check=False)  # fmt: skip
    assert made.returncode == 0, made.stderr
    shot = DIST / "screenshots" / "frozen-demo.png"
    shot.unlink(missing_ok=True)
    argv = [str(bundle), "gui", "--project", str(demo), "--screenshot", str(shot)]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert "window shown: " in out.stderr
    import cv2

    image = cv2.imread(str(shot))
    assert image is not None and image.shape[0] > 400 and image.shape[1] > 600
    assert float(np.std(image)) > 20  # a drawn window, not a blank one


def test_the_bundle_carries_the_licences_of_what_it_ships(bundle: Path) -> None:
    licences = bundle.parent / "_internal" / "licenses"
    index = json.loads((licences / "index.json").read_text("utf-8"))
    for name in ("PySide6_Essentials", "mujoco", "av", "numpy", "opencv-python-headless"):
        assert name in index, f"no licence entry for {name}"
        assert index[name]["license"], name
    assert (licences / "PySide6_Essentials").is_dir()
    assert not list(bundle.parent.rglob("QtWebEngine*")), "an unused Qt module was bundled"


def test_the_bundle_runs_itself_as_a_python_would(bundle: Path, tmp_path: Path) -> None:
    """The two ways the workbench re-runs sys.executable: the OpenGL probe (``-c CODE``) and
    the GUI's local workers (``-m app.cli worker …``)."""
    env = clean_env(tmp_path / "home", tmp_path)
    out = subprocess.run([str(bundle), "-c", "import sys; print('probe', sys.argv)"], env=env,
                         capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert out.returncode == 0 and "probe ['-c']" in out.stdout, out.stderr
    out = subprocess.run([str(bundle), "-m", "app.cli", "worker", "--help"], env=env,
                         capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert out.returncode == 0 and "--project" in out.stdout, out.stderr
