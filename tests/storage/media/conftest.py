"""Test clips made with the ffmpeg command line, and ffmpeg's own decode of them as reference.

The ffmpeg CLI (Debian's build, not the FFmpeg inside PyAV) is the independent reference: it
writes the clips and decodes them for comparison. Clips are tiny and made once per session.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

if shutil.which("ffmpeg") is None or shutil.which("ffprobe") is None:
    pytest.skip("the ffmpeg command line is needed as reference", allow_module_level=True)

# testsrc2 changes every frame (moving shapes, a running clock), so neighbours always differ.
SOURCE = "testsrc2=size=176x144:rate=30"
H264_BFRAMES = ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-bf", "3", "-g", "30"]


def ffmpeg(*args: str | Path) -> None:
    subprocess.run(["ffmpeg", "-v", "error", "-y", *map(str, args)], check=True)


def ffprobe_json(path: Path, *args: str) -> dict[str, object]:
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-of", "json", *args, str(path)],
        check=True,
        capture_output=True,
    ).stdout
    result: dict[str, object] = json.loads(out)
    return result


@dataclass(frozen=True)
class Reference:
    """How the ffmpeg CLI decodes a clip: every frame, in presentation order."""

    native: list[bytes]  # each frame's planes in its own pixel format, packed, no padding
    rgb: np.ndarray  # N x H x W x 3, converted by the CLI's swscale
    pix_fmt: str


def decode_with_ffmpeg(path: Path, pix_fmt: str, *, autorotate: bool = False) -> bytes:
    """All frames as raw video; one output frame per decoded frame, no rotation by default."""
    rotate = [] if autorotate else ["-autorotate", "0"]
    return subprocess.run(
        ["ffmpeg", "-v", "error", *rotate, "-i", str(path),
         "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", pix_fmt, "-"],
        check=True,
        capture_output=True,
    ).stdout  # fmt: skip


def stream_info(path: Path) -> dict[str, object]:
    info = ffprobe_json(path, "-select_streams", "v:0", "-show_streams")
    streams = info["streams"]
    assert isinstance(streams, list)
    stream: dict[str, object] = streams[0]
    return stream


_references: dict[tuple[Path, bool], Reference] = {}


def reference(path: Path, *, autorotate: bool = False) -> Reference:
    """ffmpeg's decode of `path`, cached for the session."""
    key = (path, autorotate)
    if key not in _references:
        stream = stream_info(path)
        width, height = int(str(stream["width"])), int(str(stream["height"]))
        if autorotate and _rotation(stream) in (90, 270):
            width, height = height, width
        pix_fmt = str(stream["pix_fmt"])
        rgb = np.frombuffer(decode_with_ffmpeg(path, "rgb24", autorotate=autorotate), np.uint8)
        rgb = rgb.reshape(-1, height, width, 3)
        native_all = decode_with_ffmpeg(path, pix_fmt)
        size = len(native_all) // len(rgb)
        native = [native_all[k * size : (k + 1) * size] for k in range(len(rgb))]
        _references[key] = Reference(native=native, rgb=rgb, pix_fmt=pix_fmt)
    return _references[key]


def _rotation(stream: dict[str, object]) -> int:
    for side in stream.get("side_data_list", []) or []:  # type: ignore[union-attr]
        if isinstance(side, dict) and "rotation" in side:
            return int(side["rotation"]) % 360
    return 0


def packed_planes(frame: object) -> bytes:
    """A PyAV VideoFrame's planes without line padding, laid out like ffmpeg's rawvideo."""
    out = []
    for plane in frame.planes:  # type: ignore[attr-defined]
        rows = np.frombuffer(plane, np.uint8).reshape(-1, plane.line_size)
        out.append(rows[: plane.height, : plane.width].tobytes())
    return b"".join(out)


@functools.cache
def ffprobe_frames(path: Path) -> tuple[int, list[int]]:
    """ffprobe's packet count, and the pts of every frame it decodes in output order (cached)."""
    info = ffprobe_json(
        path, "-select_streams", "v:0", "-count_packets",
        "-show_entries", "stream=nb_read_packets:frame=pts,best_effort_timestamp",
    )  # fmt: skip
    streams, frames = info["streams"], info["frames"]
    assert isinstance(streams, list) and isinstance(frames, list)
    pts = [int(f.get("pts", f.get("best_effort_timestamp"))) for f in frames]
    return int(streams[0]["nb_read_packets"]), pts


def closest_frame(image: np.ndarray, frames: np.ndarray, n: int, reach: int = 2) -> int:
    """Which of frames n-reach..n+reach `image` is closest to (mean absolute difference)."""
    lo, hi = max(0, n - reach), min(len(frames), n + reach + 1)
    diffs = [np.abs(image.astype(np.int16) - frames[k]).mean() for k in range(lo, hi)]
    return lo + int(np.argmin(diffs))


# --- clips -------------------------------------------------------------------------------------

