"""Helpers for the arm tests: compose a scene, start at home, run a skill to its end."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from sim.mujoco._arm import ArmBinding, ArmSpec
from sim.mujoco._compose import compose
from sim.mujoco._controller import Controller
from sim.mujoco._trial import CONTROL_STEPS, home_data


def setup(
    scene: Path | str, arm: ArmSpec
) -> tuple[mujoco.MjModel, mujoco.MjData, ArmBinding, Controller]:
    model, binding = compose(scene, arm)
    data = home_data(model, binding)
    return model, data, binding, Controller(model, binding)


def body(model: mujoco.MjModel, name: str) -> int:
    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name)
    assert i >= 0, name
    return int(i)


def joint_value(model: mujoco.MjModel, data: mujoco.MjData, name: str) -> float:
    j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
    return float(data.qpos[model.jnt_qposadr[j]])


def run(
    model: mujoco.MjModel, data: mujoco.MjData, ctl: Controller, max_steps: int = 3000
) -> list[bytes]:
    """Step the controller until the skill ends; qpos bytes after every control step."""
    trace = []
    for _ in range(max_steps):
        ctl.step(data)
        if not ctl.busy:
            return trace
        for _ in range(CONTROL_STEPS):
            mujoco.mj_step(model, data)
        trace.append(np.asarray(data.qpos).tobytes())
    raise AssertionError(f"skill still running in phase {ctl.phase}")
