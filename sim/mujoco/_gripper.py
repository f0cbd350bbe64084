"""What the controller needs to know about a parallel-jaw gripper, measured from the model.

Nothing here is read from names or hand-written constants: the jaw axis, the pad gap when open
and closed, how far the fingertips reach beyond the end-effector site and how thick the fingers
are all come from the finger geoms' bounding boxes at the open and closed settings of the
gripper actuators. That is what lets one controller drive wb6 (one tendon actuator, jaws along
the site's y) and lab7 (two joint actuators, jaws along a 45-degree axis) alike.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from sim.mujoco._arm import ArmBinding, actuated_joints, gripper_qpos, subtree

Vec = NDArray[np.float64]

_UNIT_CORNERS = np.array(
    [[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=np.float64
)


def geom_corners(model: mujoco.MjModel, data: mujoco.MjData, geom: int) -> Vec:
    """World coordinates of the 8 corners of a geom's local bounding box."""
    aabb = model.geom_aabb[geom]
    local = aabb[:3] + _UNIT_CORNERS * aabb[3:]
    rot = data.geom_xmat[geom].reshape(3, 3)
    out: Vec = data.geom_xpos[geom] + local @ rot.T
    return out


@dataclass(frozen=True)
class Gripper:
    """Jaw geometry in the end-effector site frame (site +z = approach direction)."""

    jaw: Vec  # unit jaw-closing axis, perpendicular to the site z
    gap_open: float  # distance between the pads' inner faces, fully open
    gap_closed: float
    depth: float  # how far the fingertips reach beyond the site along +z
    thick: float  # finger thickness along the jaw axis (inner face to outer face)
    across: float  # half-width of the fingers perpendicular to the jaw axis
    finger_bodies: frozenset[int]
    open_ctrl: tuple[float, ...]
    closed_ctrl: tuple[float, ...]

    def ctrl(self, grip: float) -> list[float]:
        """Actuator controls for ``grip`` in [0, 1] (0 open, 1 closed)."""
        return [o + grip * (c - o) for o, c in zip(self.open_ctrl, self.closed_ctrl, strict=True)]

    def grip_for_gap(self, gap: float) -> float:
        """The grip setting whose pad gap is ``gap`` (clipped to the jaw's travel)."""
        span = self.gap_open - self.gap_closed
        return float(np.clip((self.gap_open - gap) / span, 0.0, 1.0)) if span > 0 else 0.0


def _finger_sides(
    model: mujoco.MjModel, data: mujoco.MjData, arm: ArmBinding, bodies: list[frozenset[int]]
) -> list[Vec]:
    """Corners (site frame) of each finger's geoms."""
    site_pos = data.site_xpos[arm.site_id]
    site_rot = data.site_xmat[arm.site_id].reshape(3, 3)
    out = []
    for group in bodies:
        pts = [
            geom_corners(model, data, g)
            for g in range(model.ngeom)
            if int(model.geom_bodyid[g]) in group
        ]
        world = np.vstack(pts) if pts else np.zeros((0, 3))
        out.append((world - site_pos) @ site_rot)
    return out


def measure_gripper(model: mujoco.MjModel, arm: ArmBinding) -> Gripper:
    """Measure the jaws at the open and closed settings, on scratch data."""
    data = mujoco.MjData(model)
    fingers: list[frozenset[int]] = []
    for a in arm.gripper_ids:
        for j, _ in actuated_joints(model, a):
            tree = subtree(model, int(model.jnt_bodyid[j]))
            if tree not in fingers:
                fingers.append(tree)

    def pose(ctrls: tuple[float, ...]) -> list[Vec]:
        data.qpos[:] = model.qpos0
        for a, c in zip(arm.gripper_ids, ctrls, strict=True):
            for adr, q in gripper_qpos(model, a, c).items():
                data.qpos[adr] = q
        mujoco.mj_kinematics(model, data)
        return _finger_sides(model, data, arm, fingers)

    opened = pose(arm.gripper_open)
    closed = pose(arm.gripper_closed)
    centres = [c.mean(axis=0) if len(c) else np.zeros(3) for c in opened]
    if len(centres) >= 2:
        jaw = centres[0] - centres[1]
    else:
        jaw = centres[0] if centres else np.array([1.0, 0.0, 0.0])
    jaw = np.array([jaw[0], jaw[1], 0.0])
    jaw = jaw / (np.linalg.norm(jaw) or 1.0)
    across_axis = np.cross([0.0, 0.0, 1.0], jaw)

    def gap(sides: list[Vec]) -> tuple[float, float]:
        plus = [s @ jaw for s in sides if len(s) and float(np.mean(s @ jaw)) > 0]
        minus = [s @ jaw for s in sides if len(s) and float(np.mean(s @ jaw)) <= 0]
        inner_p = min(float(p.min()) for p in plus) if plus else 0.0
        inner_m = max(float(m.max()) for m in minus) if minus else 0.0
        outer = max(float(np.abs(s @ jaw).max()) for s in sides if len(s))
        return inner_p - inner_m, outer - max(inner_p, -inner_m)

    gap_open, thick = gap(opened)
    gap_closed, _ = gap(closed)
    every = np.vstack([s for s in opened + closed if len(s)])
    return Gripper(
        jaw=jaw,
        gap_open=max(gap_open, 0.0),
        gap_closed=max(gap_closed, 0.0),
        depth=float(every[:, 2].max()),
        thick=max(thick, 0.0),
        across=float(np.abs(every @ across_axis).max()),
        finger_bodies=frozenset().union(*fingers) if fingers else frozenset(),
        open_ctrl=arm.gripper_open,
        closed_ctrl=arm.gripper_closed,
    )


def open_fraction(model: mujoco.MjModel, arm: ArmBinding, qpos: Vec) -> float:
    """How open the jaws actually are, 0 (fully closed) .. 1 (fully open), widest actuator."""
    best = 0.0
    for a, o, c in zip(arm.gripper_ids, arm.gripper_open, arm.gripper_closed, strict=True):
        length = sum(
            coef * float(qpos[model.jnt_qposadr[j]]) for j, coef in actuated_joints(model, a)
        )
        if o != c:
            best = max(best, (length - c) / (o - c))
    return best
