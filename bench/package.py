"""bench/package: the offline installers' size, the frozen window's start time, the build time.

- **size**: the one-folder bundle (goal ≤ 300 MB), the .tar.gz and the .deb, and the bundle's
  largest parts (what a smaller bundle would have to drop);
- **start to window**: from starting the frozen ``workbench gui --project DEMO`` to its main
  window shown with the demo project open (the line ``window shown`` it prints then), under
  Xvfb; the first run after the page cache is dropped (``cold``, when run as root) and the
  runs after it (``warm``) (goal ≤ 3 s cold);
- **build**: seconds per step of ``packaging/build.py`` (bundle, tar.gz, deb), unless
  ``--no-build`` reuses ``dist/``.

    python bench/package.py [--no-build] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "dist"


def mb(path: Path) -> float:
    if path.is_file():
        return round(path.stat().st_size / 2**20, 1)
    return round(sum(f.lstat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 1)


def build() -> list[dict[str, Any]]:
    out = subprocess.run([sys.executable, str(ROOT / "packaging" / "build.py")], check=True,
                         capture_output=True, text=True).stdout  # fmt: skip
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def sizes() -> dict[str, Any]:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["version"]
    bundle = DIST / "rollout-workbench"
    internal = bundle / "_internal"
    parts = sorted(((mb(p), p.name) for p in internal.iterdir() if not p.is_symlink()),
                   reverse=True)[:10]  # fmt: skip
    return {
        "bundle_mb": mb(bundle),
        "tar_gz_mb": mb(DIST / f"rollout-workbench-{version}-linux-x86_64.tar.gz"),
        "deb_mb": mb(DIST / f"rollout-workbench_{version}_amd64.deb"),
        "largest_parts_mb": {name: size for size, name in parts},
        "goal_bundle_mb": 300,
    }


def _drop_caches() -> bool:
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def start_to_window(runs: int) -> dict[str, Any]:
    exe = DIST / "rollout-workbench" / "workbench"
    display = os.environ.get("DISPLAY")
    xvfb = None
    if not display:
        display = ":87"
        argv = ["Xvfb", display, "-screen", "0", "1600x1000x24", "-nolisten", "tcp"]
        xvfb = subprocess.Popen(argv, stderr=subprocess.DEVNULL)
        time.sleep(1.0)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            env = {"HOME": tmp, "PATH": "/usr/bin:/bin", "DISPLAY": display,
                   "LANG": "C.UTF-8", "XDG_CONFIG_HOME": f"{tmp}/config",
                   "XDG_STATE_HOME": f"{tmp}/state"}  # fmt: skip
            demo = Path(tmp) / "demo"
            subprocess.run([str(exe), "demo", "--no-sim", "--project", str(demo)], env=env,
                           check=True, capture_output=True)  # fmt: skip
            times, cold = [], None
            for k in range(runs + 1):
                dropped = k == 0 and _drop_caches()
                start = time.perf_counter()
                proc = subprocess.Popen(
                    [str(exe), "gui", "--project", str(demo), "--screenshot", f"{tmp}/s.png"],
                    env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                )  # fmt: skip
                assert proc.stderr is not None
                for line in proc.stderr:
                    if line.startswith("window shown"):
                        seconds = time.perf_counter() - start
                        break
                else:
                    raise RuntimeError("the window never showed")
                proc.wait(60)
                if k == 0:
                    cold = {"seconds": round(seconds, 2), "page_cache_dropped": dropped}
                else:
                    times.append(seconds)
    finally:
        if xvfb is not None:
            xvfb.terminate()
    warm = np.array(times)
    return {"cold": cold, "warm_p50_s": round(float(np.median(warm)), 2),
            "warm_max_s": round(float(warm.max()), 2), "runs": runs, "goal_s": 3.0}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-build", action="store_true", help="measure the existing dist/")
    ap.add_argument("--runs", type=int, default=5, help="warm starts after the cold one")
    ap.add_argument("--quick", action="store_true", help="two warm runs; reuse dist/ if built")
    args = ap.parse_args()
    if args.quick:
        args.runs = 2
        args.no_build = args.no_build or (DIST / "rollout-workbench").is_dir()
    out: dict[str, Any] = {"bench": "package"}
    if not args.no_build:
        out["build_steps"] = build()
    elif not (DIST / "rollout-workbench").is_dir():
        sys.exit("no dist/rollout-workbench: run without --no-build (or make package) first")
    out["size"] = sizes()
    if shutil.which("Xvfb") or os.environ.get("DISPLAY"):
        out["start_to_window"] = start_to_window(args.runs)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
