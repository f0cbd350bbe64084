"""bench/sim_pick: pick-and-place success of the arm controller on random check-table layouts.

Each trial composes the arm into ``resources/sim/scenes/check_table.xml`` with its three boxes
at random sizes (3-6 cm sides, 3-8 cm tall), positions and yaws (centres at least 8 cm apart),
picks box_a with a real friction grasp and places it on a random free target. A trial succeeds
when both skills report "ok" and physics agrees: the box's bottom centre within 2 cm of the
target, upright, on the table, and nothing left in the gripper. Also reports where the time
goes: microseconds per controller step against one ``mj_step`` (the controller runs once every
5 physics steps, 10 ms). Goal: rate >= 0.98 for wb6.

    python bench/sim_pick.py [--arm wb6|lab7] [--n 200] [--seed 0]

Prints one JSON object on stdout; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

# The repository first: this folder holds bench/sim.py, which would shadow the `sim` package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from sim.mujoco import CONTROL_STEPS, LAB7, WB6, ArmSpec, pick_place_trial, random_layout

ARMS = {"wb6": WB6, "lab7": LAB7}
GOAL = 0.98


def pick_place_success(arm: ArmSpec = WB6, n: int = 200, seed: int = 0) -> dict[str, Any]:
    """Run ``n`` seeded trials (layout i uses seed ``seed + i``); success rate and timings."""
    start = time.perf_counter()
    ok, failures = 0, []
    steps, ctl_s, phys_s, sim_s = 0, 0.0, 0.0, 0.0
    for i in range(n):
        result = pick_place_trial(arm, random_layout(np.random.default_rng(seed + i)))
        ok += result.ok
        if not result.ok:
            failures.append(f"seed {seed + i}: {result.reason}")
            print(failures[-1], file=sys.stderr, flush=True)
        steps += result.control_steps
        ctl_s += result.controller_wall
        phys_s += result.physics_wall
        sim_s += result.sim_seconds
    seconds = time.perf_counter() - start
    reasons = Counter(f.split(": ", 1)[1] for f in failures)
    return {
        "bench": "sim_pick",
        "arm": arm.mjcf.name,
        "trials": n,
        "succeeded": ok,
        "rate": ok / n if n else 0.0,
        "goal": GOAL,
        "goal_met": n > 0 and ok / n >= GOAL,
        "failures": failures,
        "failure_kinds": dict(reasons),
        "seconds": round(seconds, 2),
        "seconds_per_trial": round(seconds / n, 3) if n else 0.0,
        "sim_seconds_per_trial": round(sim_s / n, 2) if n else 0.0,
        "control_steps": steps,
        "controller_us_per_step": round(1e6 * ctl_s / steps, 1) if steps else 0.0,
        "mj_step_us": round(1e6 * phys_s / (steps * CONTROL_STEPS), 1) if steps else 0.0,
        "physics_steps_per_control_step": CONTROL_STEPS,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arm", choices=sorted(ARMS), default="wb6")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(json.dumps(pick_place_success(ARMS[args.arm], args.n, args.seed), indent=2))


if __name__ == "__main__":
    main()
