"""LeRobot and robomimic files back into a project as demonstrations (episodes).

The formats keep the MuJoCo state of every step but not the scene graph, so the graph is
perceived again from each state in a physics world of the demonstration's scenario and arm —
the same perception that made it when it was recorded — and the episode opens in the
workspace with its timeline, contract and world like one recorded here. A file whose states do
not fit that world (another scene or arm) is refused by name, and nothing is stored.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from sim.episode import make_world, open_scenario, resolve_arm
from sim.teleop._demo import Demonstration
from sim.teleop._demo_io import DemoFileError
from sim.teleop._import_lerobot import import_lerobot
from sim.teleop._import_robomimic import import_robomimic
from sim.teleop._project_export import FORMATS
from sim.teleop._store import store_demonstration
from storage import Project


def perceived_graphs(project: Project, demo: Demonstration, source: str) -> tuple[str, ...]:
    """The scene graph of every step, perceived from its stored MuJoCo state."""
    from sim.mujoco import PhysicsWorld, perceive  # first: it picks MuJoCo's GL platform

    # isort: split
    import mujoco  # type: ignore[import-untyped]

    bound = open_scenario(str(demo.meta.get("source", demo.scenario)))
    world = make_world(bound, "physics", arm=resolve_arm(demo.arm, project, where=source))
    assert isinstance(world, PhysicsWorld)
    try:
        model, data = world.model, world.data
        kind = mujoco.mjtState.mjSTATE_INTEGRATION
        size = mujoco.mj_stateSize(model, kind)
        if demo.states.shape[1] != size:
            raise DemoFileError(
                f"{source}: {demo.name}: states have {demo.states.shape[1]} values a step, "
                f"the {demo.scenario} scene with arm {demo.arm} has {size}: recorded elsewhere"
            )
        world.reset(int(demo.meta.get("seed", bound.scenario.seed)))  # parked objects, attrs
        graphs = []
        for i, state in enumerate(demo.states):
            mujoco.mj_setState(model, data, np.ascontiguousarray(state, dtype=np.float64), kind)
            mujoco.mj_forward(model, data)
            graph = perceive(model, data, world.scene, i, world.s.extra,
                             absent=frozenset(world.s.parked))  # fmt: skip
            graphs.append(graph.to_json_text())
        return tuple(graphs)
    finally:
        world.close()


def import_demonstrations(project: Project, fmt: str, path: Path) -> list[str]:
    """Store every demonstration of a LeRobot dataset folder or robomimic file as an episode of
    ``project``, all or nothing; returns the episode ids."""
    if fmt not in FORMATS:
        raise DemoFileError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    path = Path(path)
    demos = import_lerobot(path) if fmt == "lerobot" else import_robomimic(path)
    if not demos:
        raise DemoFileError(f"{path}: holds no demonstrations")
    ready = [d if d.graphs else dataclasses.replace(d, graphs=perceived_graphs(project, d,
             str(path))) for d in demos]  # fmt: skip
    with project.transaction():
        return [store_demonstration(project, d) for d in ready]
