"""FrameSource: cache, then seek cache, then exact decode; decode-ahead both ways."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from storage.media import FrameReader, FrameSource, FrameStore, VideoIndex, index_video


@pytest.fixture(scope="module")
def exact(h264_bframes: Path) -> np.ndarray:
    index = index_video(h264_bframes)
    with FrameReader(h264_bframes, index) as reader:
        return np.stack([reader.read(n) for n in range(index.frame_count)])


@pytest.fixture()
def index(h264_bframes: Path) -> VideoIndex:
    return index_video(h264_bframes)


def test_frames_are_exact_without_a_store(
    h264_bframes: Path, index: VideoIndex, exact: np.ndarray
) -> None:
    with FrameSource(h264_bframes, index, store_path=None) as source:
        assert not source.seekable_fast
        for n in (10, 3, 74, 0, 40):
            assert np.array_equal(source.frame(n), exact[n])
        assert 40 in source.cache
        assert not source.frame(40).flags.writeable  # shared with the cache


@pytest.mark.parametrize("direction", [-1, +1])
def test_stepping_after_prefetch_hits_the_cache_without_a_store(
    direction: int, h264_bframes: Path, index: VideoIndex, exact: np.ndarray
) -> None:
    center = 45
    with FrameSource(h264_bframes, index, store_path=None) as source:
        source.frame(center)
        source.prefetch(center, direction, 10)
        assert source.wait_prefetch(timeout=30)
        for k in range(1, 11):
            n = center + direction * k
            assert n in source.cache, f"frame {n} was not prefetched"
            assert np.array_equal(source.frame(n), exact[n])
        # ... and a few the other way, so reversing is as fast as going on.
        assert center - direction in source.cache


def test_stepping_backwards_after_prefetch_hits_the_cache_with_a_store(
    h264_bframes: Path, index: VideoIndex, tmp_path: Path
) -> None:
    store_path = tmp_path / "x.frames"
    FrameStore.build(h264_bframes, index, store_path).close()
    with FrameSource(h264_bframes, index, store_path=store_path) as source:
        assert source.seekable_fast
        source.frame(60)
        for n in range(60, 40, -1):
            source.prefetch(n, -1, 5)
            assert source.wait_prefetch(timeout=30)
            assert n - 1 in source.cache
            source.frame(n - 1)


def test_ensure_store_builds_once_and_switches_to_it(
    h264_bframes: Path, index: VideoIndex, exact: np.ndarray, tmp_path: Path
) -> None:
    store_path = tmp_path / "x.frames"
    progress: list[int] = []
    with FrameSource(h264_bframes, index, store_path=store_path) as source:
        assert np.array_equal(source.frame(7), exact[7])  # exact while the store is missing
        source.ensure_store(progress=lambda done, total: progress.append(done))
        assert source.seekable_fast and store_path.exists()
        assert progress[-1] == index.frame_count
        source.ensure_store(progress=lambda done, total: progress.append(-1))
        assert -1 not in progress  # already built: nothing to do
        image = source.frame(8)
        assert np.abs(image.astype(np.int16) - exact[8]).mean() < 6.0
    # A new source for the same video finds the store on disk.
    with FrameSource(h264_bframes, index, store_path=store_path) as again:
        assert again.seekable_fast


def test_a_store_of_another_crf_is_rebuilt(
    h264_bframes: Path, index: VideoIndex, tmp_path: Path
) -> None:
    store_path = tmp_path / "x.frames"
    FrameStore.build(h264_bframes, index, store_path, crf=30).close()
    with FrameSource(h264_bframes, index, store_path=store_path, store_crf=30) as same:
        assert same.seekable_fast
    with FrameSource(h264_bframes, index, store_path=store_path, store_crf=18) as source:
        assert not source.seekable_fast  # built with another quality: stale
        source.ensure_store()
        assert source.seekable_fast
    store = FrameStore.open(store_path, index)
    assert store is not None and store.crf == 18
    store.close()


def test_backward_prefetch_with_a_store_takes_the_nearest_gop_first(
    h264_bframes: Path, index: VideoIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The store decodes from a keyframe every 8 frames: backwards, the GOP the playhead is in
    # comes first, each GOP in ascending order, so each GOP costs one seek.
    store_path = tmp_path / "x.frames"
    FrameStore.build(h264_bframes, index, store_path).close()
    with FrameSource(h264_bframes, index, store_path=store_path) as source:
        plans: list[list[int]] = []
        monkeypatch.setattr(source._prefetcher, "submit", plans.append)
        source.prefetch(50, -1, 12)
    (plan,) = plans
    assert plan[:14] == [48, 49, 40, 41, 42, 43, 44, 45, 46, 47, 38, 39, 51, 52]


def test_frame_from_many_threads(h264_bframes: Path, index: VideoIndex, exact: np.ndarray) -> None:
    wrong: list[int] = []
    with FrameSource(h264_bframes, index, store_path=None, cache_bytes=2**20) as source:

        def worker(seed: int) -> None:
            for k in range(30):
                n = (seed * 31 + k * 17) % index.frame_count
                if not np.array_equal(source.frame(n), exact[n]):
                    wrong.append(n)
                source.prefetch(n, 1 if seed % 2 else -1, 3)

        threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert source.cache.peak_bytes <= 2**20
    assert wrong == []


def test_closed_source_refuses_frames(h264_bframes: Path, index: VideoIndex) -> None:
    source = FrameSource(h264_bframes, index, store_path=None)
    source.prefetch(10, 1, 5)
    source.close()
    with pytest.raises(ValueError):
        source.frame(0)
    with pytest.raises(IndexError):
        source.frame(index.frame_count)
