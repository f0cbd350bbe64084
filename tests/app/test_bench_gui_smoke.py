"""bench/gui.py --quick runs and reports stalls both while the seek cache builds and after
(no timing is asserted: the figures depend on the machine)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "gui.py"
ACTIONS = ("play_1x", "scrub", "step_fwd", "step_back")


@pytest.mark.slow
def test_quick_gui_bench_reports_the_build_phase() -> None:
    # pytest-xvfb has set DISPLAY for this process: the bench opens its window there.
    assert os.environ.get("DISPLAY")
    run = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=900
    )
    assert run.returncode == 0, run.stderr[-4000:]
    figures = json.loads(run.stdout)
    assert figures["bench"] == "gui" and figures["seek_cache_built"] is True
    assert figures["seek_cache_build_s"] > 0 and figures["open_project_ms"] > 0
    for phase in ("build", "ready"):
        for q in ("p50", "p95", "max"):
            assert isinstance(figures[f"{phase}_stall_{q}_ms"], float), (phase, q)
        assert figures[phase]["beats"] > 0
        # every action was measured in both phases: while building, each had its turn
        for a in ACTIONS:
            got = figures["phases"][f"{phase}/{a}"]
            assert got["beats"] > 0 and got["seconds"] > 0, (phase, a)
            assert got["frames_shown_per_s"] >= 0
    # once the cache is built, playing and scrubbing show frames (a dropped-everything bug,
    # e.g. in the bridge's cancelling of superseded requests, would show none)
    for a in ("play_1x", "scrub", "step_fwd"):
        assert figures["phases"][f"ready/{a}"]["frames_shown_per_s"] > 0, a
