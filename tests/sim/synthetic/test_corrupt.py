"""The corruption generator: each edit is exactly the paper's (§8.2), placed on the most active
3 s, and the interval it records is where the edit is in the output."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sim.synthetic import CorruptionError, corrupt_frames, corrupt_video, most_active
from storage.media import FrameReader, MediaError, index_video

FPS = 10.0


def _frames(n: int, busy: tuple[int, int]) -> list[np.ndarray]:
    """Frame k shows k in its red channel; a square moves only during ``busy``."""
    out = []
    for k in range(n):
        img = np.zeros((48, 64, 3), np.uint8)
        img[..., 0] = k
        x = 4 + 2 * (min(max(k, busy[0]), busy[1]) - busy[0])
        img[10:30, x % 40 : x % 40 + 20, 1] = 255
        out.append(img)
    return out


def _ids(frames: list[np.ndarray]) -> list[int]:
    return [int(f[0, 0, 0]) for f in frames]


def test_the_edit_is_centred_on_the_most_active_three_seconds() -> None:
    frames = _frames(120, busy=(60, 90))
    # the square moves between frames 60 and 90: changes 61..90, 3 s from frame 61
    assert most_active(frames, FPS) == 61
    _, t = corrupt_frames(frames, FPS, "teleport")
    assert t["active_start_s"] == 6.1


def test_teleport_deletes_one_and_a_half_seconds_at_the_recorded_cut() -> None:
    frames = _frames(120, busy=(60, 90))
    edited, t = corrupt_frames(frames, FPS, "teleport")
    ids = _ids(edited)
    cut = round(t["start_s"] * FPS)
    assert t["start_s"] == t["end_s"]  # an instant in the output
    assert len(edited) == 120 - 15
    assert ids[cut - 1] + 1 + 15 == ids[cut]  # the frames between were deleted
    assert (t["source_start_s"], t["source_end_s"]) == (cut / FPS, (cut + 15) / FPS)
    assert 60 <= cut <= 90 - 15  # inside the busy span


def test_swap_reverses_two_adjacent_segments_inside_the_recorded_interval() -> None:
    frames = _frames(120, busy=(60, 90))
    edited, t = corrupt_frames(frames, FPS, "swap")
    a, b = round(t["start_s"] * FPS), round(t["end_s"] * FPS)
    assert b - a == 30 and len(edited) == 120
    ids = _ids(edited)
    assert ids[:a] == list(range(a)) and ids[b:] == list(range(b, 120))
    assert ids[a:b] == list(range(a + 15, b)) + list(range(a, a + 15))


def test_ghost_blends_the_frame_three_seconds_earlier_for_two_seconds() -> None:
    frames = _frames(120, busy=(60, 90))
    edited, t = corrupt_frames(frames, FPS, "ghost")
    a, b = round(t["start_s"] * FPS), round(t["end_s"] * FPS)
    assert b - a == 20 and (t["source_start_s"], t["source_end_s"]) == (
        (a - 30) / FPS,
        (b - 30) / FPS,
    )
    for k in range(120):
        want = (k + (k - 30)) / 2 if a <= k < b else k
        assert edited[k][0, 0, 0] == pytest.approx(want, abs=0.51), k
    assert np.array_equal(corrupt_frames(frames, FPS, "none")[0][5], frames[5])


def test_a_clip_too_short_or_an_unknown_kind_is_refused() -> None:
    with pytest.raises(
        CorruptionError, match=r"a ghost needs a clip of at least 5\.5 s; this one is 4\.00 s"
    ):
        corrupt_frames(_frames(40, busy=(0, 40)), FPS, "ghost")
    with pytest.raises(CorruptionError, match="unknown corruption 'melt'"):
        corrupt_frames(_frames(80, busy=(0, 40)), FPS, "melt")


def test_corrupt_video_writes_the_clip_and_its_ground_truth(tmp_path: Path) -> None:
    from sim.synthetic import encode_mp4

    src = tmp_path / "clean.mp4"
    frames = [np.repeat(np.repeat(f, 4, 0), 4, 1) for f in _frames(80, busy=(20, 50))]
    encode_mp4(frames, src, fps=10)
    record = corrupt_video(src, "teleport", tmp_path / "t.mp4")
    truth = json.loads((tmp_path / "t.mp4.json").read_text("utf-8"))
    assert truth["kind"] == "teleport" and truth["frames_out"] == 65 == record.frames_out
    ix = index_video(tmp_path / "t.mp4")
    assert ix.frame_count == 65
    cut = round(truth["start_s"] * 10)
    with FrameReader(tmp_path / "t.mp4", ix) as out, FrameReader(src, index_video(src)) as inp:
        got = out.read(cut).astype(int)
        # the output's frame at the cut is the source's 15 frames later, not the next one
        assert np.abs(got - inp.read(cut + 15)).mean() < np.abs(got - inp.read(cut)).mean() / 3
    (tmp_path / "junk.mp4").write_text("not a video")
    with pytest.raises(MediaError, match=r"junk\.mp4"):
        corrupt_video(tmp_path / "junk.mp4", "none", tmp_path / "o.mp4")
