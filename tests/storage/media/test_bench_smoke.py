"""bench/video.py --quick runs and prints the promised figures (no timing is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench" / "video.py"

KEYS = {
    "clip", "index_ms",
    "baseline_opencv_seek_p50_ms", "baseline_opencv_seek_p95_ms", "baseline_opencv_wrong_frames",
    "exact_seek_p50_ms", "exact_seek_p95_ms",
    "exact_seek_p50_vs_baseline", "exact_seek_p95_vs_baseline",
    "store_build_s", "time_until_seekable_s", "store_seek_p50_ms", "store_seek_p95_ms",
    "step_forward_p95_ms", "step_backward_p95_ms",
    "exact_step_forward_p95_ms", "exact_step_backward_p95_ms",
    "cache_peak_bytes", "cache_bound_bytes",
    "store_mb", "store_mb_per_min", "store_format", "store_psnr_mean_db", "store_psnr_min_db",
    "noise_clip", "goals",
}  # fmt: skip


@pytest.mark.slow
def test_quick_bench_prints_its_figures() -> None:
    run = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr
    figures = json.loads(run.stdout)
    assert figures.keys() >= KEYS
    assert figures["clip"]["frames"] == 300
    assert figures["cache_peak_bytes"] <= figures["cache_bound_bytes"]
    assert figures["store_format"]["codec"] == "h264"
    assert figures["noise_clip"].keys() >= {"store_mb_per_min", "store_seek_p95_ms"}
