"""The two installers: the .tar.gz unpacks anywhere and its launcher adds a desktop entry for
the user who runs it, no root; the .deb installs with dpkg -i, its self-test passes from the
installed copy, and an upgrade (re-install) keeps the user's projects and settings."""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

from tests.packaging.conftest import VERSION, clean_env

TOP = f"rollout-workbench-{VERSION}-linux-x86_64"


def _run(
    argv: list[str], env: dict[str, str], timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_the_tarball_unpacks_anywhere_and_adds_a_desktop_entry(
    tarball: Path, tmp_path: Path
) -> None:
    with tarfile.open(tarball) as tar:
        names = tar.getnames()
        assert all(n == TOP or n.startswith(TOP + "/") for n in names)  # one folder, no litter
        tar.extractall(tmp_path / "somewhere", filter="tar")
    here = tmp_path / "somewhere" / TOP
    home = tmp_path / "home"
    env = clean_env(home, Path("/usr/bin:/bin"))
    out = _run([str(here / "workbench"), "--version"], env)
    assert out.returncode == 0 and VERSION in out.stdout, out.stderr
    entry = home / ".local" / "share" / "applications" / "rollout-workbench.desktop"
    assert f"added {entry}" in out.stderr
    text = entry.read_text("utf-8")
    assert f'Exec="{here}/workbench" gui' in text and "Icon=rollout-workbench" in text
    assert (home / ".local/share/icons/hicolor/256x256/apps/rollout-workbench.png").stat().st_size
    again = _run([str(here / "workbench"), "--version"], env)
    assert again.returncode == 0 and "added" not in again.stderr  # once, not on every run
    moved = tmp_path / "elsewhere"
    shutil.move(str(here), moved)
    out = _run([str(moved / "workbench"), "--version"], env)
    assert out.returncode == 0 and f'Exec="{moved}/workbench" gui' in entry.read_text("utf-8")
    skip = _run([str(moved / "workbench"), "--version"], env | {"WB_NO_DESKTOP_ENTRY": "1"})
    assert skip.returncode == 0 and "added" not in skip.stderr


def test_the_deb_installs_and_its_self_test_passes(deb: Path, tmp_path: Path) -> None:
    assert os.geteuid() == 0, "dpkg -i needs root: run make package-test as root (CI does)"
    info = _run(
        ["dpkg-deb", "--field", str(deb), "Package", "Version", "Depends"], dict(os.environ)
    )
    assert "Package: rollout-workbench" in info.stdout and f"Version: {VERSION}" in info.stdout
    env = dict(os.environ)
    _run(["dpkg", "-r", "rollout-workbench"], env)  # a copy left by an interrupted run
    try:
        out = _run(["dpkg", "-i", str(deb)], env, timeout=600)
        assert out.returncode == 0, out.stdout + out.stderr
        assert Path("/usr/bin/workbench").resolve() == Path("/opt/rollout-workbench/workbench")
        assert Path("/usr/share/applications/rollout-workbench.desktop").exists()
        user = clean_env(tmp_path / "home", Path("/usr/bin:/bin"))
        out = _run(["/usr/bin/workbench", "self-test"], user, timeout=600)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "frozen bundle at /opt/rollout-workbench" in out.stdout
        assert "self-test passed" in out.stdout
        # projects and settings live in the user's folders: an upgrade keeps them
        project = tmp_path / "home" / "projects" / "lab"
        made = _run(["/usr/bin/workbench", "demo", "--no-sim", "--project", str(project)], user)
        assert made.returncode == 0, made.stderr
        out = _run(["dpkg", "-i", str(deb)], env, timeout=600)  # the upgrade replaces /opt/…
        assert out.returncode == 0, out.stderr
        listed = _run(["/usr/bin/workbench", "export", "--help"], user)
        assert listed.returncode == 0
        assert (project / "project.sqlite").exists()
        assert not list(Path("/opt/rollout-workbench").rglob("project.sqlite"))
    finally:
        removed = _run(["dpkg", "-r", "rollout-workbench"], env, timeout=300)
    assert removed.returncode == 0, removed.stderr
    assert not Path("/usr/bin/workbench").exists()
