"""bench/judge.py --quick runs and prints the promised figures for both judge profiles (the
lightest reply path and the realistic one); no timing is asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "judge.py"

SECTIONS = {
    "judge": {"task_subgoals_per_video", "inspections_per_video"},
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
        "codec_frames_decoded_per_video",
    },
}  # fmt: skip
HEADLINE = {
    "calls_per_video", "inspections_per_video", "frames_sent_per_video", "throughput_fraction",
    "ms_per_call", "frames_ms_per_video",
}  # fmt: skip


@pytest.fixture(scope="module")
def figures() -> dict[str, Any]:
    run = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=900
    )
    assert run.returncode == 0, run.stderr[-4000:]
    return dict(json.loads(run.stdout))


@pytest.mark.slow
def test_quick_bench_prints_its_figures(figures: dict[str, Any]) -> None:
    assert figures["bench"] == "judge"
    assert figures["clip"]["width"] == 854 and figures["clip"]["height"] == 480
    assert figures["clip"]["frames_in_clip_mean"] > 0
    assert set(figures["profiles"]) == set(figures["headline"]) == {"light", "realistic"}
    videos = figures["videos"]
    for name, profile in figures["profiles"].items():
        for section, keys in SECTIONS.items():
            assert profile[section].keys() >= keys, (name, section)
        assert figures["headline"][name].keys() >= HEADLINE, name
        assert profile["throughput"]["jobs"]["done"] == videos, name
        assert profile["throughput"]["jobs"]["failed"] == 0, name
        assert profile["overhead"]["jobs"]["done"] == profile["overhead"]["videos"], name
        assert profile["throughput"]["calls"] >= videos  # counted at the server
        assert profile["throughput"]["server_peak_in_flight"] >= 1
        frames = profile["frames"]
        assert 0 < frames["decoded_per_video"] <= frames["sent_per_video"], name
        assert profile["throughput"]["cost_usd"] > 0  # the profile's prices were applied


@pytest.mark.slow
def test_the_realistic_profile_plans_more_and_inspects(figures: dict[str, Any]) -> None:
    light, real = figures["profiles"]["light"], figures["profiles"]["realistic"]
    # the lightest path: two subgoals, no inspection, plans + 3 Task + 4 Physics gates
    assert light["judge"] == {"task_subgoals_per_video": 2.0, "inspections_per_video": 0.0}
    assert light["throughput"]["calls_per_video"] == 10
    # realistic: 3–5 subgoals in turn, an inspection at T3, P1 and P3 of every video
    assert 3 < real["judge"]["task_subgoals_per_video"] < 5
    assert real["judge"]["inspections_per_video"] == 3
    assert real["throughput"]["calls_per_video"] == 10 + 3
    # each inspection sends 12 more frames (the spec's default), decoded off the uniform grid
    assert real["frames"]["sent_per_video"] == light["frames"]["sent_per_video"] + 3 * 12
    assert real["frames"]["decoded_per_video"] > light["frames"]["decoded_per_video"]
    assert real["overhead"]["direct"]["inspect_frames_ms_per_video"] > 0
    assert light["overhead"]["direct"]["inspect_frames_ms_per_video"] == 0
