"""A recorded demonstration, in memory: what a teleoperator did and what the world was.

This is the one value every exporter reads and every importer makes (LeRobotDataset v3,
robomimic HDF5, the project's own episode format), so a new format needs only this module.
Arrays are per control step (``T`` steps, ``timestamps`` in seconds from the start, strictly
increasing); ``fps`` is the control rate they were sampled at.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

F64 = NDArray[np.float64]

#: the action vector's layout: end-effector linear velocity (m/s, world frame), angular
#: velocity (rad/s, world frame), then the gripper command (0 open … 1 closed)
ACTION_NAMES = ("vx", "vy", "vz", "wx", "wy", "wz", "grip")


@dataclass(frozen=True)
class Span:
    """A labelled stretch of a demonstration or episode, e.g. a person's takeover."""

    start: int  # first step
    end: int  # last step (inclusive)
    who: str
    why: str = ""
    kind: str = "takeover"


@dataclass(frozen=True)
class Demonstration:
    """One demonstration (see the module docstring). ``frames`` holds camera images per step
    (``T × H × W × 3`` uint8) by camera name; ``states`` the flattened MuJoCo integration state
    (``mj_getState`` with ``mjSTATE_INTEGRATION``) per step, which with ``model_xml`` lets any
    camera be re-rendered later; ``graphs`` the scene graph JSON per step."""

    name: str  # unique within its set: "demo_0", or the episode id
    scenario: str
    task: str  # the instruction, in words
    arm: str  # the arm's label (wb6, lab7, a profile NAME@N)
    fps: float
    timestamps: F64  # (T,)
    joint_names: tuple[str, ...]
    joint_pos: F64  # (T, n)
    joint_vel: F64  # (T, n)
    gripper: F64  # (T,) how open the jaws are, 0 closed … 1 open
    ee_pos: F64  # (T, 3) metres, world frame
    ee_quat: F64  # (T, 4) w, x, y, z
    actions: F64  # (T, 7) see ACTION_NAMES
    states: F64  # (T, S)
    model_xml: str
    success: bool
    frames: dict[str, NDArray[np.uint8]] = field(default_factory=dict)
    graphs: tuple[str, ...] = ()
    spans: tuple[Span, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def steps(self) -> int:
        return int(self.timestamps.shape[0])

    def check(self) -> None:
        """Raise ValueError naming the field when the arrays disagree in length or shape."""
        t = self.steps
        n = len(self.joint_names)
        want: dict[str, tuple[int, ...]] = {
            "joint_pos": (t, n), "joint_vel": (t, n), "gripper": (t,), "ee_pos": (t, 3),
            "ee_quat": (t, 4), "actions": (t, len(ACTION_NAMES)),
        }  # fmt: skip
        for name, shape in want.items():
            got = getattr(self, name).shape
            if got != shape:
                raise ValueError(f"{self.name}: {name}: shape {got}, expected {shape}")
        if self.states.shape[0] != t:
            raise ValueError(f"{self.name}: states: {self.states.shape[0]} rows for {t} steps")
        if t > 1 and not bool(np.all(np.diff(self.timestamps) > 0)):
            raise ValueError(f"{self.name}: timestamps: not strictly increasing")
        for cam, frames in self.frames.items():
            if frames.shape[0] != t or frames.ndim != 4 or frames.shape[3] != 3:
                raise ValueError(f"{self.name}: frames[{cam}]: shape {frames.shape} for {t} steps")
        if self.graphs and len(self.graphs) != t:
            raise ValueError(f"{self.name}: graphs: {len(self.graphs)} for {t} steps")
