"""FrameCache: LRU order and a byte bound that is never exceeded, even under threads."""

from __future__ import annotations

import random
import threading

import numpy as np

from storage.media import FrameCache


def frame(nbytes: int) -> np.ndarray:
    return np.zeros(nbytes, dtype=np.uint8)


def test_peak_never_exceeds_bound() -> None:
    cache = FrameCache(max_bytes=10_000)
    rng = random.Random(5)
    for _ in range(2_000):
        cache.put(rng.randrange(50), frame(rng.randrange(1, 3_000)))
        assert cache.current_bytes <= 10_000
    assert 0 < cache.peak_bytes <= 10_000


def test_peak_never_exceeds_bound_with_threads() -> None:
    cache = FrameCache(max_bytes=50_000)

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(2_000):
            key = rng.randrange(100)
            if rng.random() < 0.5:
                cache.put(key, frame(rng.randrange(1, 5_000)))
            else:
                cache.get(key)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.peak_bytes <= 50_000
    assert cache.current_bytes == sum(
        a.nbytes for a in (cache.get(k) for k in range(100)) if a is not None
    )


def test_least_recently_used_goes_first() -> None:
    cache = FrameCache(max_bytes=300)
    for key in "abc":
        cache.put(key, frame(100))
    assert cache.get("a") is not None  # now "b" is the least recently used
    cache.put("d", frame(100))
    assert [k in cache for k in "abcd"] == [True, False, True, True]


def test_replacing_a_key_updates_bytes() -> None:
    cache = FrameCache(max_bytes=1_000)
    cache.put(1, frame(400))
    cache.put(1, frame(100))
    assert cache.current_bytes == 100
    assert len(cache) == 1


def test_frame_larger_than_bound_is_not_cached() -> None:
    cache = FrameCache(max_bytes=100)
    cache.put(1, frame(50))
    cache.put(2, frame(101))
    assert 2 not in cache and 1 in cache
    assert cache.peak_bytes == 50


def test_clear_keeps_peak() -> None:
    cache = FrameCache(max_bytes=1_000)
    cache.put(1, frame(600))
    cache.clear()
    assert (cache.current_bytes, cache.peak_bytes, len(cache)) == (0, 600, 0)
    assert cache.get(1) is None
