"""Check that a lab's arm works with the workbench: names, actuators, reach, real pick-and-place.

``check_arm`` is what a lab runs before using its own robot: it loads the MJCF (a malformed file
is an ArmSpecError naming the file and MuJoCo's line), resolves the spec's names (a wrong name
is an ArmSpecError listing the names the file has), inspects joints, servos and the gripper,
measures how much of the check table the end effector reaches pointing down, and runs a few
seeded pick-and-place trials on it. Problems that do not stop the arm from working are
messages in the report; ``ArmReport.ok`` is true when there are no errors and every trial
succeeded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import mujoco  # type: ignore[import-untyped]
import numpy as np

from sim.mujoco._arm import ArmBinding, ArmSpec, ArmSpecError
from sim.mujoco._bind import bind_arm
from sim.mujoco._check_warnings import explain_warnings, mujoco_warnings
from sim.mujoco._compose import compile_spec, compose, load_spec
from sim.mujoco._gripper import measure_gripper
from sim.mujoco._ik import Kinematics, down_rotation
from sim.mujoco._mjcf_files import check_bodies, scan_mjcf
from sim.mujoco._trial import AREA, CHECK_TABLE, TABLE_Z, pick_place_trial, random_layout

RECOMMENDED = {
    "timestep": 0.002,
    "integrator": "implicitfast",
    "cone": "elliptic",
    "impratio": 10.0,
}
REACH_HEIGHTS = (0.03, 0.25)  # grasp-point heights above the table: grasping, carrying
HINGE_TOL = 1e-3  # rad: limits closer than this are the same limit, written to fewer digits
SLIDE_TOL = 1e-4  # m


@dataclass(frozen=True)
class ArmReport:
    arm: str  # the MJCF file name
    names: dict[str, Any]  # what each spec name resolved to
    reach: dict[str, Any]  # samples, reached, fraction, area, missed (a few examples)
    trials: int
    succeeded: int
    messages: list[str] = field(default_factory=list)  # "error: ..." or "warning: ..."
    home: dict[str, Any] = field(default_factory=dict)  # source ("home keyframe", ...), posture

    @property
    def ok(self) -> bool:
        errors = any(m.startswith("error:") for m in self.messages)
        return not errors and self.succeeded == self.trials


def _name(model: mujoco.MjModel, obj: int, i: int) -> str:
    return str(mujoco.mj_id2name(model, obj, i) or f"#{i}")


def _tolerance(model: mujoco.MjModel, j: int) -> float:
    """How far apart two written-down limits may be and still be the same limit: files round
    (a ctrlrange of 6.2831 for a joint range of 6.28319 is one limit, not a short servo)."""
    return SLIDE_TOL if int(model.jnt_type[j]) == mujoco.mjtJoint.mjJNT_SLIDE else HINGE_TOL


def _servo_range(model: mujoco.MjModel, a: int) -> tuple[float, float] | None:
    """The joint values the servo can command, or None if its control is unlimited."""
    gear = float(model.actuator_gear[a, 0])
    if not model.actuator_ctrllimited[a] or gear == 0.0:
        return None
    lo, hi = (float(v) / gear for v in model.actuator_ctrlrange[a])
    return min(lo, hi), max(lo, hi)


def _joint_messages(model: mujoco.MjModel, name: str, j: int, a: int) -> list[str]:
    servo = _servo_range(model, a)
    slide = int(model.jnt_type[j]) == mujoco.mjtJoint.mjJNT_SLIDE
    if not model.jnt_limited[j]:
        if slide:  # a hinge may turn forever (a continuous wrist); a slide cannot
            return [f"warning: slide joint {name!r} has no range; the IK may drive it anywhere"]
        if servo is not None:
            return [
                f"warning: joint {name!r} turns without limits but its servo only reaches "
                f"{servo[0]:.3f}..{servo[1]:.3f}; give the joint that range so the IK keeps to it"
            ]
        return []
    jlo, jhi = (float(v) for v in model.jnt_range[j])
    tol = _tolerance(model, j)
    if servo is not None and (servo[0] > jlo + tol or servo[1] < jhi - tol):
        return [
            f"warning: the servo of {name!r} cannot reach the joint's whole range "
            f"({servo[0]:.3f}..{servo[1]:.3f} of {jlo:.3f}..{jhi:.3f})"
        ]
    return []


def _home_messages(
    model: mujoco.MjModel, spec: ArmSpec, arm: ArmBinding, prefix: str = ""
) -> list[str]:
    """A home keyframe outside a joint's range: the posture used is clamped into it."""
    key = int(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, prefix + "home"))
    if key < 0:
        return []
    out = []
    for name, j, adr in zip(spec.arm_joints, arm.joint_ids, arm.qpos_adr, strict=True):
        q = float(model.key_qpos[key, adr])
        if not model.jnt_limited[j]:
            continue
        lo, hi = (float(v) for v in model.jnt_range[j])
        if not lo - _tolerance(model, j) <= q <= hi + _tolerance(model, j):
            out.append(
                f"warning: the home keyframe puts {name!r} at {q:.3f}, outside its range "
                f"{lo:.3f}..{hi:.3f}; the check starts from the nearest limit"
            )
    return out


def home_report(spec: ArmSpec, arm: ArmBinding) -> dict[str, Any]:
    """Which home posture the check (and every run with this arm) starts from."""
    return {
        "source": arm.home_source,
        "posture": {n: round(q, 4) for n, q in zip(spec.arm_joints, arm.home, strict=True)},
    }


