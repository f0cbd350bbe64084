"""bench/video: frame-exact video access, against naive OpenCV seeking in the same run.

On a 60 s 854x480 H.264 clip with a 250-frame GOP and B-frames (10 s with --quick) measures:
indexing, random exact seeks without a seek cache (vs OpenCV ``CAP_PROP_POS_FRAMES``), building
the seek cache (FrameStore), random seeks through FrameSource once it is built, stepping +1 and
-1 the way a 30 fps player does (step, prefetch, wait a frame), the frame cache's peak bytes
against its bound, and the seek cache's size and fidelity (PSNR of RGB and of luma against
exact frames; JPEG halves the colour planes, so luma is the fairer figure for detail).
Prints one JSON object to stdout; progress goes to stderr. Goals: store seek p95 <= 20 ms,
step p95 <= 5 ms.

    python bench/video.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _clips import BFRAMES, GOP, make_clip

from storage.media import FrameReader, FrameSource, FrameStore, VideoIndex, index_video

PLAYER_TICK_S = 1 / 30  # what a 30 fps player waits between steps
PREFETCH_COUNT = 30
CACHE_BYTES = 256 * 2**20


def log(msg: str) -> None:
    print(f"[bench/video] {msg}", file=sys.stderr, flush=True)


def timed_ms(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def pct(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 2)


def opencv_seeks(clip: Path, frames: list[int]) -> tuple[list[float], list[np.ndarray]]:
    """The naive baseline: set CAP_PROP_POS_FRAMES, then read; times and the frames it gave."""
    import cv2

    cap = cv2.VideoCapture(str(clip))
    times, images = [], []
    for n in frames:
        t0 = time.perf_counter()
        cap.set(cv2.CAP_PROP_POS_FRAMES, n)
        ok, bgr = cap.read()
        times.append((time.perf_counter() - t0) * 1000)
        images.append(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB) if ok else None)
    cap.release()
    return times, images


def same_frame(a: np.ndarray | None, b: np.ndarray) -> bool:
    """Whether two decodes show the same frame (colour conversions may differ by a few LSB)."""
    return a is not None and a.shape == b.shape and float(np.abs(a - b.astype(int)).mean()) < 2


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return 99.0 if mse == 0 else 10 * np.log10(255.0**2 / mse)


def luma(rgb: np.ndarray) -> np.ndarray:
    """BT.601 luma: JPEG keeps it at full resolution while it halves the colour planes."""
    return rgb.astype(np.float64) @ np.array([0.299, 0.587, 0.114])


def steps(source: FrameSource, start: int, direction: int, count: int) -> list[float]:
    """Step `count` frames from `start` like a player: show, prefetch, wait for the next tick."""
    source.frame(start)
    source.prefetch(start, direction, PREFETCH_COUNT)
    times = []
    i = start
    for _ in range(count):
        time.sleep(PLAYER_TICK_S)
        i += direction
        times.append(timed_ms(lambda i=i: source.frame(i)))
        source.prefetch(i, direction, PREFETCH_COUNT)
    return times


def step_figures(source: FrameSource, index: VideoIndex, count: int, prefix: str) -> dict[str, Any]:
    mid = index.frame_count // 2
    fwd = steps(source, mid, +1, count)
    source.cache.clear()
    back = steps(source, mid, -1, count)
    return {
        f"{prefix}forward_p50_ms": pct(fwd, 50),
        f"{prefix}forward_p95_ms": pct(fwd, 95),
        f"{prefix}backward_p50_ms": pct(back, 50),
        f"{prefix}backward_p95_ms": pct(back, 95),
    }


def run(quick: bool) -> dict[str, Any]:
    seconds = 10 if quick else 60
    n_seeks = 10 if quick else 100
    n_steps = 20 if quick else 150
    clip = make_clip(seconds)
    log(f"clip {clip.name}")
    import av  # noqa: F401  # load FFmpeg before timing, as a running app already has

    index_ms = timed_ms(lambda: index_video(clip))
    index = index_video(clip)
    frames = random.Random(1234).sample(range(index.frame_count), n_seeks)

    log(f"baseline: {n_seeks} OpenCV random seeks")
    base_ms, base_images = opencv_seeks(clip, frames)

    log(f"exact: {n_seeks} FrameReader random seeks, no seek cache")
    exact_ms, exact_images = [], []
    with FrameReader(clip, index) as reader:
        for n in frames:
            t0 = time.perf_counter()
            exact_images.append(reader.read(n))
            exact_ms.append((time.perf_counter() - t0) * 1000)
    opencv_wrong = sum(not same_frame(b, e) for b, e in zip(base_images, exact_images, strict=True))

    figures: dict[str, Any] = {
        "clip": {
            "seconds": seconds,
            "width": index.width,
            "height": index.height,
            "fps": round(index.fps, 3),
            "frames": index.frame_count,
            "gop": GOP,
            "bframes": BFRAMES,
            "file_mb": round(clip.stat().st_size / 2**20, 2),
        },
        "cpu_count": os.cpu_count(),
        "seek_samples": n_seeks,
        "index_ms": round(index_ms, 2),
        "baseline_opencv_seek_p50_ms": pct(base_ms, 50),
        "baseline_opencv_seek_p95_ms": pct(base_ms, 95),
        "baseline_opencv_wrong_frames": opencv_wrong,
        "exact_seek_p50_ms": pct(exact_ms, 50),
        "exact_seek_p95_ms": pct(exact_ms, 95),
        "exact_seek_p50_vs_baseline": round(pct(exact_ms, 50) / pct(base_ms, 50), 3),
        "exact_seek_p95_vs_baseline": round(pct(exact_ms, 95) / pct(base_ms, 95), 3),
    }

    with tempfile.TemporaryDirectory(dir=clip.parent) as tmp:
        store_path = Path(tmp) / "clip.frames"
        log(f"exact stepping without a seek cache, {n_steps} steps each way")
        with FrameSource(clip, index, store_path=None, cache_bytes=CACHE_BYTES) as source:
            figures |= step_figures(source, index, n_steps, "exact_step_")

        log("building the seek cache")
        t0 = time.perf_counter()
        store = FrameStore.build(clip, index, store_path)
        build_s = time.perf_counter() - t0
        stored = [store.read(n) for n in frames]
        store.close()
        fidelity = [psnr(s, e) for s, e in zip(stored, exact_images, strict=True)]
        luma_fidelity = [psnr(luma(s), luma(e)) for s, e in zip(stored, exact_images, strict=True)]
        figures |= {
            "store_build_s": round(build_s, 2),
            "time_until_seekable_s": round(build_s + index_ms / 1000, 2),
            "store_mb": round(store_path.stat().st_size / 2**20, 2),
            "store_psnr_mean_db": round(float(np.mean(fidelity)), 2),
            "store_psnr_min_db": round(float(np.min(fidelity)), 2),
            "store_luma_psnr_mean_db": round(float(np.mean(luma_fidelity)), 2),
        }

        log(f"seek cache: {n_seeks} random seeks and {n_steps} steps each way")
        with FrameSource(clip, index, store_path=store_path, cache_bytes=CACHE_BYTES) as source:
            assert source.seekable_fast
            store_ms = [timed_ms(lambda n=n: source.frame(n)) for n in frames]
            figures |= {
                "store_seek_p50_ms": pct(store_ms, 50),
                "store_seek_p95_ms": pct(store_ms, 95),
            }
            figures |= step_figures(source, index, n_steps, "step_")
            figures |= {
                "cache_peak_bytes": source.cache.peak_bytes,
                "cache_bound_bytes": source.cache.max_bytes,
            }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 s clip, fewer samples")
    args = parser.parse_args()
    print(json.dumps(run(args.quick), indent=2))


if __name__ == "__main__":
    main()
