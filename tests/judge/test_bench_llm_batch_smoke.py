"""bench/llm_batch.py runs a small LLM batch end to end and prints its figures; no timing is
asserted, only that every planned episode was stored and every call it made is on record."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "llm_batch.py"


def test_llm_batch_bench_smoke() -> None:
    run = subprocess.run(
        [sys.executable, str(BENCH), "--episodes", "3", "--latency", "0", "--concurrency", "2"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    out = json.loads(run.stdout)
    assert (out["episodes"], out["stored"], out["done"], out["failed"]) == (3, 3, 3, 0)
    assert out["calls"] > 0 and out["assistant_exchanges_stored"] == out["calls"]
    assert {"wall_s", "ideal_s", "throughput_of_ideal", "peak_in_flight"} <= set(out)
