"""Frame evidence: mid-bin uniform sampling at source time, 512 px JPEGs, ROI crops, decodes."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import cv2
import numpy as np
import pytest

from judge.video import FrameSampler, check_window, mid_bin_times, uniform_indices
from storage.media import FrameReader, VideoIndex, index_video
from tests.casefactory import write_video


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, VideoIndex]:
    """24 frames at 12 fps (2.0 s), 64x48."""
    path = write_video(tmp_path_factory.mktemp("v") / "clip.mp4", n=24)
    return path, index_video(path)


def _halves_video(path: Path) -> Path:
    """A 64x48 clip whose left half is black and right half white."""
    import av

    img = np.zeros((48, 64, 3), np.uint8)
    img[:, 32:] = 255
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=12)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for _ in range(6):
            for packet in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


class CountingReader:
    """A FrameReader that logs every frame it decodes."""

    log: ClassVar[list[int]] = []

    def __init__(self, path: Path, index: VideoIndex) -> None:
        self._reader = FrameReader(path, index)

    def read(self, i: int) -> np.ndarray:
        CountingReader.log.append(i)
        return self._reader.read(i)

    def close(self) -> None:
        self._reader.close()


def _decode(jpeg: bytes) -> np.ndarray:
    bgr = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)


def test_uniform_sampling_picks_mid_bin_frames_at_source_time(
    clip: tuple[Path, VideoIndex],
) -> None:
    _, index = clip
    assert index.duration_s == pytest.approx(2.0)
    # t_k = (k + 0.5) * 2.0 / 8 = 0.125, 0.375, ... → frames floor(12 t)
    assert mid_bin_times(0.0, 2.0, 8)[:2] == [0.125, 0.375]
    assert uniform_indices(index, 8) == [1, 4, 7, 10, 13, 16, 19, 22]
    assert uniform_indices(index, 24) == list(range(24))
    assert uniform_indices(index, 48) == list(range(24))  # de-duplicated, not repeated
    assert uniform_indices(index, 1) == [12]


def test_frames_are_512px_jpegs_of_the_exact_frame_with_evidence_ids(
    clip: tuple[Path, VideoIndex],
) -> None:
    path, index = clip
    sampler = FrameSampler(path, index)
    frames = sampler.uniform(8, "T", "uniform_task")
    assert [f.evidence_id for f in frames] == [f"T{k:02d}" for k in range(1, 9)]
    assert [f.frame_index for f in frames] == [1, 4, 7, 10, 13, 16, 19, 22]
    assert all(f.origin == "uniform_task" and f.roi is None for f in frames)
    assert [f.time_s for f in frames] == [index.time_of(i) for i in (1, 4, 7, 10, 13, 16, 19, 22)]
    with FrameReader(path, index) as reader:
        for f in frames:
            got = _decode(f.jpeg)
            assert got.shape == (384, 512, 3)  # 64x48 → longest side 512
            want = cv2.resize(reader.read(f.frame_index), (512, 384), interpolation=cv2.INTER_CUBIC)
            assert np.abs(got.astype(int) - want.astype(int)).mean() < 6
    sampler.close()


def test_only_needed_frames_are_decoded_in_ascending_order_once(
    clip: tuple[Path, VideoIndex],
) -> None:
    path, index = clip
    CountingReader.log = []
    sampler = FrameSampler(path, index, reader_factory=CountingReader)
    sampler.uniform(8, "T", "uniform_task")
    assert CountingReader.log == [1, 4, 7, 10, 13, 16, 19, 22]
    sampler.uniform(24, "P", "uniform_physics")  # the 8 task frames are a subset: not redone
    assert sampler.frames_decoded == 24 and len(CountingReader.log) == 24
    assert CountingReader.log[8:] == sorted(set(range(24)) - {1, 4, 7, 10, 13, 16, 19, 22})
    w = check_window(index, 0.5, 1.0, None, 6)
    frames = sampler.window(w, 3)
    assert [f.evidence_id for f in frames] == [f"I3-{k:02d}" for k in range(1, 7)]
    assert [f.frame_index for f in frames] == [6, 7, 8, 9, 10, 11]
    assert {f.origin for f in frames} == {"inspect:3"}
    assert sampler.frames_decoded == 24  # all cached
    assert sampler.frames_encoded == 8 + 24 + 6
    sampler.close()


def test_roi_is_cropped_before_resizing(tmp_path: Path) -> None:
    path = _halves_video(tmp_path / "halves.mp4")
    index = index_video(path)
    sampler = FrameSampler(path, index)
    whole = sampler.window(check_window(index, 0.0, 0.5, None, 1), 1)[0]
    right = sampler.window(check_window(index, 0.0, 0.5, (0.5, 0.0, 0.5, 1.0), 1), 2)[0]
    left = sampler.window(check_window(index, 0.0, 0.5, (0.0, 0.0, 0.5, 1.0), 1), 3)[0]
    assert _decode(whole.jpeg).shape == (384, 512, 3)
    assert _decode(right.jpeg).shape == (512, 341, 3)  # 32x48 crop, then longest side 512
    assert _decode(right.jpeg).mean() > 230 and _decode(left.jpeg).mean() < 25
    assert right.roi == (0.5, 0.0, 0.5, 1.0) and whole.roi is None
    sampler.close()


def test_window_requests_are_clamped_with_a_note(clip: tuple[Path, VideoIndex]) -> None:
    _, index = clip
    w = check_window(index, 3.0, -1.0, (0.8, 0.8, 0.5, 0.5), 40)
    assert (w.start_s, w.end_s, w.n_frames) == (0.0, 2.0, 24)
    assert w.roi == pytest.approx((0.8, 0.8, 0.2, 0.2))
    assert len(w.notes) == 4  # swapped, clamped window, clamped n, clamped region
    empty = check_window(index, 0.2, 0.4, (1.2, 0.0, 0.3, 0.3), 0)
    assert empty.roi is None and empty.n_frames == 1
    assert any("whole frame used" in n for n in empty.notes)
    ok = check_window(index, 0.2, 0.4, None, 12)
    assert ok.notes == () and (ok.start_s, ok.end_s, ok.n_frames) == (0.2, 0.4, 12)
