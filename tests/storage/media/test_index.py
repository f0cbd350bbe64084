"""index_video and VideoIndex: frame counts, timestamps, time mapping, keyframes, JSON."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from storage.media import VideoIndex, index_video
from tests.storage.media.conftest import ffprobe_frames, stream_info


def test_frames_and_timestamps_are_those_ffmpeg_decodes(clip: Path) -> None:
    index = index_video(clip)
    packet_count, decoded_pts = ffprobe_frames(clip)  # ffprobe decodes every frame
    assert index.frame_count == len(decoded_pts) == packet_count
    assert index.pts.tolist() == decoded_pts
    assert np.all(np.diff(index.pts) > 0)
    assert index.time_base == Fraction(str(stream_info(clip)["time_base"]))


def test_size_codec_and_rate(h264_bframes: Path, odd_420: Path) -> None:
    index = index_video(h264_bframes)
    assert (index.width, index.height, index.codec, index.rotation) == (176, 144, "h264", 0)
    assert index.frame_count == 75
    assert index.duration_s == pytest.approx(2.5)
    assert index.fps == pytest.approx(30.0)
    assert index_video(odd_420).display_size == (321, 243)


def test_variable_frame_rate_times_follow_timestamps(vfr: Path) -> None:
    index = index_video(vfr)
    times = [index.time_of(i) for i in range(index.frame_count)]
    gaps = np.diff(times)
    assert gaps.min() > 0
    assert gaps.max() > 1.5 * gaps.min()  # really variable
    assert index.fps == pytest.approx(index.frame_count / index.duration_s)


def test_mpegts_times_are_relative_to_first_frame(mpegts: Path) -> None:
    index = index_video(mpegts)
    assert index.pts[0] > 0  # MPEG-TS clocks do not start at zero
    assert index.time_of(0) == 0.0
    assert index.time_of(30) == pytest.approx(1.0)


def test_index_at_inverts_time_of(clip: Path) -> None:
    index = index_video(clip)
    for i in range(index.frame_count):
        t = index.time_of(i)
        assert index.index_at(t) == i
        if i + 1 < index.frame_count:
            # Any time before the next frame starts still shows frame i.
            assert index.index_at((t + index.time_of(i + 1)) / 2) == i


def test_index_at_clamps_to_the_video() -> None:
    index = _index([0, 10, 20], keyframes=[0])
    assert index.index_at(-5.0) == 0
    assert index.index_at(1e9) == 2


def test_keyframe_before() -> None:
    index = _index(list(range(0, 100, 10)), keyframes=[0, 4, 8])
    assert [index.keyframe_before(i) for i in range(10)] == [0, 0, 0, 0, 4, 4, 4, 4, 8, 8]
    with pytest.raises(IndexError):
        index.keyframe_before(10)


def test_keyframes_of_a_real_clip(h264_bframes: Path) -> None:
    assert index_video(h264_bframes).keyframes.tolist() == [0, 30, 60]


def test_rotation_from_display_matrix(rotated: Path) -> None:
    index = index_video(rotated)
    assert index.rotation == 90  # what ffprobe prints as the display matrix rotation
    assert (index.width, index.height) == (176, 144)  # coded size
    assert index.display_size == (144, 176)


def test_json_round_trip(clip: Path) -> None:
    index = index_video(clip)
    text = json.dumps(index.to_json())
    again = VideoIndex.from_json(json.loads(text))
    assert again == index
    assert np.array_equal(again.pts, index.pts)
    assert np.array_equal(again.keyframes, index.keyframes)
    assert again.time_base == index.time_base


def test_json_is_compact_for_constant_frame_rate() -> None:
    index = _index(list(range(0, 108_000 * 512, 512)), keyframes=list(range(0, 108_000, 250)))
    assert len(json.dumps(index.to_json())) < 2_000  # an hour at 30 fps


@pytest.mark.parametrize(
    "change",
    [{"version": 2}, {"pts": "not base64!"}, {"frame_count": 4}, {"time_base": None}],
)
def test_from_json_rejects_malformed(change: dict[str, object]) -> None:
    d = _index([0, 1, 2], keyframes=[0]).to_json() | change
    with pytest.raises(ValueError):
        VideoIndex.from_json(d)


def test_index_is_immutable() -> None:
    index = _index([0, 1, 2], keyframes=[0])
    with pytest.raises(ValueError):
        index.pts[0] = 5


def _index(pts: list[int], keyframes: list[int]) -> VideoIndex:
    return VideoIndex(
        frame_count=len(pts),
        width=4,
        height=2,
        rotation=0,
        fps=30.0,
        duration_s=1.0,
        codec="h264",
        time_base=Fraction(1, 300),
        pts=np.array(pts, dtype=np.int64),
        keyframes=np.array(keyframes, dtype=np.int64),
    )
