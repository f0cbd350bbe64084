"""bench/gui_episode.py --quick runs and reports its figures (no timing is asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "gui_episode.py"


@pytest.mark.slow
def test_quick_episode_bench_reports_its_figures() -> None:
    assert os.environ.get("DISPLAY")  # pytest-xvfb's display: the bench opens its window there
    run = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=900
    )
    assert run.returncode == 0, run.stderr[-4000:]
    out = json.loads(run.stdout)
    assert out["bench"] == "gui_episode" and out["episode_ticks"] > 0
    for key in ("seek_views", "seek_with_mujoco_frame", "timeline_100k_paint"):
        assert out[key]["n"] > 0 and out[key]["p95_ms"] > 0
    assert out["live"]["ticks"] > 0 and out["live"]["rtf"] is not None
    assert out["fork_seek_with_mujoco_frame"]["n"] > 0
    assert set(out["idle_cpu_share"]) == {"annotate", "judge", "results", "episode", "teleop"}
    assert out["session"]["rounds"] > 0 and out["session"]["rss_at_end_mb"] > 0
