"""Binding an :class:`~sim.mujoco._arm.ArmSpec` to ids in a compiled model.

:func:`bind_arm` resolves the spec's names in a compiled (possibly composed, hence prefixed)
model and derives everything the controller needs from the model itself: the position servo
driving each joint, which end of each gripper actuator's control range opens the jaws, the
bodies that make up the hand, and the home posture (:mod:`._home`, found with the IK). It sits
above ``_home`` and ``_ik``, which work on the :class:`~sim.mujoco._arm.ArmBinding` it returns.
"""

from __future__ import annotations

import dataclasses
import difflib

import mujoco  # type: ignore[import-untyped]
import numpy as np

from sim.mujoco._arm import (
    ArmBinding,
    ArmSpec,
    ArmSpecError,
    actuated_joints,
    gripper_qpos,
    subtree,
)
from sim.mujoco._home import home_posture


def _names(model: mujoco.MjModel, obj: int, count: int, prefix: str) -> list[str]:
    out = []
    for i in range(count):
        name = mujoco.mj_id2name(model, obj, i) or ""
        if name.startswith(prefix) and name:
            out.append(name[len(prefix) :])
    return out


def _missing(file: str, kind: str, name: str, available: list[str]) -> ArmSpecError:
    close = difflib.get_close_matches(name, available, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    listing = ", ".join(available) if available else "none"
    return ArmSpecError(f"{file}: no {kind} named {name!r} ({kind}s: {listing}){hint}")


def _lookup(
    model: mujoco.MjModel, obj: int, count: int, name: str, prefix: str, file: str, kind: str
) -> int:
    i = int(mujoco.mj_name2id(model, obj, prefix + name))
    if i < 0:
        raise _missing(file, kind, name, _names(model, obj, count, prefix))
    return i


def is_position_servo(model: mujoco.MjModel, act: int) -> bool:
    """True for an actuator whose force is kp*(ctrl - length) - kv*velocity (any kv)."""
    gain = float(model.actuator_gainprm[act, 0])
    return (
        int(model.actuator_gaintype[act]) == mujoco.mjtGain.mjGAIN_FIXED
        and int(model.actuator_biastype[act]) == mujoco.mjtBias.mjBIAS_AFFINE
        and gain > 0
        and abs(float(model.actuator_biasprm[act, 1]) + gain) <= 1e-9 * gain
        and int(model.actuator_dyntype[act]) == mujoco.mjtDyn.mjDYN_NONE
    )


def _servo_for(model: mujoco.MjModel, joint: int) -> list[int]:
    return [
        a
        for a in range(model.nu)
        if int(model.actuator_trntype[a]) == mujoco.mjtTrn.mjTRN_JOINT
        and int(model.actuator_trnid[a, 0]) == joint
    ]


def _spread(model: mujoco.MjModel, act: int, ctrl: float, site: int) -> float:
    """How far the geoms moved by ``act`` lie from the site's approach axis at ``ctrl``."""
    data = mujoco.MjData(model)
    for adr, q in gripper_qpos(model, act, ctrl).items():
        data.qpos[adr] = q
    mujoco.mj_kinematics(model, data)
    moved = {int(model.jnt_bodyid[j]) for j, _ in actuated_joints(model, act)}
    axis = data.site_xmat[site].reshape(3, 3)[:, 2]
    total = 0.0
    for g in range(model.ngeom):
        if int(model.geom_bodyid[g]) in moved:
            rel = data.geom_xpos[g] - data.site_xpos[site]
            total += float(np.linalg.norm(rel - axis * float(rel @ axis)))
    return total


def bind_arm(model: mujoco.MjModel, spec: ArmSpec, prefix: str = "") -> ArmBinding:
    """Resolve an arm's names (with ``prefix``) in a compiled model; raise ArmSpecError."""
    file = spec.mjcf.name
    obj = mujoco.mjtObj
    site = _lookup(model, obj.mjOBJ_SITE, model.nsite, spec.ee_site, prefix, file, "site")
    joints, acts = [], []
    for name in spec.arm_joints:
        j = _lookup(model, obj.mjOBJ_JOINT, model.njnt, name, prefix, file, "joint")
        if int(model.jnt_type[j]) not in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE):
            raise ArmSpecError(f"{file}: joint {name!r} is not a hinge or slide joint")
        servos = [a for a in _servo_for(model, j) if is_position_servo(model, a)]
        if not servos:
            raise ArmSpecError(
                f"{file}: joint {name!r} has no position actuator (a <position> or a <general> "
                f"with gainprm[0] = -biasprm[1] and affine bias on this joint)"
            )
        joints.append(j)
        acts.append(servos[0])
    if not spec.arm_joints:
        raise ArmSpecError(f"{file}: the spec lists no arm joints")
    if not spec.gripper_actuators:
        # the names a lab would pick from: actuators that do not drive one of the arm joints
        driving = {mujoco.mj_id2name(model, obj.mjOBJ_ACTUATOR, a) for a in acts}
        others = [
            name
            for name in _names(model, obj.mjOBJ_ACTUATOR, model.nu, prefix)
            if prefix + name not in driving
        ]
        raise ArmSpecError(
            f"{file}: a gripper actuator is required, and the spec names none "
            f"(other actuators in the file: {', '.join(map(repr, others)) or 'none'})"
        )
    grippers, g_open, g_closed = [], [], []
    for name in spec.gripper_actuators:
        a = _lookup(model, obj.mjOBJ_ACTUATOR, model.nu, name, prefix, file, "actuator")
        if not model.actuator_ctrllimited[a]:
            raise ArmSpecError(f"{file}: gripper actuator {name!r} has no ctrlrange")
        if not actuated_joints(model, a):
            raise ArmSpecError(f"{file}: gripper actuator {name!r} moves no joint")
        lo, hi = (float(v) for v in model.actuator_ctrlrange[a])
        opens_high = _spread(model, a, hi, site) >= _spread(model, a, lo, site)
        grippers.append(a)
        g_open.append(hi if opens_high else lo)
        g_closed.append(lo if opens_high else hi)
    hand = int(model.jnt_bodyid[joints[-1]])
    site_body = int(model.site_bodyid[site])
    if site_body not in subtree(model, hand):
        raise ArmSpecError(f"{file}: site {spec.ee_site!r} is not on the body of the last joint")
    root = int(model.jnt_bodyid[joints[0]])
    while (
        int(model.body_parentid[root]) != 0
        and int(model.body_jntnum[model.body_parentid[root]]) == 0
    ):
        parent = int(model.body_parentid[root])
        if not (mujoco.mj_id2name(model, obj.mjOBJ_BODY, parent) or "").startswith(prefix):
            break
        root = parent
    bound = ArmBinding(
        site_id=site,
        joint_ids=tuple(joints),
        qpos_adr=tuple(int(model.jnt_qposadr[j]) for j in joints),
        dof_adr=tuple(int(model.jnt_dofadr[j]) for j in joints),
        actuator_ids=tuple(acts),
        gripper_ids=tuple(grippers),
        gripper_open=tuple(g_open),
        gripper_closed=tuple(g_closed),
        gripper_body_ids=subtree(model, hand),
        root_body_id=root,
    )
    home, source = home_posture(model, bound, prefix)
    return dataclasses.replace(bound, home=home, home_source=source)
