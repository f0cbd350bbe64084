"""Build the offline installers: ``make package`` runs this.

1. the licences of everything shipped, into ``packaging/build/licenses`` (bundled);
2. PyInstaller's one-folder bundle, ``dist/rollout-workbench/`` (packaging/workbench.spec);
3. ``dist/rollout-workbench-VERSION-linux-x86_64.tar.gz``: the bundle under a versioned folder
   with a ``workbench`` launcher that adds a desktop entry for the user who runs it (no root);
4. ``dist/rollout-workbench_VERSION_amd64.deb``: the bundle under ``/opt/rollout-workbench``,
   ``/usr/bin/workbench``, a desktop entry and the icon (``dpkg-deb``).

    python packaging/build.py [--bundle-only] [--dist DIR]

Steps 3–4 are Linux-only; on Windows and macOS run PyInstaller on the spec (see its header).
Each step's time and size is printed as one JSON line per step (bench/package reads them).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "packaging"))
from bundle_contents import write_licences  # noqa: E402

NAME = "rollout-workbench"
ICON = ROOT / "resources" / "icons" / "workbench.png"
TITLE = "Rollout Workbench"
SUMMARY = "Judge and debug embodied AI rollouts, offline"
# what the bundle does not carry: the C library, X11/xcb client libraries Qt's platform plugin
# links against, and the machine's own OpenGL (Mesa or a vendor driver; the workbench picks EGL,
# GLX or OSMesa, whichever renders)
DEB_DEPENDS = (
    "libc6 (>= 2.31), libgl1, libegl1, libfontconfig1, libdbus-1-3, libxkbcommon-x11-0, "
    "libxcb-cursor0, libxcb-icccm4, libxcb-keysyms1, libxcb-shape0, libxcb-xinerama0, "
    "libxcb-randr0, libxcb-render-util0, libxcb-image0, libxcb-xkb1"
)
DEB_RECOMMENDS = "libgl1-mesa-dri, libosmesa6"

LAUNCHER = """#!/bin/sh
# Rollout Workbench launcher: runs the bundle next to this script. The first time (and whenever
# the folder has moved) it adds a desktop entry for you, under your own
# ~/.local/share: no root needed. Set WB_NO_DESKTOP_ENTRY=1 to skip that.
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "$WB_NO_DESKTOP_ENTRY" ]; then
  data=${XDG_DATA_HOME:-$HOME/.local/share}
  entry="$data/applications/rollout-workbench.desktop"
  if ! grep -qs "^Exec=\\"$here/workbench\\" gui" "$entry"; then
    mkdir -p "$data/applications" "$data/icons/hicolor/256x256/apps"
    cp "$here/share/rollout-workbench.png" "$data/icons/hicolor/256x256/apps/rollout-workbench.png"
    sed "s|@EXEC@|\\"$here/workbench\\" gui|; s|@ICON@|rollout-workbench|" \\
      "$here/share/rollout-workbench.desktop.in" > "$entry"
    echo "Rollout Workbench: added $entry" >&2
  fi
