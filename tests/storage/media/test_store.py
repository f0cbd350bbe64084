"""FrameStore: the H.264 proxy gives frame N within tolerance, atomic builds, stale detection."""

from __future__ import annotations

import dataclasses
import threading
from concurrent.futures import CancelledError
from pathlib import Path

import av
import numpy as np
import pytest

from bench._scene import write_scene
from storage.media import FrameReader, FrameStore, MediaError, VideoIndex, index_video
from tests.storage.media.conftest import CLIPS, closest_frame, lavfi


@pytest.fixture(scope="module")
def bframes_store(
    h264_bframes: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[VideoIndex, Path]:
    index = index_video(h264_bframes)
    out = tmp_path_factory.mktemp("store") / "bframes.frames"
    FrameStore.build(h264_bframes, index, out).close()
    return index, out


def exact_frames(video: Path, index: VideoIndex) -> np.ndarray:
    with FrameReader(video, index) as reader:
        return np.stack([reader.read(n) for n in range(index.frame_count)])


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return 99.0 if mse == 0 else 10 * float(np.log10(255.0**2 / mse))


def assert_frames_match(store: FrameStore, exact: np.ndarray, min_psnr: float) -> None:
    """Every stored frame is within lossy tolerance of its exact frame, and is that frame."""
    for n in range(len(exact)):
        image = store.read(n)
        assert image.shape == exact[n].shape  # same orientation as FrameReader
        assert image.dtype == np.uint8 and image.flags.c_contiguous
        quality = psnr(image, exact[n])
        assert quality >= min_psnr, f"frame {n}: {quality:.1f} dB"
        # Identity, not just likeness: nearer to frame n than to either neighbour.
        assert closest_frame(image, exact, n, reach=1) == n, f"frame {n}"


# testsrc2's saturated colour edges are a hard case for lossy video; real footage (below) and
# these clips all come out above 33 dB. A wrong colour matrix or range gives under 25 dB.
TEST_PATTERN_PSNR = 30.0


def check_store(video: Path, out: Path, min_psnr: float) -> VideoIndex:
    """Build the seek cache of `video` at `out` and check every frame against the exact one."""
    index = index_video(video)
    store = FrameStore.build(video, index, out)
    try:
        assert_frames_match(store, exact_frames(video, index), min_psnr)
    finally:
        store.close()
    return index


@pytest.mark.parametrize("name", CLIPS)
def test_every_frame_is_its_exact_frame_within_tolerance(
    name: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    check_store(request.getfixturevalue(name), tmp_path / "x.frames", TEST_PATTERN_PSNR)


@pytest.mark.parametrize(
    ("pix_fmt", "colour"), [("yuv420p10le", None), ("yuvj420p", "full range BT.709")]
)
def test_pixel_formats_keep_their_colours(pix_fmt: str, colour: str | None, tmp_path: Path) -> None:
    # A 10-bit source stays 10-bit and a full-range one full-range in the proxy, so its frames
    # go to RGB the way the original's do (an 8-bit detour moves colour edges by ~25 dB).
    video = tmp_path / "clip.mp4"
    with av.open(str(video), "w") as out:
        stream = out.add_stream("libx264", rate=30)
        stream.width, stream.height, stream.pix_fmt = 176, 144, pix_fmt
        for frame in lavfi("testsrc2=size=176x144:rate=30:duration=1"):
            frame = frame.reformat(format=pix_fmt)
            if colour is not None:
                frame.colorspace = av.video.reformatter.Colorspace.ITU709
                frame.color_range = av.video.reformatter.ColorRange.JPEG
                stream.codec_context.colorspace = frame.colorspace
                stream.codec_context.color_range = frame.color_range
            frame.pict_type = av.video.frame.PictureType.NONE
            out.mux(stream.encode(frame))
        out.mux(stream.encode())
    check_store(video, tmp_path / "x.frames", TEST_PATTERN_PSNR)


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2 s of 854x480 handheld footage of a textured scene: real video's size, not a pattern's."""
    return write_scene(tmp_path_factory.mktemp("scene") / "scene.mp4", 2.0)


def test_realistic_480p_costs_at_most_60_mb_a_minute(scene: Path, tmp_path: Path) -> None:
    out = tmp_path / "scene.frames"
    index = check_store(scene, out, 33.0)
    assert (index.width, index.height, index.frame_count) == (854, 480, 60)
    mb_per_minute = out.stat().st_size / 2**20 / (index.duration_s / 60)
    assert mb_per_minute <= 60, f"{mb_per_minute:.0f} MB per minute"


def test_keyframes_every_gop_frames(h264_bframes: Path, tmp_path: Path) -> None:
    index = index_video(h264_bframes)
    store = FrameStore.build(h264_bframes, index, tmp_path / "x.frames", gop=5)
    try:
        assert store.gop == 5 and store.crf == 20
        assert [store.keyframe_before(i) for i in (0, 4, 5, 9, 74)] == [0, 0, 5, 5, 70]
        # Reading backwards through a GOP decodes from its keyframe each time and stays right.
        exact = exact_frames(h264_bframes, index)
        for n in range(14, 4, -1):
            assert closest_frame(store.read(n), exact, n, reach=1) == n
    finally:
        store.close()


def test_build_rejects_bad_parameters(h264_bframes: Path, tmp_path: Path) -> None:
    index = index_video(h264_bframes)
    with pytest.raises(ValueError, match="crf"):
        FrameStore.build(h264_bframes, index, tmp_path / "x.frames", crf=52)
    with pytest.raises(ValueError, match="gop"):
        FrameStore.build(h264_bframes, index, tmp_path / "x.frames", gop=0)
    assert list(tmp_path.iterdir()) == []


def test_crf_controls_size_and_a_store_of_another_crf_is_stale(
    h264_bframes: Path, tmp_path: Path
) -> None:
    index = index_video(h264_bframes)
    sharp, coarse = tmp_path / "sharp.frames", tmp_path / "coarse.frames"
    FrameStore.build(h264_bframes, index, sharp, crf=14).close()
    FrameStore.build(h264_bframes, index, coarse, crf=32).close()
    assert sharp.stat().st_size > 2 * coarse.stat().st_size
    assert FrameStore.open(sharp, index, crf=32) is None  # asked for 32: rebuild
    store = FrameStore.open(sharp, index, crf=14)
    assert store is not None and store.crf == 14
    store.close()
    store = FrameStore.open(sharp, index)  # no crf asked: any will do
    assert store is not None
    store.close()


def test_damaged_packet_names_the_frame(
    bframes_store: tuple[VideoIndex, Path], tmp_path: Path
) -> None:
    index, path = bframes_store
    data = bytearray(path.read_bytes())
    store = FrameStore.open(path, index)
    assert store is not None
    start, end = int(store._offsets[16]), int(store._offsets[17])  # the keyframe of frames 16..23
    store.close()
    data[start:end] = bytes(end - start)  # zeros: no NAL unit left in the packet
    copy = tmp_path / "damaged.frames"
    copy.write_bytes(bytes(data))
    damaged = FrameStore.open(copy, index)  # header and table are intact
    assert damaged is not None
    try:
        assert damaged.read(15).shape == (144, 176, 3)  # other GOPs still read
        with pytest.raises(MediaError, match=r"damaged\.frames: seek cache is damaged at frame 16"):
            damaged.read(19)
        assert damaged.read(24).shape == (144, 176, 3)
    finally:
        damaged.close()


def test_open_accepts_a_complete_store(bframes_store: tuple[VideoIndex, Path]) -> None:
    index, path = bframes_store
    store = FrameStore.open(path, index)
    assert store is not None
    assert store.frame_count == index.frame_count
    store.close()


def test_open_rejects_missing_file(tmp_path: Path, bframes_store: tuple[VideoIndex, Path]) -> None:
    assert FrameStore.open(tmp_path / "nothing.frames", bframes_store[0]) is None


def test_open_rejects_store_of_another_video(
    bframes_store: tuple[VideoIndex, Path], vfr: Path
) -> None:
    assert FrameStore.open(bframes_store[1], index_video(vfr)) is None


def test_open_rejects_changed_timestamps(bframes_store: tuple[VideoIndex, Path]) -> None:
    index, path = bframes_store
    pts = index.pts.copy()
    pts[10] += 1  # same count, first and last pts: only the timestamp fingerprint differs
    assert FrameStore.open(path, dataclasses.replace(index, pts=pts)) is None


@pytest.mark.parametrize("damage", ["truncate", "magic", "empty"])
def test_open_rejects_damaged_file(
    damage: str, bframes_store: tuple[VideoIndex, Path], tmp_path: Path
) -> None:
    index, path = bframes_store
    data = path.read_bytes()
    damaged = {
        "truncate": data[: len(data) - 100],
        "magic": b"XXXXXXXX" + data[8:],
        "empty": b"",
    }[damage]
    copy = tmp_path / "damaged.frames"
    copy.write_bytes(damaged)
    assert FrameStore.open(copy, index) is None


def test_build_reports_progress(h264_bframes: Path, tmp_path: Path) -> None:
    index = index_video(h264_bframes)
    calls: list[tuple[int, int]] = []
    store = FrameStore.build(
        h264_bframes, index, tmp_path / "x.frames", progress=lambda d, t: calls.append((d, t))
    )
    store.close()
    assert calls[0] == (1, 75) and calls[-1] == (75, 75)
    assert [d for d, _ in calls] == list(range(1, 76))


def test_cancelled_build_leaves_nothing(h264_bframes: Path, tmp_path: Path) -> None:
    index = index_video(h264_bframes)
    done: list[int] = []
    with pytest.raises(CancelledError):
        FrameStore.build(
            h264_bframes,
            index,
            tmp_path / "x.frames",
            progress=lambda d, t: done.append(d),
            cancel=lambda: len(done) >= 5,
        )
    assert list(tmp_path.iterdir()) == []  # neither the store nor its temporary file


def test_failed_build_keeps_the_previous_store(
    bframes_store: tuple[VideoIndex, Path], tmp_path: Path
) -> None:
    # A build that fails never replaces a good store with a partial one.
    index, path = bframes_store
    out = tmp_path / "keep.frames"
    out.write_bytes(path.read_bytes())
    empty = tmp_path / "empty.mp4"
    empty.write_bytes(b"")
    with pytest.raises(MediaError):
        FrameStore.build(empty, index, out)
    store = FrameStore.open(out, index)
    assert store is not None
    store.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.mp4", "keep.frames"]


def test_concurrent_reads_agree(bframes_store: tuple[VideoIndex, Path]) -> None:
    index, path = bframes_store
    store = FrameStore.open(path, index)
    assert store is not None
    expected = [store.read(n) for n in range(index.frame_count)]
    failures: list[int] = []

    def worker(offset: int) -> None:
        for k in range(index.frame_count):
            n = (k * 7 + offset) % index.frame_count
            if not np.array_equal(store.read(n), expected[n]):
                failures.append(n)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store.close()
    assert failures == []


def test_read_out_of_range_and_closed(bframes_store: tuple[VideoIndex, Path]) -> None:
    index, path = bframes_store
    store = FrameStore.open(path, index)
    assert store is not None
    with pytest.raises(IndexError):
        store.read(index.frame_count)
    store.close()
    with pytest.raises(ValueError):
        store.read(0)
