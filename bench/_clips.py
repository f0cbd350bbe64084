"""Benchmark clips, generated with the ffmpeg command line and cached under bench/out/.

The recipe matches bench/gui.py (854x480, 30 fps, H.264, 250-frame GOP, 3 B-frames, testsrc2
with temporal noise so every frame differs), so figures from different benches compare.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
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


def _encoded(name: str, source_seconds: int, pre_filter: str) -> Path:
    """OUT/name: `source_seconds` of the test pattern, `pre_filter` applied before the noise."""
    OUT.mkdir(exist_ok=True)
    clip = OUT / name
    if clip.exists():
        return clip
    # Encode in a temporary folder and move into place, so an interrupted run leaves no
    # half-written clip that a later run would take as cached.
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        part = Path(tmp) / clip.name
        subprocess.run(
            ["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi",
             "-i", f"testsrc2=s={WIDTH}x{HEIGHT}:r={FPS}:d={source_seconds}",
             "-vf", f"{pre_filter}noise=alls=12:allf=t",
             "-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", str(GOP), "-keyint_min", str(GOP),
             "-sc_threshold", "0", "-bf", str(BFRAMES), str(part)],
            check=True,
        )  # fmt: skip
        os.replace(part, clip)
    return clip
