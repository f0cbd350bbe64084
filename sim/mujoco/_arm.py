"""Arm descriptions (names in an MJCF file) and their binding to ids in a compiled model.

An :class:`ArmSpec` is what a lab writes down about its robot: the MJCF file, the end-effector
site, the arm joints in kinematic order and the gripper actuators. An :class:`ArmBinding` is
those names resolved to ids in a compiled model (``_bind.bind_arm`` makes it; it sits above
the IK, which is built on this module and finds the home posture). Every naming mistake is an
:class:`ArmSpecError` that names the file and lists the names the file does have, so a lab can
fix its spec without reading our code.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import mujoco  # type: ignore[import-untyped]
import numpy as np

from annotation import UserError

_ARMS = Path(str(files("resources"))) / "sim" / "arms"


@dataclass(frozen=True)
class ArmSpec:
    """The names a controller needs, as written in the arm's own MJCF file."""

    mjcf: Path
    ee_site: str
    arm_joints: tuple[str, ...]
    gripper_actuators: tuple[str, ...]


class ArmSpecError(UserError, ValueError):
    """An arm file or spec that cannot be used; the message names the file and the culprit."""


WB6 = ArmSpec(
    mjcf=_ARMS / "wb6.xml",
    ee_site="wb6/tcp",
    arm_joints=("shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3"),
    gripper_actuators=("gripper",),
)

LAB7 = ArmSpec(
    mjcf=_ARMS / "lab7.xml",
    ee_site="tool0",
    arm_joints=tuple(f"link{i}_joint" for i in range(1, 8)),
    gripper_actuators=("finger_left_act", "finger_right_act"),
)


@dataclass(frozen=True)
class ArmBinding:
    """Ids of one arm in one compiled model (after composition, with the prefix resolved)."""

    site_id: int
    joint_ids: tuple[int, ...]
    qpos_adr: tuple[int, ...]
    dof_adr: tuple[int, ...]
    actuator_ids: tuple[int, ...]  # the position servo of each arm joint, in joint order
    gripper_ids: tuple[int, ...]
    gripper_open: tuple[float, ...]
    gripper_closed: tuple[float, ...]
    gripper_body_ids: frozenset[int]  # hand and fingers: the subtree of the last joint's body
    root_body_id: int = -1  # the arm's base (child of the world or of a scene body)
    # The one posture everything starts from (reach, trials, every physics world) and the
    # controller returns to: see ``_home.home_posture``. ``home_source`` says where it came from.
    home: tuple[float, ...] = ()
    home_source: str = ""

    @property
    def n(self) -> int:
        return len(self.joint_ids)


def subtree(model: mujoco.MjModel, root: int) -> frozenset[int]:
    """Ids of ``root`` and every body below it (bodies are stored parents first)."""
    out = {root}
    for b in range(root + 1, model.nbody):
        if int(model.body_parentid[b]) in out:
            out.add(b)
    return frozenset(out)


def actuated_joints(model: mujoco.MjModel, act: int) -> list[tuple[int, float]]:
    """(joint id, length per unit joint motion) of the joints an actuator moves."""
    trn, gear = int(model.actuator_trntype[act]), float(model.actuator_gear[act, 0])
    if trn == mujoco.mjtTrn.mjTRN_JOINT:
        return [(int(model.actuator_trnid[act, 0]), gear)]
    if trn == mujoco.mjtTrn.mjTRN_TENDON:
        ten = int(model.actuator_trnid[act, 0])
        adr, num = int(model.tendon_adr[ten]), int(model.tendon_num[ten])
        return [
            (int(model.wrap_objid[w]), gear * float(model.wrap_prm[w]))
            for w in range(adr, adr + num)
            if int(model.wrap_type[w]) == mujoco.mjtWrap.mjWRAP_JOINT
        ]
    return []


def gripper_qpos(model: mujoco.MjModel, act: int, ctrl: float) -> dict[int, float]:
    """qpos address -> value that puts the actuator's joints where ``ctrl`` would settle them."""
    joints = actuated_joints(model, act)
    total = sum(c for _, c in joints) or 1.0
    out = {}
    for j, _ in joints:
        q = ctrl / total
        if model.jnt_limited[j]:
            q = float(np.clip(q, *model.jnt_range[j]))
        out[int(model.jnt_qposadr[j])] = q
    return out


def set_home(model: mujoco.MjModel, arm: ArmBinding, data: mujoco.MjData) -> None:
    """Put the arm at its home posture in ``data``: joints, servo targets, jaws open."""
    for adr, act, q in zip(arm.qpos_adr, arm.actuator_ids, arm.home, strict=True):
        data.qpos[adr] = q
        data.ctrl[act] = q * float(model.actuator_gear[act, 0])
    for act, ctrl in zip(arm.gripper_ids, arm.gripper_open, strict=True):
        for adr, q in gripper_qpos(model, act, ctrl).items():
            data.qpos[adr] = q
        data.ctrl[act] = ctrl
