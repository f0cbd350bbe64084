"""Benchmark clips, cached under bench/out/, all 854x480, 30 fps, H.264, 250-frame GOP,
3 B-frames:

- ``make_clip``/``make_cut``: testsrc2 under temporal noise (ffmpeg command line), so every
  frame differs; decode cost is what bench/gui and bench/judge measure;
- ``scene_clip``: a handheld camera over a textured scene (bench/_scene.py, PyAV), which
  compresses like real footage; what bench/video sizes the seek cache on.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"

WIDTH, HEIGHT, FPS, GOP, BFRAMES = 854, 480, 30, 250, 3


def make_clip(seconds: int) -> Path:
    """The cached benchmark clip of `seconds` seconds, encoding it first if needed."""
    return _encoded(f"video_{seconds}s_{WIDTH}x{HEIGHT}_gop{GOP}.mp4", seconds, "")


def make_cut(start: int, seconds: int) -> Path:
    """A clip of the recipe showing the test pattern from `start` s on, cached like make_clip."""
    name = f"judge_{start}s+{seconds}s_{WIDTH}x{HEIGHT}_gop{GOP}.mp4"
    return _encoded(name, start + seconds, f"trim=start={start},setpts=PTS-STARTPTS,")


def scene_clip(seconds: int) -> Path:
    """The handheld-scene clip of `seconds` seconds (bench/_scene.py)."""
    from _scene import write_scene

    def write(part: Path) -> None:
        write_scene(part, seconds, width=WIDTH, height=HEIGHT, fps=FPS, gop=GOP, bframes=BFRAMES)

    return _cached(f"scene_{seconds}s_{WIDTH}x{HEIGHT}_gop{GOP}.mp4", write)


def _cached(name: str, write: Callable[[Path], None]) -> Path:
    """OUT/name, written by `write` the first time. It writes in a temporary folder and the file
    is moved into place, so an interrupted run leaves no half clip a later run takes as cached."""
    OUT.mkdir(exist_ok=True)
    clip = OUT / name
    if clip.exists():
        return clip
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        part = Path(tmp) / clip.name
        write(part)
        os.replace(part, clip)
    return clip


def _encoded(name: str, source_seconds: int, pre_filter: str) -> Path:
    """OUT/name: `source_seconds` of the test pattern, `pre_filter` applied before the noise."""

    def write(part: Path) -> None:
        subprocess.run(
            ["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi",
             "-i", f"testsrc2=s={WIDTH}x{HEIGHT}:r={FPS}:d={source_seconds}",
             "-vf", f"{pre_filter}noise=alls=12:allf=t",
             "-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", str(GOP), "-keyint_min", str(GOP),
             "-sc_threshold", "0", "-bf", str(BFRAMES), str(part)],
            check=True,
        )  # fmt: skip

    return _cached(name, write)