def _inspect(
    model: mujoco.MjModel, spec: ArmSpec, arm: ArmBinding
) -> tuple[dict[str, Any], list[str]]:
    obj = mujoco.mjtObj
    msgs: list[str] = []
    joints = {}
    for name, j, a in zip(spec.arm_joints, arm.joint_ids, arm.actuator_ids, strict=True):
        joints[name] = _name(model, obj.mjOBJ_ACTUATOR, a)
        msgs += _joint_messages(model, name, j, a)
    msgs += _home_messages(model, spec, arm)
    grip = measure_gripper(model, arm)
    if grip.gap_open < 0.03:
        msgs.append(f"error: the gripper opens only {grip.gap_open * 100:.1f} cm")
    if grip.gap_closed > 0.01:
        msgs.append(f"warning: the gripper closes only to {grip.gap_closed * 100:.1f} cm")
    gripper = {
        name: {"open": o, "closed": c}
        for name, o, c in zip(
            spec.gripper_actuators, arm.gripper_open, arm.gripper_closed, strict=True
        )
    }
    names = {
        "ee_site": spec.ee_site,
        "joints": joints,
        "gripper": gripper,
        "jaw_gap_cm": [round(grip.gap_closed * 100, 1), round(grip.gap_open * 100, 1)],
    }
    return names, msgs


def _options(model: mujoco.MjModel, file: str) -> list[str]:
    opt = model.opt
    have = {
        "timestep": float(opt.timestep),
        "integrator": mujoco.mjtIntegrator(opt.integrator).name.removeprefix("mjINT_").lower(),
        "cone": mujoco.mjtCone(opt.cone).name.removeprefix("mjCONE_").lower(),
        "impratio": float(opt.impratio),
    }
    return [
        f"warning: {file} sets {k}={have[k]}; scenes use {v} (the scene's option wins)"
        for k, v in RECOMMENDED.items()
        if have[k] != v
    ]


def reach_summary(model: mujoco.MjModel, arm: ArmBinding, n: int = 6) -> dict[str, Any]:
    """IK from the home posture to grid poses (gripper down) over the check table's area."""
    kin = Kinematics(model, arm)
    kin.load(mujoco.MjData(model))
    jaw = measure_gripper(model, arm).jaw
    home = np.array(arm.home)
    (x0, x1), (y0, y1) = AREA
    samples, reached = 0, 0
    missed: list[list[float]] = []
    for h in REACH_HEIGHTS:
        for x in np.linspace(x0, x1, n):
            for y in np.linspace(y0, y1, n):
                for yaw in (0.0, math.pi / 2):
                    samples += 1
                    pos = np.array([x, y, TABLE_Z + h])
                    # parallel jaws are symmetric: yaw and yaw + pi are the same grasp
                    if any(
                        kin.solve(home, pos, down_rotation(yaw + flip, jaw), rest=home).ok
                        for flip in (0.0, math.pi)
                    ):
                        reached += 1
                    elif len(missed) < 5:
                        missed.append([round(float(v), 3) for v in (*pos, yaw)])
    return {
        "area": {"x": list(AREA[0]), "y": list(AREA[1]), "heights": list(REACH_HEIGHTS)},
        "samples": samples,
        "reached": reached,
        "fraction": reached / samples,
        "missed": missed,
    }


def check_arm(spec: ArmSpec, *, trials: int = 3) -> ArmReport:
    """Check an arm end to end; raises ArmSpecError for a file or names that cannot work
    (MuJoCo stopping with a fatal error too), LimitError for files too big or too many bodies.

    MuJoCo's own warnings (printed by MuJoCo once per simulation, so once per trial) are
    collected instead and become one message each in the report (:mod:`._check_warnings`).
    Reach, trials and the report all use the one home posture (``_arm.home_posture``).
    """
    file = spec.mjcf.name
    scan_mjcf(spec.mjcf)  # sizes and bodies, before MuJoCo reads a file
    with mujoco_warnings() as heard:
        try:
            model = compile_spec(load_spec(spec.mjcf), file)
            check_bodies(int(model.nbody) - 1, file)  # generated ones count here
            arm = bind_arm(model, spec)
            names, msgs = _inspect(model, spec, arm)
            msgs += _options(model, file)
            scene, bound = compose(CHECK_TABLE, spec)
            reach = reach_summary(scene, bound)
            if reach["fraction"] < 0.9:
                msgs.append(
                    f"error: the gripper reaches only {reach['fraction']:.0%} of the check "
                    "table's poses"
                )
            succeeded = 0
            for seed in range(trials):
                heard.stage = f"trial {seed}"
                result = pick_place_trial(spec, random_layout(np.random.default_rng(seed)))
                succeeded += result.ok
                if not result.ok:
                    msgs.append(f"error: pick-and-place trial {seed} failed: {result.reason}")
        except mujoco.FatalError as exc:  # its stack or memory ran out: the model's to fix
            raise ArmSpecError(f"{file}: MuJoCo stopped: {' '.join(str(exc).split())}") from None
    msgs += explain_warnings(heard, scene, trials=trials)
    return ArmReport(
        arm=file,
        names=names,
        reach=reach,
        trials=trials,
        succeeded=succeeded,
        messages=list(dict.fromkeys(msgs)),  # each once, in order: parts of the check repeat
        home=home_report(spec, arm),
    )
