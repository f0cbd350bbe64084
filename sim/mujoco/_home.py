"""The arm's one home posture: where the reach check, every trial and every physics world start,
and where the controller returns to.

The model's ``home`` keyframe wins (values outside a joint's range are clamped into it; the
check says so). Without one the posture is computed, and the report says so:

1. every limited joint mid-range, every unlimited one at its reference position (a hinge's
   wrapped into one turn): never the zero pose as such, which may lie outside a range;
2. from there, the IK puts the gripper pointing down, :data:`ABOVE` in front of the arm's base,
   over the middle of the tables the scenes and the check use. Mid-range alone is often the arm
   pointing straight up (symmetric ranges put every joint at 0), and a controller starting
   with the gripper up must turn it over on its first move, which the Cartesian tracking
   cannot always do. If no such posture is found, mid-range it is.

The target is in the arm's base frame, so the posture is the same in every scene it is
mounted in, and found the same way each time (the IK is deterministic).
"""

from __future__ import annotations

import math

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from sim.mujoco._arm import ArmBinding
from sim.mujoco._ik import Kinematics

Vec = NDArray[np.float64]

HOME_KEYFRAME = "home keyframe"
HOME_DOWN = "computed: gripper down over the table"
HOME_MID = "computed: mid-range"
#: grasp-point targets for a computed home, in the base frame (x toward the table, z up): the
#: first with an IK solution wins. Both shipped arms' keyframes sit near the first.
ABOVE = ((0.5, 0.0, 0.35), (0.45, 0.0, 0.25), (0.6, 0.0, 0.45), (0.35, 0.0, 0.3))


def mid_range(model: mujoco.MjModel, joints: tuple[int, ...]) -> Vec:
    out = []
    for j in joints:
        if model.jnt_limited[j]:
            out.append(float(np.mean(model.jnt_range[j])))
            continue
        q = float(model.qpos0[int(model.jnt_qposadr[j])])
        if int(model.jnt_type[j]) == mujoco.mjtJoint.mjJNT_HINGE:
            q = math.atan2(math.sin(q), math.cos(q))
        out.append(q)
    return np.array(out, dtype=np.float64)


def _clamped(model: mujoco.MjModel, joints: tuple[int, ...], q: Vec) -> tuple[float, ...]:
    out = []
    for j, v in zip(joints, q, strict=True):
        if model.jnt_limited[j]:
            v = np.clip(v, *model.jnt_range[j])
        out.append(float(v))
    return tuple(out)


def _down(model: mujoco.MjModel, arm: ArmBinding, q: Vec) -> Vec | None:
    """The posture nearest ``q`` with the site's +z pointing down over the table, or None."""
    kin = Kinematics(model, arm)
    kin.load(mujoco.MjData(model))
    _, rot = kin.fk(q)  # poses every body (the base's frame too)
    base = kin.data.xpos[arm.root_body_id].copy()
    frame = kin.data.xmat[arm.root_body_id].reshape(3, 3).copy()
    # the site's x axis keeps its heading, or reverses it (the hand pitched over): whichever
    # needs less joint travel, so the last joint is not left half a turn round
    x = rot[:, 0] - frame[:, 2] * float(rot[:, 0] @ frame[:, 2])
    if np.linalg.norm(x) < 1e-6:
        x = frame[:, 0].copy()
    x /= np.linalg.norm(x)
    z = -frame[:, 2]
    for above in ABOVE:
        found = []
        for heading in (x, -x):
            target = np.column_stack([heading, np.cross(z, heading), z])
            res = kin.solve(q, base + frame @ np.array(above), target, rest=q, iters=400)
            if res.ok:
                found.append(res.q)
        if found:
            return min(found, key=lambda s: float(np.abs(s - q).sum()))
    return None


def home_posture(
    model: mujoco.MjModel, arm: ArmBinding, prefix: str = ""
) -> tuple[tuple[float, ...], str]:
    """(joint values in ``arm``'s joint order, where they came from); see the module doc."""
    joints = arm.joint_ids
    key = int(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, prefix + "home"))
    if key >= 0:
        q = np.array([float(model.key_qpos[key, a]) for a in arm.qpos_adr])
        return _clamped(model, joints, q), HOME_KEYFRAME
    mid = np.array(_clamped(model, joints, mid_range(model, joints)))
    down = _down(model, arm, mid)
    if down is None:
        return tuple(float(v) for v in mid), HOME_MID
    return _clamped(model, joints, down), HOME_DOWN
