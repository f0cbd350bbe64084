"""bench/agreement.py --quick runs and prints the expected JSON keys (no timing asserts)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_bench_agreement_quick() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "agreement.py"), "--quick"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=300,
    )
    got = json.loads(out.stdout)
    for key in (
        "videos",
        "n_boot",
        "figures",
        "vectorised_s",
        "loop_s",
        "loop_replicates_timed",
        "loop_extrapolated",
        "loop_note",
        "speedup",
        "same_point_estimates",
        "same_replicates",
    ):
        assert key in got, key
    assert got["quick"] is True
    assert got["same_point_estimates"] is True and got["same_replicates"] is True
