"""bench/episodes: interactive episodes per minute, and what the harness costs over the world.

Figures (one JSON object on stdout; progress on stderr):

- ``symbolic``: interactive episodes (rule-based user, oracle assistant, the shipped event
  schedules, fixed timing) per minute on one core over cheeseburger, cook-patty and prep-board
  × novice, balanced, expert, trace recorded in memory. ``benchmark_315_minutes`` extrapolates
  to the 315-episode benchmark (goal: under 10 minutes on 2 cores, i.e. ≤ 20 CPU-minutes).
- ``harness_overhead``: CPU time of the interactive episodes against the same worlds stepped
  bare through the same action sequence (the recorded actions replayed by the engine with
  recording off), as ``interactive / bare − 1`` (the issue's goal ≤ 10 %; the oracle and the
  rule user are part of what is measured, so this is an upper bound on the harness itself);
  ``harness_overhead_vs_traced_world`` against the same replay with the trace recorded.

    python bench/episodes.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.episode import EpisodeRunner, ReplayAgent, make_world, open_scenario
from sim.interact import run_interactive
from sim.users import PROFILES

CASES = [(s, p) for s in ("cheeseburger", "cook-patty", "prep-board")
         for p in ("novice", "balanced", "expert")]  # fmt: skip


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def symbolic(repeats: int) -> dict[str, Any]:
    cpu = ticks = episodes = 0.0
    bare_cpu = traced_cpu = 0.0
    for _ in range(repeats):
        for name, persona in CASES:
            bound = open_scenario(name)
            t0 = time.process_time()
            ep = run_interactive(bound=bound, persona=PROFILES[persona])
            cpu += time.process_time() - t0
            assert ep.runner.result is not None
            ticks += ep.runner.result.ticks
            episodes += 1
            decisions = [(a.tick, a.action) for a in ep.runner.actions]
            world = make_world(bound, "symbolic")
            bare = EpisodeRunner(world, bound, ReplayAgent(decisions, ep.runner.result.ticks),
                                 record=False, end_tick=ep.runner.result.ticks)  # fmt: skip
            t0 = time.process_time()
            bare.run()
            bare_cpu += time.process_time() - t0
            world = make_world(bound, "symbolic")
            traced = EpisodeRunner(world, bound, ReplayAgent(decisions, ep.runner.result.ticks),
                                   end_tick=ep.runner.result.ticks)  # fmt: skip
            t0 = time.process_time()
            traced.run()
            traced_cpu += time.process_time() - t0
    per_min = episodes / cpu * 60
    _log(f"symbolic: {episodes:.0f} episodes, {ticks:.0f} ticks, {cpu:.2f} CPU s")
    return {
        "episodes": int(episodes),
        "ticks": int(ticks),
        "cpu_s": round(cpu, 3),
        "episodes_per_cpu_minute": round(per_min, 1),
        "ticks_per_cpu_s": round(ticks / cpu),
        "benchmark_315_minutes_on_2_cores": round(315 / per_min / 2, 2),
        "harness_overhead": round(cpu / bare_cpu - 1, 3),
        "bare_ticks_per_cpu_s": round(ticks / bare_cpu),
        "harness_overhead_vs_traced_world": round(cpu / traced_cpu - 1, 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    print(json.dumps({"symbolic": symbolic(1 if args.quick else 3)}, indent=2))


if __name__ == "__main__":
    main()
