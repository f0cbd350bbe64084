"""bench/judge.py --quick runs and prints the promised figures (no timing is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "judge.py"

SECTIONS = {
    "throughput": {
        "jobs", "calls", "calls_per_video", "wall_s", "ideal_s", "throughput_fraction",
        "server_peak_in_flight", "job_s_mean", "call_s_mean", "outside_calls_s_per_job",
        "cpu_s", "cost_usd",
    },
    "overhead": {
        "jobs", "calls", "wall_s", "ms_per_call", "frames_ms_per_call", "db_ms_per_call",
        "client_http_other_ms_per_call", "direct",
    },
    "frames": {
        "decoded_per_video", "sent_per_video", "decoded_per_sent",
        "codec_frames_decoded_per_video", "frames_in_clip_mean",
    },
}  # fmt: skip


@pytest.mark.slow
def test_quick_bench_prints_its_figures() -> None:
    run = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-4000:]
    figures = json.loads(run.stdout)
    assert figures["bench"] == "judge"
    assert figures["clip"]["width"] == 854 and figures["clip"]["height"] == 480
    for section, keys in SECTIONS.items():
        assert figures[section].keys() >= keys, section
    videos = figures["videos"]
    assert figures["throughput"]["jobs"]["done"] == videos
    assert figures["throughput"]["jobs"]["failed"] == 0
    assert figures["overhead"]["jobs"]["done"] == figures["overhead"]["videos"]
    assert figures["throughput"]["calls"] >= videos  # counted at the server
    assert figures["throughput"]["server_peak_in_flight"] >= 1
    assert 0 < figures["frames"]["decoded_per_video"] <= figures["frames"]["sent_per_video"]
    assert figures["throughput"]["cost_usd"] > 0  # the profile's prices were applied
