"""Test clips made with PyAV, and the ffmpeg command line's own decode of them as reference.

The ffmpeg CLI (Debian's build, not the FFmpeg inside PyAV) is the independent reference
decoder: tests that compare against it take `reference`, `ffprobe_frames` or the `needs_ffmpeg`
fixture, and only those skip when it is missing. The clips themselves are written through PyAV,
so every other test runs anywhere. Clips are tiny and made once per session.
"""

from __future__ import annotations

import functools
import json
import math
import shutil
import subprocess
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

# testsrc2 changes every frame (moving shapes, a running clock), so neighbours always differ.
SOURCE = "testsrc2=size=176x144:rate=30"
H264_BFRAMES = {"bf": "3", "g": "30"}


def has_ffmpeg() -> bool:
    return shutil.which("ffmpeg") is not None and shutil.which("ffprobe") is not None


def require_ffmpeg() -> None:
    """Skip the calling test unless the ffmpeg command line (the reference decoder) is there."""
    if not has_ffmpeg():
        pytest.skip("needs the ffmpeg command line as reference decoder")


@pytest.fixture()
def needs_ffmpeg() -> None:
    """For tests that run ffmpeg or ffprobe themselves."""
    require_ffmpeg()


def ffmpeg(*args: str | Path) -> None:
    require_ffmpeg()
    subprocess.run(["ffmpeg", "-v", "error", "-y", *map(str, args)], check=True)


def ffprobe_json(path: Path, *args: str) -> dict[str, object]:
    require_ffmpeg()
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
    require_ffmpeg()
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
    require_ffmpeg()
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


def lavfi(graph: str) -> Iterator[Any]:
    """Frames of an FFmpeg source-filter chain ("testsrc2=...,format=...,crop=..."), via PyAV."""
    import av
    import av.filter

    g = av.filter.Graph()
    nodes = [g.add(*(part.split("=", 1) if "=" in part else (part,))) for part in graph.split(",")]
    sink = g.add("buffersink")
    for a, b in zip(nodes, [*nodes[1:], sink], strict=True):
        a.link_to(b)
    g.configure()
    while True:
        try:
            yield sink.pull()
        except (av.error.EOFError, av.error.BlockingIOError):
            return


@dataclass(frozen=True)
class Recipe:
    """A clip written by PyAV: frames of `source` encoded with `codec` into `file`."""

    file: str
    source: str
    codec: str
    pix_fmt: str
    about: str
    options: dict[str, str] = field(default_factory=dict)
    container_options: dict[str, str] = field(default_factory=dict)
    # Presentation time in seconds of frame n; None: constant rate from the source.
    seconds_at: Callable[[int], float] | None = None

    def write(self, path: Path) -> None:
        import av

        frames = list(lavfi(self.source))
        rate = Fraction(1, 1) / frames[0].time_base
        with av.open(str(path), "w", options=self.container_options) as out:
            stream = out.add_stream(self.codec, rate=rate)
            stream.width, stream.height = frames[0].width, frames[0].height
            stream.pix_fmt = self.pix_fmt
            stream.options = self.options
            if self.seconds_at is not None:
                stream.codec_context.time_base = stream.time_base = Fraction(1, 90000)
            for n, frame in enumerate(frames):
                frame.pict_type = av.video.frame.PictureType.NONE
                if self.seconds_at is not None:
                    frame.pts = round(self.seconds_at(n) * 90000)
                    frame.time_base = Fraction(1, 90000)
                out.mux(stream.encode(frame.reformat(format=self.pix_fmt)))
            out.mux(stream.encode())


def write_rotated(source: Path, path: Path, degrees: int) -> None:
    """Remux `source` (no re-encode) with a display matrix: `degrees` counter-clockwise."""
    import av

    with av.open(str(source)) as inp, av.open(str(path), "w") as out:
        in_stream = inp.streams.video[0]
        out_stream = out.add_stream_from_template(in_stream)
        out_stream.set_display_rotation(degrees)
        for packet in inp.demux(in_stream):
            if packet.dts is None:  # the demuxer's final flush packet
                continue
            packet.stream = out_stream
            out.mux(packet)


_ODD = "testsrc2=size=322x244:rate=25:duration=1,format=yuv444p,crop=321:243:0:0"

RECIPES: dict[str, Recipe] = {
    "h264_bframes": Recipe(
        "bframes.mp4", f"{SOURCE}:duration=2.5", "libx264", "yuv420p",
        "H.264, 3 B-frames, GOP 30, 75 frames, moov at the end (the muxer's default)",
        H264_BFRAMES,
    ),
    "h264_faststart": Recipe(
        "faststart.mp4", f"{SOURCE}:duration=2.5", "libx264", "yuv420p",
        "the same with the frame table (moov) at the start of the file",
        H264_BFRAMES, {"movflags": "+faststart"},
    ),
    "vfr": Recipe(
        "vfr.mp4", f"{SOURCE}:duration=2", "libx264", "yuv420p",
        "variable frame rate: spacing wobbles between 0.5 and 2.9 ticks of 1/30 s",
        H264_BFRAMES, seconds_at=lambda n: (1.7 * n + 0.6 * math.sin(n)) / 30,
    ),
    "open_gop": Recipe(
        "open_gop.mp4", f"{SOURCE}:duration=3", "libx264", "yuv420p",
        "open GOPs: B-frames shown before each keyframe reference the GOP before it",
        {**H264_BFRAMES, "sc_threshold": "0", "x264-params": "open-gop=1"},
    ),
    "odd_444": Recipe(
        "odd_444.mp4", _ODD, "libx264", "yuv444p",
        "odd size 321x243, H.264 4:4:4 with B-frames", {"bf": "2", "g": "10"},
    ),
    "odd_420": Recipe(
        "odd_420.mkv", f"{_ODD},format=yuv420p", "ffv1", "yuv420p",
        "odd size 321x243 in 4:2:0 (chroma 161x122), lossless FFV1 in Matroska", {"g": "10"},
    ),
    "mpegts": Recipe(
        "clip.ts", f"{SOURCE}:duration=3", "libx264", "yuv420p",
        "MPEG-TS: no keyframe index (seeks land by estimate), clock starts at 1.4 s",
        H264_BFRAMES,
    ),
    "hevc": Recipe(
        "hevc.mp4", f"{SOURCE}:duration=2", "libx265", "yuv420p",
        "HEVC with 4 B-frames and a 25-frame GOP",
        {"x265-params": "bframes=4:keyint=25:log-level=error"},
    ),
}  # fmt: skip

# Clips whose frames every reader must reproduce exactly.
CLIPS = ["h264_bframes", "vfr", "open_gop", "odd_444", "odd_420", "rotated", "mpegts", "hevc"]


@pytest.fixture(scope="session")
def clip_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("clips")


@pytest.fixture(scope="session")
def clips(clip_dir: Path) -> dict[str, Path]:
    """Every test clip, made in parallel (PyAV releases the GIL while it encodes)."""
    paths = {name: clip_dir / recipe.file for name, recipe in RECIPES.items()}
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda name: RECIPES[name].write(paths[name]), RECIPES))
    # A display matrix saying "turn 90 degrees counter-clockwise", on the B-frame clip.
    paths["rotated"] = clip_dir / "rotated.mp4"
    write_rotated(paths["h264_bframes"], paths["rotated"], 90)
    if has_ffmpeg():  # warm the reference decodes the same way; tests then find them cached
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
