"""bench/arms: `sim check` wall time and pick-and-place success for every arm we know.

Arms: the shipped wb6 and lab7, and the four third-party-style test arms in
``tests/sim/mujoco/arms`` (a gripper on an unactuated linkage tied by equality constraints,
mesh fingers whose bounding boxes overstate the gap, a zero pose outside a joint's range with a
``home`` keyframe, unlimited joints). For each: the wall time of ``check_arm`` with 3 trials
(goal ≤ 15 s on this machine), and the success rate over seeded pick-and-place trials on the
check table (goal ≥ 98 % over 200). Trials run on two processes (the machine has two cores).
Then, for wb6 and lab7 on every shipped scenario, the `sim check --scenarios` prediction (can
the arm do the reference?) against an actual physics run of the reference: they must agree.

    python bench/arms.py [--n 200 | --quick] [--arms wb6,lab7,...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository first: bench/sim.py would shadow `sim`

TEST_ARMS = ROOT / "tests" / "sim" / "mujoco" / "arms"
GOAL_RATE, GOAL_CHECK_S = 0.98, 15.0


def specs() -> dict[str, Any]:
    from sim.mujoco import LAB7, WB6, ArmSpec

    six = tuple(f"j{i}" for i in range(1, 7))
    return {
        "wb6": WB6,
        "lab7": LAB7,
        "linkage": ArmSpec(TEST_ARMS / "linkage_gripper.xml", "lk_tcp", six, ("lk_grip",)),
        "mesh": ArmSpec(
            TEST_ARMS / "mesh_gripper.xml",
            "mg_tcp",
            tuple(f"joint{i}" for i in range(1, 7)),
            ("mg_grip",),
        ),
        "zero_outside": ArmSpec(
            TEST_ARMS / "zero_outside.xml",
            "tool_tip",
            ("j_yaw", "j_shoulder", "j_elbow", "j_roll", "j_pitch", "j_flange"),
            ("m_jaw_a", "m_jaw_b"),
        ),
        "unlimited": ArmSpec(
            TEST_ARMS / "unlimited.xml",
            "grasp_point",
            ("base", "shoulder", "elbow", "forearm_roll", "wrist_pitch", "wrist_turn"),
            ("a_grip",),
        ),
    }


def _trials(name: str, seeds: list[int]) -> list[tuple[int, bool, str]]:
    import numpy as np

    from sim.mujoco import pick_place_trial, random_layout

    spec = specs()[name]
    out = []
    for s in seeds:
        r = pick_place_trial(spec, random_layout(np.random.default_rng(s)))
        out.append((s, r.ok, r.reason))
    return out


def _check(name: str) -> dict[str, Any]:
    from sim.mujoco import check_arm

    start = time.perf_counter()
    report = check_arm(specs()[name], trials=3)
    seconds = time.perf_counter() - start
    return {"check_s": round(seconds, 2), "check_ok": report.ok,
            "check_messages": report.messages}  # fmt: skip


def scenario_table(arm: str) -> list[dict[str, Any]]:
    """The capability table's prediction against a physics run of each scenario's reference."""
    from sim.episode import capability_table, open_scenario, open_scenarios, run_episode

    rows = []
    for cap in capability_table(specs()[arm], open_scenarios(["all"])).rows:
        ep = run_episode(open_scenario(cap.scenario), mode="physics", arm=arm)
        result = ep.runner.result
        assert result is not None
        rows.append({"scenario": cap.scenario, "predicted": cap.can, "why": cap.why,
                     "ran": result.success, "agree": cap.can == result.success})  # fmt: skip
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200, help="pick-and-place trials per arm")
    ap.add_argument("--arms", default=",".join(specs()), help="comma-separated arm names")
    ap.add_argument("--quick", action="store_true", help="20 trials per arm")
    args = ap.parse_args()
    if args.quick:
        args.n = 20
    names = [a.strip() for a in args.arms.split(",") if a.strip()]
    out: dict[str, Any] = {"bench": "arms", "trials_per_arm": args.n,
                           "goals": {"check_s": GOAL_CHECK_S, "rate": GOAL_RATE}}  # fmt: skip
    arms: dict[str, Any] = {}
    for name in names:  # the check alone, so its wall time is not shared with trials
        arms[name] = _check(name)
        print(name, json.dumps(arms[name]), file=sys.stderr, flush=True)
    with ProcessPoolExecutor(max_workers=2) as pool:
        jobs = {
            name: [pool.submit(_trials, name, list(range(k, args.n, 2))) for k in (0, 1)]
            for name in names
        }
        for name, futs in jobs.items():
            results = sorted(r for f in futs for r in f.result())
            ok = sum(1 for _, good, _ in results if good)
            arms[name] |= {
                "succeeded": ok,
                "rate": round(ok / len(results), 3) if results else 0.0,
                "failures": [f"seed {s}: {why}" for s, good, why in results if not good][:10],
            }
            print(name, ok, "/", len(results), file=sys.stderr, flush=True)
    out["arms"] = arms
    table = {arm: scenario_table(arm) for arm in ("wb6", "lab7")}
    out["scenario_table"] = {
        arm: {
            "agree": sum(r["agree"] for r in rows),
            "of": len(rows),
            "can": [r["scenario"] for r in rows if r["predicted"]],
            "cannot": {r["scenario"]: r["why"] for r in rows if not r["predicted"]},
            "disagree": [r for r in rows if not r["agree"]],
        }
        for arm, rows in table.items()
    }
    out["goals_met"] = {
        name: a["check_s"] <= GOAL_CHECK_S and a.get("rate", 0.0) >= GOAL_RATE
        for name, a in arms.items()
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
