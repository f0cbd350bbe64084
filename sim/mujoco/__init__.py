"""MuJoCo tabletop: scenes, arms, composition, inverse kinematics, the arm controller, the
physics world (graph perceived from contacts every tick) and the arm check.

MuJoCo picks its OpenGL platform once, when ``mujoco`` is first imported: the cheap choice of
:mod:`sim.gl` runs here, before any submodule imports it. Commands that render call
``sim.gl.require_rendering`` before importing this package, so the choice can still change.
"""

from sim.gl import prefer_platform

prefer_platform()  # before any submodule imports mujoco (they all do, at their top)

# ruff: noqa: E402  (the imports must follow the GL choice)
from sim.mujoco._annotations import SceneError
from sim.mujoco._arm import LAB7, WB6, ArmBinding, ArmSpec, ArmSpecError
from sim.mujoco._bind import bind_arm
from sim.mujoco._capability import Capability, Grasp, RunOutcome, Step, scenario_capability
from sim.mujoco._check import ArmReport, check_arm
from sim.mujoco._check_warnings import scenario_warnings
from sim.mujoco._compose import compose, compose_spec
from sim.mujoco._controller import MOTION_VERSION, Controller
from sim.mujoco._gripper import Gripper, measure_gripper, open_fraction
from sim.mujoco._ik import Kinematics, down_rotation, jaw_yaw, mat_to_quat, quat_to_mat
from sim.mujoco._mjcf_files import MjcfFiles, check_bodies, scan_mjcf
from sim.mujoco._perceive import perceive
from sim.mujoco._perturb import Push
from sim.mujoco._render import Orbit
from sim.mujoco._scene import FAMILIES, load_scene_info, scene_path
from sim.mujoco._trial import CONTROL_STEPS, pick_place_trial, random_layout
from sim.mujoco._world import Manual, PhysicsWorld

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
    "Capability",
    "Controller",
    "Grasp",
    "Gripper",
    "Kinematics",
    "Manual",
    "MjcfFiles",
    "Orbit",
    "PhysicsWorld",
    "Push",
    "RunOutcome",
    "SceneError",
    "Step",
    "bind_arm",
    "check_arm",
    "check_bodies",
    "compose",
    "compose_spec",
    "down_rotation",
    "jaw_yaw",
    "load_scene_info",
    "mat_to_quat",
    "measure_gripper",
    "open_fraction",
    "perceive",
    "pick_place_trial",
    "quat_to_mat",
    "random_layout",
    "scan_mjcf",
    "scenario_capability",
    "scenario_warnings",
    "scene_path",
]
