"""bench/sim: the simulation core's speed and the scripted executor's reliability.

Figures (one JSON object on stdout; progress on stderr):

- ``physics``: engine episodes with recording off (the scripted references of ``cook-patty``
  and ``stack-three``: controller, perception every tick, hashes, diffs) against a bare
  ``mj_step`` loop on the same model in the same run, fed the same controls from the same start
  state, interleaved tick by tick. ``throughput_ratio`` = bare time / engine time (goal ≥ 0.9),
  split into ticks where the arm is idle and where it moves.
- ``symbolic``: ticks per CPU second (``time.process_time``) of the symbolic world over every
  shipped scenario's reference, engine episodes in one process, both ``recording`` (the trace:
  state hash, graph diff, keyframes — what a stored episode pays) and ``not_recording``
  (``record=False``, RL users and large batches); goal ≥ 10,000 for each.
- ``render``: offscreen frames per second of the head camera at 640×480 (MuJoCo, EGL).
- ``episode_video``: wall time of a 300-tick physics episode recorded to SQLite with the head
  camera encoded to H.264 (the whole trace path).
- ``pick_place``: ``bench/sim_pick.py`` — success over seeded random layouts (goal ≥ 98 %).

    MUJOCO_GL=egl python bench/sim.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# The repository first: this file is bench/sim.py and would shadow the `sim` package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.gl import require_rendering

require_rendering()  # chooses MUJOCO_GL as every command that renders does, before MuJoCo loads

# ruff: noqa: E402  (the imports below must follow the GL choice)
import mujoco
import numpy as np

from sim.episode import (
    EpisodeRunner,
    ScriptedAgent,
    SqliteSink,
    VideoSink,
    make_world,
    open_scenario,
)
from sim.scenario import shipped
from storage import Project


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def physics_throughput(
    name: str = "cook-patty", repeats: int = 3, *, record: bool = False
) -> dict[str, Any]:
    """Engine ticks vs bare ``mj_step`` on identical controls from the same start state.

    Each tick is timed on its own, so the figure is split by what the arm was doing: ``idle``
    ticks (no action running: the engine's own cost — perception, cooking, hashing, diff,
    queue) and ``moving`` ticks (the arm controller's per-step inverse kinematics on top).
    Best of ``repeats`` per tick.
    """
    bound = open_scenario(name)
    world: Any = make_world(bound, "physics")
    runner = EpisodeRunner(world, bound, ScriptedAgent(bound.reference), anomalies=False)
    runner.start()
    start_state = world.snapshot()
    controls: list[list[np.ndarray]] = []
    busy: list[bool] = []
    step = world.controller.step

    def recording_step(data: Any) -> None:
        step(data)
        controls[-1].append(data.ctrl.copy())

    world.controller.step = recording_step
    while runner.result is None:
        controls.append([])
        before = world.busy or bool(runner._queue)
        runner.step()
        busy.append(before or world.busy)  # moving, or planning a skill at submission
    world.controller.step = step
    hashes = runner.hashes
    substeps = world._substeps
    n = len(controls)
    engine = np.full(n, np.inf)
    bare = np.full(n, np.inf)
    model = world.model
    bare_data = mujoco.MjData(model)
    for _ in range(repeats):
        # Interleaved tick by tick (engine tick i, then bare tick i) so that a shared machine's
        # slow spells hit both sides alike.
        world.restore(start_state)
        again = EpisodeRunner(
            world, bound, ScriptedAgent(bound.reference), anomalies=False, record=record
        )
        again.start()
        mujoco.mj_copyData(bare_data, model, world.data)
        for i, tick_controls in enumerate(controls):
            t0 = time.perf_counter()
            again.step()
            engine[i] = min(engine[i], time.perf_counter() - t0)
            t0 = time.perf_counter()
            for c in tick_controls:
                bare_data.ctrl[:] = c
                mujoco.mj_step(model, bare_data, substeps)
            bare[i] = min(bare[i], time.perf_counter() - t0)
        assert world.state_hash() == hashes[-1], "engine run not deterministic"
    world.close()
    moving = np.array(busy)

    def part(mask: np.ndarray) -> dict[str, Any]:
        e, b = float(engine[mask].sum()), float(bare[mask].sum())
        return {
            "ticks": int(mask.sum()),
            "engine_us_per_tick": round(1e6 * e / max(1, int(mask.sum())), 1),
            "bare_us_per_tick": round(1e6 * b / max(1, int(mask.sum())), 1),
            "throughput_ratio": round(b / e, 3) if e else None,
        }

    return {
        "scenario": name,
        "recording": record,
        "mj_steps_per_tick": substeps * len(controls[0]) if controls[0] else None,
        "all": part(np.ones(n, dtype=bool)),
        "idle": part(~moving),
        "moving": part(moving),
        "goal": 0.9,
    }


SYMBOLIC_GOAL = 10_000  # ticks per CPU second, recording or not (issue 11, Speed)


def symbolic_rate(min_seconds: float = 2.0) -> dict[str, Any]:
    """Symbolic ticks per CPU second, with and without the trace, ``min_seconds`` of CPU each.

    CPU time, not wall time: the figure is the world's cost, whatever else the machine runs.
    Whole episodes (world construction and reset included), every shipped reference in turn.
    """
    bounds = [open_scenario(n) for n in shipped()]
    out: dict[str, Any] = {"scenarios": len(bounds), "goal": SYMBOLIC_GOAL}
    for record in (True, False):
        ticks, episodes = 0, 0
        t0 = time.process_time()
        while time.process_time() - t0 < min_seconds:
            for bound in bounds:
                world = make_world(bound, "symbolic")
                agent = ScriptedAgent(bound.reference)
                runner = EpisodeRunner(world, bound, agent, anomalies=False, record=record)
                runner.run()
                ticks += runner.tick
                episodes += 1
        cpu = time.process_time() - t0
        rate = round(ticks / cpu)
        out["recording" if record else "not_recording"] = {
            "episodes": episodes,
            "ticks": ticks,
            "cpu_s": round(cpu, 2),
            "ticks_per_cpu_s": rate,
            "meets_goal": rate >= SYMBOLIC_GOAL,
        }
    return out


def render_fps(n: int = 60) -> dict[str, Any]:
    bound = open_scenario("cheeseburger")
    world = make_world(bound, "physics")
    world.reset(bound.scenario.seed)
    world.render("head", 640, 480)  # context creation outside the timing
    out = {}
    for cam in ("head", "top"):
        t0 = time.perf_counter()
        for _ in range(n):
            world.render(cam, 640, 480)
        out[cam] = round(n / (time.perf_counter() - t0), 1)
    world.close()
    return {"size": [640, 480], "fps": out, "gl": os.environ.get("MUJOCO_GL")}


def episode_with_video(ticks: int = 300, name: str = "cheeseburger") -> dict[str, Any]:
    bound = open_scenario(name)
    with tempfile.TemporaryDirectory() as tmp, Project.create(Path(tmp) / "p") as project:
        world = make_world(bound, "physics")
        db = SqliteSink(project, agent="scripted", mode="physics")
        video = VideoSink("head", db=db)
        runner = EpisodeRunner(
            world, bound, ScriptedAgent(bound.reference), sinks=[db, video], end_tick=ticks
        )
        t0 = time.perf_counter()
        runner.run()
        seconds = time.perf_counter() - t0
        world.close()
        frames = project.episodes.artifacts(db.episode_id or "")[0].frames
    return {
        "scenario": name,
        "ticks": ticks,
        "frames": frames,
        "seconds": round(seconds, 2),
        "ms_per_tick": round(1000 * seconds / ticks, 1),
        "sim_seconds": round(ticks * bound.scenario.delta, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 pick-and-place trials, 1 repeat")
    args = parser.parse_args()
    from bench.sim_pick import pick_place_success

    out: dict[str, Any] = {"bench": "sim"}
    _log("physics throughput …")
    out["physics"] = [
        physics_throughput(name, repeats=1 if args.quick else 3, record=record)
        for name in ("cook-patty", "stack-three")  # a heavy scene (87 contacts), a light one
        for record in (False, True)  # the figure is with recording off
    ]
    _log(json.dumps(out["physics"]))
    _log("symbolic …")
    out["symbolic"] = symbolic_rate(0.5 if args.quick else 2.0)
    _log(json.dumps(out["symbolic"]))
    _log("render …")
    out["render"] = render_fps(20 if args.quick else 60)
    _log(json.dumps(out["render"]))
    _log("300-tick episode with video …")
    out["episode_video"] = episode_with_video()
    _log(json.dumps(out["episode_video"]))
    _log("pick and place …")
    pick = pick_place_success(n=20 if args.quick else 200)
    pick.pop("failures", None)
    out["pick_place"] = pick
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