# name: (file name, ffmpeg arguments before the output file, what the clip is for).
RECIPES: dict[str, tuple[str, list[str], str]] = {
    "h264_bframes": (
        "bframes.mp4",
        ["-f", "lavfi", "-i", f"{SOURCE}:duration=2.5", *H264_BFRAMES],
        "H.264, 3 B-frames, GOP 30, 75 frames, moov at the end (ffmpeg's default)",
    ),
    "h264_faststart": (
        "faststart.mp4",
        ["-f", "lavfi", "-i", f"{SOURCE}:duration=2.5", *H264_BFRAMES, "-movflags", "+faststart"],
        "the same with the frame table (moov) at the start of the file",
    ),
    "vfr": (
        "vfr.mp4",
        ["-f", "lavfi", "-i", f"{SOURCE}:duration=2", "-vf", "setpts='(1.7*N+0.6*sin(N))/30/TB'",
         *H264_BFRAMES, "-fps_mode", "vfr"],
        "variable frame rate: spacing wobbles between 1.1 and 2.3 ticks of 1/30 s",
    ),
    "open_gop": (
        "open_gop.mp4",
        ["-f", "lavfi", "-i", f"{SOURCE}:duration=3", *H264_BFRAMES, "-sc_threshold", "0",
         "-x264-params", "open-gop=1"],
        "open GOPs: B-frames shown before each keyframe reference the GOP before it",
    ),
    "odd_444": (
        "odd_444.mp4",
        ["-f", "lavfi", "-i", "testsrc2=size=322x244:rate=25:duration=1,format=yuv444p,"
         "crop=321:243:0:0", "-c:v", "libx264", "-pix_fmt", "yuv444p", "-bf", "2", "-g", "10"],
        "odd size 321x243, H.264 4:4:4 with B-frames",
    ),
    "odd_420": (
        "odd_420.mkv",
        ["-f", "lavfi", "-i", "testsrc2=size=322x244:rate=25:duration=1,format=yuv444p,"
         "crop=321:243:0:0", "-c:v", "ffv1", "-pix_fmt", "yuv420p", "-g", "10"],
        "odd size 321x243 in 4:2:0 (chroma 161x122), lossless FFV1 in Matroska",
    ),
    "mpegts": (
        "clip.ts",
        ["-f", "lavfi", "-i", f"{SOURCE}:duration=3", *H264_BFRAMES],
        "MPEG-TS: no keyframe index (seeks land by estimate), clock starts at 1.4 s",
    ),
    "hevc": (
        "hevc.mp4",
        ["-f", "lavfi", "-i", f"{SOURCE}:duration=2", "-c:v", "libx265",
         "-x265-params", "bframes=4:keyint=25:log-level=error"],
        "HEVC with 4 B-frames and a 25-frame GOP",
    ),
}  # fmt: skip

# Clips whose frames every reader must reproduce exactly.
CLIPS = ["h264_bframes", "vfr", "open_gop", "odd_444", "odd_420", "rotated", "mpegts", "hevc"]


@pytest.fixture(scope="session")
def clip_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("clips")


@pytest.fixture(scope="session")
def clips(clip_dir: Path) -> dict[str, Path]:
    """Every test clip, made in parallel (ffmpeg start-up dominates for clips this small)."""
    paths = {name: clip_dir / file for name, (file, _, _) in RECIPES.items()}
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda name: ffmpeg(*RECIPES[name][1], paths[name]), RECIPES))
    # A display matrix saying "turn 90 degrees counter-clockwise", on the B-frame clip.
    paths["rotated"] = clip_dir / "rotated.mp4"
    ffmpeg("-i", paths["h264_bframes"], "-c", "copy", "-metadata:s:v", "rotate=90",
           paths["rotated"])  # fmt: skip
    # Warm the reference decodes the same way; tests then find them cached.
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda name: reference(paths[name]), CLIPS))
        list(pool.map(lambda name: ffprobe_frames(paths[name]), CLIPS))
    reference(paths["rotated"], autorotate=True)
    return paths


@pytest.fixture(scope="session")
def h264_bframes(clips: dict[str, Path]) -> Path:
    return clips["h264_bframes"]


@pytest.fixture(scope="session")
def h264_faststart(clips: dict[str, Path]) -> Path:
    return clips["h264_faststart"]


@pytest.fixture(scope="session")
def vfr(clips: dict[str, Path]) -> Path:
    return clips["vfr"]


@pytest.fixture(scope="session")
def open_gop(clips: dict[str, Path]) -> Path:
    return clips["open_gop"]


@pytest.fixture(scope="session")
def odd_444(clips: dict[str, Path]) -> Path:
    return clips["odd_444"]


@pytest.fixture(scope="session")
def odd_420(clips: dict[str, Path]) -> Path:
    return clips["odd_420"]


@pytest.fixture(scope="session")
def rotated(clips: dict[str, Path]) -> Path:
    return clips["rotated"]


@pytest.fixture(scope="session")
def mpegts(clips: dict[str, Path]) -> Path:
    return clips["mpegts"]


@pytest.fixture(scope="session")
def hevc(clips: dict[str, Path]) -> Path:
    return clips["hevc"]


@pytest.fixture(params=CLIPS)
def clip(request: pytest.FixtureRequest) -> Path:
    path: Path = request.getfixturevalue(request.param)
    return path


@pytest.fixture(scope="session")
def make_file(clip_dir: Path) -> Callable[[str, bytes], Path]:
    """Write `data` to a new file called `name` and return its path."""

    def make(name: str, data: bytes) -> Path:
        path = clip_dir / name
        path.write_bytes(data)
        return path

    return make
