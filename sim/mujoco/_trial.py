"""Seeded pick-and-place trials on the check table (used by check_arm and bench/sim_pick.py).

A layout puts the table's three boxes at random sizes, positions and yaws (centres at least
8 cm apart) and picks a target for box_a. A trial composes the arm into that scene, picks box_a
and places it on the target, and judges the result from physics alone: the box's bottom centre
within 2 cm of the target, still upright, out of the gripper, nothing left in the hand.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import mujoco  # type: ignore[import-untyped]
import numpy as np

from sim.mujoco._arm import ArmBinding, ArmSpec, set_home
from sim.mujoco._bind import bind_arm
from sim.mujoco._compose import ARM_PREFIX, compile_spec, compose_spec
from sim.mujoco._controller import Controller
from sim.mujoco._ctl_scene import body_box, touching

CHECK_TABLE = Path(str(files("resources"))) / "sim" / "scenes" / "check_table.xml"
TABLE_Z = 0.75
AREA = ((0.2, 0.7), (-0.35, 0.35))  # x, y range of box centres and targets (mount at origin)
BOXES = ("box_a", "box_b", "box_c")
MIN_APART = 0.08
CONTROL_STEPS = 5  # physics steps per control step (10 ms at the 2 ms timestep)
PLACE_TOL = 0.02


@dataclass(frozen=True)
class Layout:
    boxes: tuple[tuple[float, ...], ...]  # per box: x, y, yaw, half x, half y, half z
    target: tuple[float, float]


@dataclass(frozen=True)
class TrialResult:
    ok: bool
    reason: str  # "" when ok
    sim_seconds: float
    control_steps: int
    controller_wall: float  # seconds spent in Controller.step
    physics_wall: float  # seconds spent in mj_step


def random_layout(rng: np.random.Generator) -> Layout:
    (x0, x1), (y0, y1) = AREA
    spots: list[tuple[float, float]] = []
    while len(spots) < len(BOXES) + 1:
        p = (float(rng.uniform(x0, x1)), float(rng.uniform(y0, y1)))
        if all(math.dist(p, q) >= MIN_APART for q in spots):
            spots.append(p)
    boxes = tuple(
        (
            x,
            y,
            float(rng.uniform(-math.pi, math.pi)),
            float(rng.uniform(0.015, 0.03)),
            float(rng.uniform(0.015, 0.03)),
            float(rng.uniform(0.015, 0.04)),
        )
        for x, y in spots[:-1]
    )
    return Layout(boxes=boxes, target=spots[-1])


def build(arm: ArmSpec, layout: Layout) -> tuple[mujoco.MjModel, ArmBinding]:
    prefix = ARM_PREFIX
    spec = compose_spec(CHECK_TABLE, arm, prefix=prefix)
    for name, (x, y, yaw, hx, hy, hz) in zip(BOXES, layout.boxes, strict=True):
        body = spec.body(name)
        body.pos = [x, y, TABLE_Z + hz]
        body.quat = [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]
        spec.geom(name).size = [hx, hy, hz]
    model = compile_spec(spec, f"check_table.xml + {arm.mjcf.name}")
    return model, bind_arm(model, arm, prefix)


def home_data(model: mujoco.MjModel, arm: ArmBinding) -> mujoco.MjData:
    """Fresh data with the arm at its home posture (``arm.home``, the posture the reach
    check and every physics world start from), servo targets on it and the jaws open."""
    data = mujoco.MjData(model)
    set_home(model, arm, data)
    mujoco.mj_forward(model, data)
    return data


_UNSTABLE = (
    mujoco.mjtWarning.mjWARN_BADQPOS,
    mujoco.mjtWarning.mjWARN_BADQVEL,
    mujoco.mjtWarning.mjWARN_BADQACC,
)


def unstable(data: mujoco.MjData) -> bool:
    """Whether MuJoCo found NaN or huge positions, velocities or accelerations (and reset)."""
    return any(int(data.warning[w].number) > 0 for w in _UNSTABLE)


def run_skill(
    model: mujoco.MjModel, data: mujoco.MjData, ctl: Controller, max_seconds: float = 20.0
) -> tuple[int, float, float]:
    """Step until the skill ends or the simulation becomes unstable; (control steps,
    controller wall s, physics wall s)."""
    steps, t_ctl, t_phys = 0, 0.0, 0.0
    # counted in steps, not data.time: MuJoCo resets an unstable simulation to time 0
    budget = math.ceil(max_seconds / (CONTROL_STEPS * float(model.opt.timestep)))
    while True:
        t0 = time.perf_counter()
        ctl.step(data)
        t1 = time.perf_counter()
        if not ctl.busy or steps >= budget or unstable(data):
            t_ctl += t1 - t0
            return steps, t_ctl, t_phys
        for _ in range(CONTROL_STEPS):
            mujoco.mj_step(model, data)
        t_ctl += t1 - t0
        t_phys += time.perf_counter() - t1
        steps += 1


def judge(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    arm: ArmBinding,
    body: int,
    target: tuple[float, float],
) -> str:
    """Reason the placement is wrong, or "" if it is right."""
    mujoco.mj_forward(model, data)
    lo, hi = body_box(model, data, body)
    off = math.dist(((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2), target)
    if off > PLACE_TOL:
        return f"off target by {off * 100:.1f} cm"
    if float(data.xmat[body].reshape(3, 3)[2, 2]) < 0.98:
        return "not upright"
    if abs(float(lo[2]) - TABLE_Z) > 0.005:
        return f"not on the table (bottom at {lo[2]:.3f})"
    for b in range(1, model.nbody):
        if b not in arm.gripper_body_ids and touching(model, data, b, arm.gripper_body_ids):
            return "something is left in the gripper"
    return ""


def pick_place_trial(arm: ArmSpec, layout: Layout) -> TrialResult:
    model, binding = build(arm, layout)
    data = home_data(model, binding)
    ctl = Controller(model, binding)
    body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, BOXES[0])
    total = [0, 0.0, 0.0]
    reason = ""
    for skill in ("pick", "place"):
        if skill == "pick":
            ctl.pick(data, body)
        else:
            ctl.place(data, np.array([*layout.target, TABLE_Z]))
        steps, t_ctl, t_phys = run_skill(model, data, ctl)
        total = [total[0] + steps, total[1] + t_ctl, total[2] + t_phys]
        if unstable(data):
            reason = f"{skill}: the simulation became unstable"
        elif ctl.busy:
            reason = f"{skill}: timed out in {ctl.phase}"
        elif ctl.outcome != "ok":
            reason = f"{skill}: {ctl.outcome}"
        if reason:
            break
    if not reason:
        reason = judge(model, data, binding, body, layout.target)
    return TrialResult(
        ok=not reason,
        reason=reason,
        sim_seconds=float(data.time),
        control_steps=int(total[0]),
        controller_wall=float(total[1]),
        physics_wall=float(total[2]),
    )
