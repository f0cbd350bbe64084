"""bench/teleop: the teleoperation loop's cost, recording overhead, command-to-frame latency,
and export throughput.

- **control step**: wall time of one teleop step (a world tick under a velocity command,
  through the IK) with the recorder off, and with it on (joint state, end-effector pose,
  MuJoCo state and scene graph sampled each step), and with a 320×240 camera recorded too;
  the overheads are ratios against the bare step in the same run;
- **command to frame**: from a command changing (what a key press does) to a rendered 640×480
  frame that shows the arm moved, with the loop stepping at the scenarios' 0.1 s tick (with
  and without shadows; the teleop view draws none) and at 0.02 s: the loop picks the command
  up at its next step boundary (waiting on average half a step at the paced rate), runs the
  tick, and a render thread restores the published snapshot and draws it (goal p95 ≤ 50 ms
  with software GL; the GUI adds its paint on top). The last row is the teleop view's own
  setting: 0.02 s, no shadows, no multisampling — a frame then draws faster than a step, so
  a new step never waits behind a frame in flight;
- **export**: frames per second exporting a 300-step demonstration with one 320×240 camera to
  LeRobotDataset v3 and to robomimic HDF5.

    python bench/teleop.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/sim.py would shadow sim


def stats(v: list[float]) -> dict[str, Any]:
    a = np.array(v, float) * 1000
    return {"n": len(a), "p50_ms": round(float(np.percentile(a, 50)), 2),
            "p95_ms": round(float(np.percentile(a, 95)), 2),
            "max_ms": round(float(a.max()), 2)}  # fmt: skip


def control_steps(n: int) -> dict[str, Any]:
    from sim.episode import open_scenario
    from sim.teleop import Command, Recorder

    bound = open_scenario("stack-two")
    out: dict[str, Any] = {}
    for label, cameras, recording in (("bare", (), False), ("recording", (), True),
                                      ("recording_camera", ("front",), True)):  # fmt: skip
        rec = Recorder(bound, "wb6", cameras=cameras, size=(320, 240))
        if recording:
            rec.start()
        times = []
        for k in range(n):
            cmd = Command(linear=(0.05 * np.cos(k / 10), 0.05 * np.sin(k / 10), 0.0))
            start = time.perf_counter()
            rec.step(cmd)
            times.append(time.perf_counter() - start)
        rec.close()
        out[label] = stats(times)
    bare = out["bare"]["p50_ms"]
    out["recording_over_bare_p50"] = round(out["recording"]["p50_ms"] / bare, 2)
    out["camera_over_bare_p50"] = round(out["recording_camera"]["p50_ms"] / bare, 2)
    return out


def command_to_frame(
    n: int, tick_s: float, shadows: bool = True, antialias: bool = True
) -> dict[str, Any]:
    """A paced loop (one teleop step per ``tick_s``) and a render thread, as the workspace
    runs them; each trial changes the command at a random moment and times the first frame
    rendered from a state at least one step after it."""
    from sim.episode import make_world, open_scenario
    from sim.mujoco import WB6, PhysicsWorld
    from sim.review import LiveFrames
    from sim.teleop import Command, Teleop

    bound = open_scenario("stack-two")
    # the world ticks at the loop's rate: one control step per tick at 0.02 s
    world: Any = PhysicsWorld(bound.scenario.family, bound.layout, arm=WB6, delta=tick_s)
    world.reset(bound.scenario.seed)
    teleop = Teleop(world)
    frames: list[tuple[int, float]] = []
    got = threading.Event()
    live = LiveFrames(lambda: make_world(bound, "physics"),
                      lambda f: (frames.append((f.tick, time.perf_counter())), got.set()),
                      lambda e: print("render error", e, file=sys.stderr))  # fmt: skip
    live.ready.wait(60)
    live.request(0, "front", shadows=shadows, antialias=antialias)
    cmd = [Command()]
    changed: list[tuple[float, int]] = []  # (wall when the command changed, step it ran at)
    stop = threading.Event()
    step = [0]

    def loop() -> None:
        due = time.perf_counter()
        while not stop.is_set():
            current = cmd[0]
            teleop.apply(current)
            step[0] += 1
            live.publish(step[0], world.snapshot())
            due += tick_s
            time.sleep(max(0.0, due - time.perf_counter()))

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    rng = random.Random(3)
    lat = []
    for k in range(n):
        time.sleep(rng.uniform(0.05, 0.15))
        t0 = time.perf_counter()
        first_step = step[0] + 1  # the first step that can see the new command
        cmd[0] = Command(linear=(0.05 if k % 2 else -0.05, 0.0, 0.0))
        changed.append((t0, first_step))
        deadline = t0 + 2.0
        while time.perf_counter() < deadline:
            hit = next((w for s, w in frames if s >= first_step and w >= t0), None)
            if hit is not None:
                lat.append(hit - t0)
                break
            got.wait(0.005)
            got.clear()
    stop.set()
    thread.join(5)
    live.close()
    teleop.close()
    world.close()
    return {"tick_s": tick_s, "shadows": shadows, "antialias": antialias, **stats(lat)}


def export_throughput(steps: int) -> dict[str, Any]:
    from sim.teleop import ACTION_NAMES, Demonstration, export_lerobot, export_robomimic

    rng = np.random.default_rng(0)
    t = steps
    demo = Demonstration(
        name="demo_0", scenario="stack-two", task="stack", arm="wb6", fps=10.0,
        timestamps=np.arange(t) / 10.0, joint_names=tuple(f"j{i}" for i in range(6)),
        joint_pos=rng.normal(size=(t, 6)), joint_vel=rng.normal(size=(t, 6)),
        gripper=rng.uniform(size=t), ee_pos=rng.normal(size=(t, 3)),
        ee_quat=np.tile([1.0, 0, 0, 0], (t, 1)), actions=rng.normal(size=(t, len(ACTION_NAMES))),
        states=rng.normal(size=(t, 60)), model_xml="<mujoco/>", success=True,
        frames={"front": rng.integers(0, 255, (t, 240, 320, 3), dtype=np.uint8)},
    )  # fmt: skip
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        targets = (("lerobot", export_lerobot, Path(tmp) / "lr"),
                   ("robomimic", export_robomimic, Path(tmp) / "rm.hdf5"))  # fmt: skip
        for name, fn, target in targets:
            start = time.perf_counter()
            fn([demo], target)
            seconds = time.perf_counter() - start
            out[name] = {"seconds": round(seconds, 2), "frames_per_s": round(t / seconds, 1)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer steps and trials")
    args = ap.parse_args()
    out: dict[str, Any] = {"bench": "teleop"}
    out["control_step"] = control_steps(60 if args.quick else 300)
    n = 10 if args.quick else 40
    out["command_to_frame"] = [  # the teleop view: 0.02 s, no shadows, no multisampling
        command_to_frame(n, tick_s=t, shadows=sh, antialias=aa)
        for t, sh, aa in ((0.1, True, True), (0.1, False, True), (0.02, False, True),
                          (0.02, False, False))
    ]  # fmt: skip
    out["export_300_steps_320x240"] = export_throughput(300)
    out["goals"] = {"command_to_frame_p95_ms": 50}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