fi
exec "$here/bin/workbench" "$@"
"""

DESKTOP = """[Desktop Entry]
Type=Application
Name={title}
Comment={summary}
Exec=@EXEC@
Icon=@ICON@
Terminal=false
Categories=Science;Education;Development;
StartupWMClass=workbench
"""


def version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["version"])


def size_mb(path: Path) -> float:
    if path.is_file():
        return round(path.stat().st_size / 2**20, 1)
    total = sum(f.lstat().st_size for f in path.rglob("*") if f.is_file() or f.is_symlink())
    return round(total / 2**20, 1)


@contextmanager
def step(name: str, out: Path | None = None) -> Iterator[None]:
    start = time.perf_counter()
    yield
    record: dict[str, object] = {"step": name, "seconds": round(time.perf_counter() - start, 1)}
    if out is not None:
        record |= {"path": str(out), "size_mb": size_mb(out)}
    print(json.dumps(record), flush=True)


def bundle(dist: Path, work: Path) -> Path:
    licences = ROOT / "packaging" / "build" / "licenses"
    shutil.rmtree(licences, ignore_errors=True)
    write_licences(licences)
    out = dist / NAME
    with step("bundle", out):
        spec = ROOT / "packaging" / "workbench.spec"
        subprocess.run(
            [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
             "--distpath", str(dist), "--workpath", str(work), str(spec)],
            check=True, cwd=ROOT,
        )  # fmt: skip
        strip_interpreter(out)
    return out


def strip_interpreter(bundle_dir: Path) -> None:
    """Strip the Python interpreter's own libraries (libpython, lib-dynload): built here with
    symbols, unlike the wheels' libraries, which are stripped already and which ``strip`` can
    break (numpy's OpenBLAS then fails to load: "ELF load command … not page-aligned")."""
    tool = shutil.which("strip")
    if tool is None or not sys.platform.startswith("linux"):
        return
    internal = bundle_dir / "_internal"
    targets = [*internal.glob("libpython3*.so*"), *internal.glob("python3*/lib-dynload/*.so")]
    for path in targets:
        if path.is_file() and not path.is_symlink():
            subprocess.run([tool, "--strip-unneeded", str(path)], check=True)


def tarball(bundle_dir: Path, dist: Path) -> Path:
    top = f"{NAME}-{version()}-linux-x86_64"
    out = dist / f"{top}.tar.gz"
    stage = dist / "stage-tar" / top
    shutil.rmtree(stage.parent, ignore_errors=True)
    with step("tar.gz", out):
        shutil.copytree(bundle_dir, stage / "bin", symlinks=True)
        (stage / "share").mkdir()
        shutil.copy(ICON, stage / "share" / "rollout-workbench.png")
        desktop = DESKTOP.format(title=TITLE, summary=SUMMARY)
        (stage / "share" / "rollout-workbench.desktop.in").write_text(desktop, "utf-8")
        launcher = stage / "workbench"
        launcher.write_text(LAUNCHER, "utf-8")
        launcher.chmod(0o755)
        with tarfile.open(out, "w:gz", compresslevel=6) as tar:
            tar.add(stage, arcname=top)
    shutil.rmtree(stage.parent)
    return out


def deb(bundle_dir: Path, dist: Path) -> Path:
    v = version()
    out = dist / f"{NAME}_{v}_amd64.deb"
    stage = dist / "stage-deb"
    shutil.rmtree(stage, ignore_errors=True)
    with step("deb", out):
        opt = stage / "opt" / NAME
        shutil.copytree(bundle_dir, opt, symlinks=True)
        (stage / "usr" / "bin").mkdir(parents=True)
        (stage / "usr" / "bin" / "workbench").symlink_to(f"/opt/{NAME}/workbench")
        apps = stage / "usr" / "share" / "applications"
        apps.mkdir(parents=True)
        desktop = DESKTOP.format(title=TITLE, summary=SUMMARY)
        desktop = desktop.replace("@EXEC@", "/usr/bin/workbench gui").replace("@ICON@", NAME)
        (apps / f"{NAME}.desktop").write_text(desktop, "utf-8")
        icons = stage / "usr" / "share" / "icons" / "hicolor" / "256x256" / "apps"
        icons.mkdir(parents=True)
        shutil.copy(ICON, icons / f"{NAME}.png")
        doc = stage / "usr" / "share" / "doc" / NAME
        doc.mkdir(parents=True)
        shutil.copytree(bundle_dir / "_internal" / "licenses", doc / "licenses")
        control = stage / "DEBIAN" / "control"
        control.parent.mkdir()
        installed_kb = sum(f.lstat().st_size for f in stage.rglob("*") if f.is_file()) // 1024
        control.write_text(
            f"Package: {NAME}\nVersion: {v}\nArchitecture: amd64\nSection: science\n"
            f"Priority: optional\nMaintainer: Rollout Workbench team <workbench@localhost>\n"
            f"Installed-Size: {installed_kb}\nDepends: {DEB_DEPENDS}\n"
            f"Recommends: {DEB_RECOMMENDS}\nDescription: {SUMMARY}\n"
            " A desktop workbench to score generated manipulation videos with a gated rubric,\n"
            " judge them with a VLM, and debug MuJoCo episodes; everything runs offline.\n",
            "utf-8",
        )
        # gzip at 6, as the .tar.gz: every dpkg reads it, and 9 (dpkg-deb's default) takes
        # twice as long for 1 % less
        subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "-z6", "--build", str(stage),
                        str(out)], check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    shutil.rmtree(stage)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dist", type=Path, default=ROOT / "dist", help="where the outputs go")
    ap.add_argument("--bundle-only", action="store_true", help="stop after the bundle")
    args = ap.parse_args()
    dist = args.dist.resolve()
    dist.mkdir(parents=True, exist_ok=True)
    bundle_dir = bundle(dist, ROOT / "build" / "pyinstaller")
    if args.bundle_only or not sys.platform.startswith("linux"):
        return
    tarball(bundle_dir, dist)
    if shutil.which("dpkg-deb"):
        deb(bundle_dir, dist)
    else:
        print("dpkg-deb not found: no .deb built", file=sys.stderr)
    os.sync()


if __name__ == "__main__":
    main()
