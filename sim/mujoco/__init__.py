"""MuJoCo tabletop: scenes, arms, composition, inverse kinematics, the arm controller, the
physics world (graph perceived from contacts every tick) and the arm check."""

from sim.mujoco._annotations import SceneError
from sim.mujoco._arm import LAB7, WB6, ArmBinding, ArmSpec, ArmSpecError, bind_arm
from sim.mujoco._check import ArmReport, check_arm
from sim.mujoco._compose import compose, compose_spec
from sim.mujoco._controller import Controller
from sim.mujoco._perceive import perceive
from sim.mujoco._scene import FAMILIES, load_scene_info, scene_path
from sim.mujoco._world import PhysicsWorld

__all__ = [
    "FAMILIES",
    "LAB7",
    "WB6",
    "ArmBinding",
    "ArmReport",
    "ArmSpec",
    "ArmSpecError",
    "Controller",
    "PhysicsWorld",
    "SceneError",
    "bind_arm",
    "check_arm",
    "compose",
    "compose_spec",
    "load_scene_info",
    "perceive",
    "scene_path",
]
