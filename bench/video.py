"""bench/video: frame-exact video access and the seek cache, against naive OpenCV seeking.

The clip is 60 s (10 s with --quick) of 854x480 30 fps H.264 with a 250-frame GOP and B-frames,
showing a handheld camera over a cluttered, textured scene (bench/_scene.py), so the seek
cache's size is that of real footage: test patterns compress to nothing, per-pixel noise barely
at all. Measures: indexing, random exact seeks without a seek cache (vs OpenCV
``CAP_PROP_POS_FRAMES``), building the seek cache (FrameStore, an H.264 proxy), its size in MB
per minute, random seeks through FrameSource once it is built, stepping +1 and -1 the way a
30 fps player does (step, prefetch, wait a frame), the frame cache's peak bytes against its
bound, and the cache's fidelity (PSNR of RGB and of luma against exact frames).

The same cache is also built on the worst case for its size (``noise_clip`` in the output: the
480p test pattern under heavy per-pixel noise of bench/_clips.py).

``--compare`` adds the seek-cache formats considered (JPEG per frame, the former format, and
H.264 proxies from all-intra to 16-frame GOPs at two CRFs), each with MB per minute, random
seek and next-frame times read straight from the cache (no prefetch), build time and PSNR.

Prints one JSON object to stdout; progress goes to stderr. Goals: cache <= 60 MB per minute of
480p, store seek p95 <= 20 ms, step p95 <= 5 ms.

    python bench/video.py [--quick] [--compare]
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
from _clips import BFRAMES, GOP, make_clip, scene_clip

from storage.media import FrameReader, FrameSource, FrameStore, VideoIndex, index_video

PLAYER_TICK_S = 1 / 30  # what a 30 fps player waits between steps
PREFETCH_COUNT = 30
CACHE_BYTES = 256 * 2**20
# The proxies --compare measures: (gop, crf). The default (first) is what FrameStore builds.
PROXIES = [(8, 20), (1, 20), (1, 26), (4, 20), (16, 20), (8, 23), (16, 23)]
JPEG_QUALITIES = [95, 75, 50]


def log(msg: str) -> None:
    print(f"[bench/video] {msg}", file=sys.stderr, flush=True)


def timed_ms(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def pct(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 2)


def mb_per_minute(size_bytes: int, index: VideoIndex) -> float:
    return round(size_bytes / 2**20 / (index.duration_s / 60), 1)


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
    """BT.601 luma, the plane that carries detail (chroma is subsampled in every format here)."""
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


def raw_reads(read: Callable[[int], np.ndarray], seeks: list[int], mid: int, n_steps: int) -> Any:
    """Random-seek and next-frame times of a cache read directly (no frame cache, no prefetch)."""
    seek_ms = [timed_ms(lambda n=n: read(n)) for n in seeks]  # each far from the one before
    read(mid)
    step_ms = [timed_ms(lambda i=i: read(i)) for i in range(mid + 1, mid + 1 + n_steps)]
    return seek_ms, step_ms


def fidelity(images: list[np.ndarray], exact: list[np.ndarray]) -> dict[str, float]:
    rgb = [psnr(s, e) for s, e in zip(images, exact, strict=True)]
    y = [psnr(luma(s), luma(e)) for s, e in zip(images, exact, strict=True)]
    return {
        "psnr_mean_db": round(float(np.mean(rgb)), 2),
        "psnr_min_db": round(float(np.min(rgb)), 2),
        "luma_psnr_mean_db": round(float(np.mean(y)), 2),
    }


def compare_proxies(
    clip: Path, index: VideoIndex, tmp: Path, seeks: list[int], exact: list[np.ndarray]
) -> list[dict[str, Any]]:
    rows = []
    mid, n_steps = index.frame_count // 2, min(150, index.frame_count // 3)
    for gop, crf in PROXIES:
        log(f"compare: H.264 proxy, GOP {gop}, CRF {crf}")
        path = tmp / f"gop{gop}_crf{crf}.frames"
        t0 = time.perf_counter()
        store = FrameStore.build(clip, index, path, crf=crf, gop=gop)
        build_s = time.perf_counter() - t0
        seek_ms, step_ms = raw_reads(store.read, seeks, mid, n_steps)
        images = [store.read(n) for n in seeks]
        store.close()
        rows.append({
            "format": f"h264 gop{gop} crf{crf}" + (" (chosen)" if (gop, crf) == PROXIES[0] else ""),
            "mb_per_min": mb_per_minute(path.stat().st_size, index),
            "seek_p50_ms": pct(seek_ms, 50), "seek_p95_ms": pct(seek_ms, 95),
            "next_frame_p95_ms": pct(step_ms, 95), "build_s": round(build_s, 2),
            **fidelity(images, exact),
        })  # fmt: skip
        path.unlink()
    return rows + compare_jpeg(clip, index, seeks, exact, mid, n_steps)


def compare_jpeg(
    clip: Path,
    index: VideoIndex,
    seeks: list[int],
    exact: list[np.ndarray],
    mid: int,
    n_steps: int,
) -> list[dict[str, Any]]:
    """One JPEG per frame (OpenCV, 4:2:0), kept in memory: the former seek cache's format.
    Each frame is decoded once and encoded at every quality as it goes (decoded frames are not
    kept: a minute of 480p is 2 GB of them); build_s counts the encoding only."""
    import cv2

    blobs_by_q: dict[int, list[bytes]] = {q: [] for q in JPEG_QUALITIES}
    encode_s = dict.fromkeys(JPEG_QUALITIES, 0.0)
    with FrameReader(clip, index) as reader:
        for n in range(index.frame_count):
            bgr = cv2.cvtColor(reader.read(n), cv2.COLOR_RGB2BGR)
            for q in JPEG_QUALITIES:
                t0 = time.perf_counter()
                blob = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, q])[1].tobytes()
                encode_s[q] += time.perf_counter() - t0
                blobs_by_q[q].append(blob)
    rows = []
    for q in JPEG_QUALITIES:
        log(f"compare: JPEG q{q} per frame")
        blobs, build_s = blobs_by_q[q], encode_s[q]

        def read(i: int, blobs: list[bytes] = blobs) -> np.ndarray:
            image = cv2.imdecode(np.frombuffer(blobs[i], np.uint8), cv2.IMREAD_COLOR)
            return cv2.cvtColor(image, cv2.COLOR_BGR2RGB)

        seek_ms, step_ms = raw_reads(read, seeks, mid, n_steps)
        rows.append({
            "format": f"jpeg q{q}" + (" (former)" if q == 95 else ""),
            "mb_per_min": mb_per_minute(sum(map(len, blobs)), index),
            "seek_p50_ms": pct(seek_ms, 50), "seek_p95_ms": pct(seek_ms, 95),
            "next_frame_p95_ms": pct(step_ms, 95), "build_s": round(build_s, 2),
            "build_note": "encode only, frames already decoded",
            **fidelity([read(n) for n in seeks], exact),
        })  # fmt: skip
    return rows


def noise_clip_figures(seconds: int, n_seeks: int, tmp: Path) -> dict[str, Any]:
    """The chosen cache on per-pixel noise, the worst case for its size (its bit-rate cap)."""
    clip = make_clip(seconds)
    index = index_video(clip)
    frames = random.Random(99).sample(range(index.frame_count), n_seeks)
    path = tmp / "noise.frames"
    t0 = time.perf_counter()
    FrameStore.build(clip, index, path).close()
    build_s = time.perf_counter() - t0
    with FrameSource(clip, index, store_path=path, cache_bytes=CACHE_BYTES) as source:
        seek_ms = [timed_ms(lambda n=n: source.frame(n)) for n in frames]
        stored = [np.asarray(source.frame(n)) for n in frames]
    with FrameReader(clip, index) as reader:
        exact = [reader.read(n) for n in frames]
    return {
        "clip": "testsrc2 + temporal noise (bench/_clips.py), 854x480, GOP 250",
        "clip_mb_per_min": mb_per_minute(clip.stat().st_size, index),
        "store_mb_per_min": mb_per_minute(path.stat().st_size, index),
        "store_build_s": round(build_s, 2),
        "store_seek_p50_ms": pct(seek_ms, 50),
        "store_seek_p95_ms": pct(seek_ms, 95),
        **{f"store_{k}": v for k, v in fidelity(stored, exact).items()},
    }


def run(quick: bool, compare: bool) -> dict[str, Any]:
    seconds = 10 if quick else 60
    n_seeks = 10 if quick else 100
    n_steps = 20 if quick else 150
    log("making the clip (cached in bench/out)")
    clip = scene_clip(seconds)
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
            "content": "handheld camera over a textured scene (bench/_scene.py)",
            "seconds": seconds,
            "width": index.width,
            "height": index.height,
            "fps": round(index.fps, 3),
            "frames": index.frame_count,
            "gop": GOP,
            "bframes": BFRAMES,
            "file_mb": round(clip.stat().st_size / 2**20, 2),
            "mb_per_min": mb_per_minute(clip.stat().st_size, index),
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

    with tempfile.TemporaryDirectory(dir=clip.parent) as tmp_name:
        tmp = Path(tmp_name)
        store_path = tmp / "clip.frames"
        log(f"exact stepping without a seek cache, {n_steps} steps each way")
        with FrameSource(clip, index, store_path=None, cache_bytes=CACHE_BYTES) as source:
            figures |= step_figures(source, index, n_steps, "exact_step_")

        log("building the seek cache")
        t0 = time.perf_counter()
        store = FrameStore.build(clip, index, store_path)
        build_s = time.perf_counter() - t0
        stored = [store.read(n) for n in frames]
        figures["store_format"] = {"codec": "h264", "gop": store.gop, "crf": store.crf}
        store.close()
        quality = fidelity(stored, exact_images)
        size = store_path.stat().st_size
        figures |= {
            "store_build_s": round(build_s, 2),
            "time_until_seekable_s": round(build_s + index_ms / 1000, 2),
            "store_mb": round(size / 2**20, 2),
            "store_mb_per_min": mb_per_minute(size, index),
            "store_psnr_mean_db": quality["psnr_mean_db"],
            "store_psnr_min_db": quality["psnr_min_db"],
            "store_luma_psnr_mean_db": quality["luma_psnr_mean_db"],
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

        log("the seek cache on the noisy test pattern (worst case for its size)")
        figures["noise_clip"] = noise_clip_figures(seconds, n_seeks, tmp)
        if compare:
            figures["compare"] = compare_proxies(clip, index, tmp, frames, exact_images)
    figures["goals"] = {
        "store_mb_per_min <= 60": figures["store_mb_per_min"] <= 60,
        "store_seek_p95_ms <= 20": figures["store_seek_p95_ms"] <= 20,
        "step_forward_p95_ms <= 5": figures["step_forward_p95_ms"] <= 5,
    }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 s clip, fewer samples")
    parser.add_argument("--compare", action="store_true", help="also measure other cache formats")
    args = parser.parse_args()
    print(json.dumps(run(args.quick, args.compare), indent=2))


if __name__ == "__main__":
    main()
