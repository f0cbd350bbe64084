"""MuJoCo tabletop: scenes, arms, composition, inverse kinematics, the arm controller, the
physics world (graph perceived from contacts every tick) and the arm check.

MuJoCo picks its OpenGL platform once, when ``mujoco`` is first imported, so importing this
package imports nothing of MuJoCo: the GL choice (:mod:`sim.mujoco._gl`) comes first, and every
other name is loaded on first use. That lets :func:`require_rendering` run — and choose — before
MuJoCo is loaded.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from sim.mujoco._gl import RenderUnavailableError, prefer_platform, require_rendering

prefer_platform()  # before any submodule imports mujoco (they all do, at their top)

if TYPE_CHECKING:
    from sim.mujoco._annotations import SceneError
    from sim.mujoco._arm import LAB7, WB6, ArmBinding, ArmSpec, ArmSpecError, bind_arm
    from sim.mujoco._check import ArmReport, check_arm
    from sim.mujoco._compose import compose, compose_spec
    from sim.mujoco._controller import MOTION_VERSION, Controller
    from sim.mujoco._perceive import perceive
    from sim.mujoco._scene import FAMILIES, load_scene_info, scene_path
    from sim.mujoco._trial import CONTROL_STEPS, pick_place_trial, random_layout
    from sim.mujoco._world import PhysicsWorld

_LAZY = {
    "SceneError": "_annotations",
    "LAB7": "_arm",
    "WB6": "_arm",
    "ArmBinding": "_arm",
    "ArmSpec": "_arm",
    "ArmSpecError": "_arm",
    "bind_arm": "_arm",
    "ArmReport": "_check",
    "check_arm": "_check",
    "compose": "_compose",
    "compose_spec": "_compose",
    "Controller": "_controller",
    "MOTION_VERSION": "_controller",
    "perceive": "_perceive",
    "FAMILIES": "_scene",
    "load_scene_info": "_scene",
    "scene_path": "_scene",
    "CONTROL_STEPS": "_trial",
    "pick_place_trial": "_trial",
    "random_layout": "_trial",
    "PhysicsWorld": "_world",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


__all__ = [
    "CONTROL_STEPS",
    "FAMILIES",
    "LAB7",
    "MOTION_VERSION",
    "WB6",
    "ArmBinding",
    "ArmReport",
    "ArmSpec",
    "ArmSpecError",
    "Controller",
    "PhysicsWorld",
    "RenderUnavailableError",
    "SceneError",
    "bind_arm",
    "check_arm",
    "compose",
    "compose_spec",
    "load_scene_info",
    "perceive",
    "pick_place_trial",
    "random_layout",
    "require_rendering",
    "scene_path",
]
