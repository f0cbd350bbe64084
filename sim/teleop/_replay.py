"""Replaying a stored demonstration: the same reset, the recorded actions, every state compared.

Like ``sim replay`` for episodes, but a demonstration has no decisions to re-submit: its
actions are the commands themselves. The world is rebuilt from the stored scenario (refused if
the file changed) and arm (refused if its files changed), reset with the recorded seed, and
each recorded action is applied through a fresh :class:`Teleop` with the recorded workspace
and speed limits. Before every step the MuJoCo integration state must equal the recorded one
bit for bit; the first step where it does not is reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco  # type: ignore[import-untyped]
import numpy as np

from sim.episode import episode_arm, make_world, open_scenario
from sim.mujoco import PhysicsWorld
from sim.scenario import ScenarioError
from sim.teleop._control import Command, Teleop
from sim.teleop._record import STATE_SPEC
from sim.teleop._store import load_demonstration
from storage import Project


@dataclass(frozen=True)
class DemoReplay:
    episode_id: str
    steps: int
    compared: int  # steps whose state matched before the first divergence (all, if none)
    first_divergent: int | None
    max_abs_diff: float = 0.0  # at the first divergent step

    @property
    def identical(self) -> bool:
        return self.first_divergent is None


def replay_demonstration(project: Project, episode_id: str) -> DemoReplay:
    """Re-run a stored demonstration's actions from its reset; compare every step's state."""
    demo = load_demonstration(project, episode_id)
    ep = project.episodes.get(episode_id)
    bound = open_scenario(str(ep.config.get("source", ep.scenario)))
    if bound.scenario.digest != ep.scenario_sha:
        raise ScenarioError(
            f"{bound.source}: the scenario changed since demonstration {ep.id[:8]} was "
            "recorded (its digest differs); replay needs the file it ran with"
        )
    # the rate it was recorded at (a demonstration from the window steps faster than a tick)
    world = make_world(bound, "physics", arm=episode_arm(ep, project), delta=ep.delta)
    assert isinstance(world, PhysicsWorld)
    meta = demo.meta
    try:
        world.reset(ep.seed)
        ws = meta.get("workspace")
        teleop = Teleop(
            world,
            workspace=None if ws is None else (np.array(ws[0]), np.array(ws[1])),
            max_linear=float(meta.get("max_linear", 0.25)),
            max_angular=float(meta.get("max_angular", 1.5)),
        )
        state = np.zeros(mujoco.mj_stateSize(world.model, STATE_SPEC))
        for i in range(demo.steps):
            mujoco.mj_getState(world.model, world.data, state, STATE_SPEC)
            want = demo.states[i]
            if state.shape != want.shape or not np.array_equal(state, want):
                diff = float(np.max(np.abs(state - want))) if state.shape == want.shape else np.inf
                return DemoReplay(ep.id, demo.steps, i, i, diff)
            teleop.apply(Command.from_action(demo.actions[i]))
    finally:
        world.close()
    return DemoReplay(ep.id, demo.steps, demo.steps, None)
