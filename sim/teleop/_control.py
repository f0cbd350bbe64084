"""Cartesian teleoperation of any arm in a :class:`~sim.mujoco.PhysicsWorld`.

A person (through keys, a gamepad, a SpaceMouse) gives an end-effector velocity each control
step; :class:`Teleop` integrates it into a target pose of the end-effector site and, every
control period of the world, moves the arm there with the arm's own damped-least-squares IK
(``Kinematics.solve``, warm-started, a few iterations, as the skill controller tracks its
references), writing position-servo targets with gravity fed forward. It installs itself as
the world's manual hook (:meth:`PhysicsWorld.set_manual`), so ``world.tick()`` runs it instead
of the skill controller and everything else about a tick (perception, cooking) is unchanged.

Limits are enforced, never fought: the target is clamped to a workspace box, the IK clips
every joint to its range, and when the arm cannot follow (a joint at its limit, out of reach)
the target is pulled back to the pose the arm reached, so releasing the stick never makes it
lurch toward a pose it was held from. :attr:`StepReport.limits` names what held it.

Only :class:`~sim.mujoco.ArmBinding` data and the measured gripper are used, never names, so
shipped arms and profiles alike work. One control step is one world tick (``world.delta``);
the commanded velocity is integrated over each of its control periods.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from sim.mujoco import (
    Kinematics,
    PhysicsWorld,
    mat_to_quat,
    measure_gripper,
    open_fraction,
    quat_to_mat,
)
from sim.teleop._demo import ACTION_NAMES

Vec = NDArray[np.float64]

MAX_LINEAR = 0.25  # m/s at speed 1: a brick crosses the table in about two seconds
MAX_ANGULAR = 1.5  # rad/s at speed 1
TRACK_ITERS = 6  # IK iterations per control period, warm-started (as the skill controller)
FOLLOW_POS = 2e-3  # m: IK error above which the arm is "held" and the target pulled back
FOLLOW_ROT = 2e-2  # rad
AT_LIMIT = 1e-3  # rad or m from a joint's range end: that joint is what held the arm
FLOOR_CLEARANCE = 0.002  # m kept between the fingertips (pointing down) and the surface
WORLD = "world"  # a Command's frame: world axes (what the controller tracks, what is recorded)
SCREEN = "screen"  # (right, forward, up) as seen through a camera: what hand devices give


@dataclass(frozen=True)
class Command:
    """One control step's input. ``linear`` m/s and ``angular`` rad/s at ``speed`` 1 (scaled by
    it, then clipped to the teleop's maxima); ``grip`` 0 open … 1 closed, or None to keep it;
    with ``clutch`` released everything is ignored and the arm holds where it is.

    ``frame`` says what the axes are: :data:`WORLD` (x, y, z of the scene: what
    :class:`Teleop` tracks and a demonstration records) or :data:`SCREEN` (right, forward, up
    as seen through the camera being looked at: what the keys, a gamepad and a SpaceMouse
    give). ``sim.teleop.to_world`` turns the one into the other; :class:`Teleop` refuses a
    screen command, so none is ever applied along the wrong axes."""

    linear: tuple[float, float, float] = (0.0, 0.0, 0.0)
    angular: tuple[float, float, float] = (0.0, 0.0, 0.0)
    grip: float | None = None
    speed: float = 1.0
    clutch: bool = True
    frame: str = WORLD

    @staticmethod
    def from_action(action: Vec) -> Command:
        """The command that applies a recorded action (see ``ACTION_NAMES``) as it was."""
        a = [float(v) for v in action]
        return Command((a[0], a[1], a[2]), (a[3], a[4], a[5]), a[6])


@dataclass(frozen=True)
class StepReport:
    """What one control step did: the action actually applied (``ACTION_NAMES`` layout:
    velocities after speed scaling, clipping and the clutch; the grip setting in force) and
    the limits that held the arm during it, e.g. ``workspace z min``, ``joint elbow max``,
    ``reach``."""

    action: Vec
    limits: tuple[str, ...]


def _rotation(w: Vec) -> Vec:
    """The rotation matrix of rotation vector ``w`` (Rodrigues)."""
    theta = math.sqrt(float(w @ w))
    if theta == 0.0:
        return np.eye(3)
    k = w / theta
    kx = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    out: Vec = np.eye(3) + math.sin(theta) * kx + (1.0 - math.cos(theta)) * (kx @ kx)
    return out


def default_workspace(world: PhysicsWorld) -> tuple[Vec, Vec]:
    """A box over the fixed surfaces of the scene (the table): their footprint, from just
    above the highest top (fingertips pointing down stay clear of it) to 0.6 m above it.
    A scene without a surface gets a 1.2 m box around the arm's home."""
    surfaces = [n for n in world.graph.nodes.values() if {"fixed", "surface"} <= n.tags]
    depth = measure_gripper(world.model, world.scene.arm).depth
    if not surfaces:
        site = world.data.site_xpos[world.scene.arm.site_id]
        return site - 0.6, site + 0.6
    lo = np.array([min(n.pos[i] - n.size[i] for n in surfaces) for i in range(2)])
    hi = np.array([max(n.pos[i] + n.size[i] for n in surfaces) for i in range(2)])
    top = max(n.pos[2] + n.size[2] for n in surfaces)
    z0 = top + depth + FLOOR_CLEARANCE
    return np.array([lo[0], lo[1], z0]), np.array([hi[0], hi[1], top + 0.6])


class Teleop:
    """Drives a world's arm from :class:`Command` s; see the module docstring.

    Constructing it takes the arm over (``world.set_manual``); :meth:`close` gives it back.
    Call :meth:`reset` after ``world.reset`` so the target starts where the arm is.
    """

    def __init__(
        self,
        world: PhysicsWorld,
        *,
        workspace: tuple[Vec, Vec] | None = None,
        max_linear: float = MAX_LINEAR,
        max_angular: float = MAX_ANGULAR,
    ) -> None:
        self.world = world
        model, arm = world.model, world.scene.arm
        self.arm = arm
        self.kin = Kinematics(model, arm)
        self.gripper = measure_gripper(model, arm)
        lo, hi = workspace if workspace is not None else default_workspace(world)
        self.workspace = (np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64))
        self.max_linear, self.max_angular = float(max_linear), float(max_angular)
        self.period = world.control_period  # seconds integrated per control period
        self._home = np.array(arm.home, dtype=np.float64)
        self._redundant = arm.n > 6
        self._qadr, self._dadr = list(arm.qpos_adr), list(arm.dof_adr)
        self._acts, self._grips = list(arm.actuator_ids), list(arm.gripper_ids)
        self._kp = np.array([float(model.actuator_gainprm[a, 0]) for a in arm.actuator_ids])
        self._gear = np.array([float(model.actuator_gear[a, 0]) for a in arm.actuator_ids])
        root = arm.root_body_id
        chain = [b for b in range(model.nbody) if root >= 0 and _below(model, b, root)]
        self._feedforward = not any(model.body_gravcomp[b] for b in chain)
        self._bias = np.zeros(model.nv)
        self._joint_names = [
            mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint {j}"
            for j in arm.joint_ids
        ]
        # the command in force for the current control step (set by apply)
        self._v = np.zeros(3)
        self._w = np.zeros(3)
        self._limits: list[str] = []
        self.reset()
        world.set_manual(self)

    # -- public surface --------------------------------------------------------------------
    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(self._joint_names)

    @property
    def target(self) -> tuple[Vec, Vec]:
        """The target site pose (position, rotation matrix) the arm is tracking."""
        return self._pos.copy(), self._rot.copy()

    @property
    def grip(self) -> float:
        return self._grip

    def reset(self) -> None:
        """Take the target, joint references and grip from the arm as it is now."""
        data = self.world.data
        self._q = np.array(data.qpos[self._qadr], dtype=np.float64)
        self.kin.load(data)
        self._pos, self._rot = self.kin.fk(self._q)
        self._grip = float(np.clip(1.0 - open_fraction(self.world.model, self.arm, data.qpos),
                                   0.0, 1.0))  # fmt: skip
        self._written: tuple[tuple[float, ...], float] | None = None

    def action_for(self, cmd: Command) -> Vec:
        """The action ``cmd`` amounts to now (speed applied, clipped, clutch honoured)."""
        if cmd.frame != WORLD:
            raise ValueError(
                f"a {cmd.frame!r}-frame command: turn it into a world one first "
                "(sim.teleop.to_world with the axes of the camera it was given through)"
            )
        out = np.zeros(len(ACTION_NAMES))
        if cmd.clutch:
            s = max(0.0, float(cmd.speed))
            out[:3] = _clip_norm(np.asarray(cmd.linear, dtype=np.float64) * s, self.max_linear)
            out[3:6] = _clip_norm(np.asarray(cmd.angular, dtype=np.float64) * s, self.max_angular)
        grip = self._grip if cmd.grip is None or not cmd.clutch else cmd.grip
        out[6] = min(max(float(grip), 0.0), 1.0)
        return out

    def apply(self, cmd: Command) -> StepReport:
        """Run one control step (one world tick) under ``cmd``."""
        action = self.hold(cmd)
        self.world.tick()
        return StepReport(action, tuple(dict.fromkeys(self._limits)))

    def hold(self, cmd: Command) -> Vec:
        """Put ``cmd`` in force for the ticks to come without ticking: for a world something
        else ticks (a live episode's runner, during a takeover). Returns the action applied."""
        action = self.action_for(cmd)
        self._v, self._w = action[:3], action[3:6]
        self._grip = float(action[6])
        self._limits = []
        return action

    def close(self) -> None:
        """Give the arm back to the skill controller."""
        if self.world.manual is self:
            self.world.set_manual(None)

    # -- the manual hook: once per control period ------------------------------------------
    def step(self, data: mujoco.MjData) -> None:
        if self._v.any() or self._w.any():
            self._track(data)
        self._write(data)

    def _track(self, data: mujoco.MjData) -> None:
        pos = self._pos + self._v * self.period
        lo, hi = self.workspace
        for i, axis in enumerate("xyz"):
            if pos[i] < lo[i]:
                pos[i] = lo[i]
                self._limits.append(f"workspace {axis} min")
            elif pos[i] > hi[i]:
                pos[i] = hi[i]
                self._limits.append(f"workspace {axis} max")
        # re-normalised through the quaternion, so a long session does not drift off SO(3)
        rot = quat_to_mat(mat_to_quat(_rotation(self._w * self.period) @ self._rot))
        kin = self.kin
        kin.load(data)
        res = kin.solve(
            self._q, pos, rot, rest=self._home if self._redundant else None,
            iters=TRACK_ITERS, tol_pos=2e-4, tol_rot=2e-3, restarts=False,
        )  # fmt: skip
        self._q = res.q
        if res.pos_err > FOLLOW_POS or res.rot_err > FOLLOW_ROT:
            # held: the target becomes the pose reached, so it cannot wind up behind a limit
            self._pos, self._rot = kin.fk(res.q)
            held = [
                f"joint {name} {'min' if q - lo_j < AT_LIMIT else 'max'}"
                for name, q, lo_j, hi_j in zip(
                    self._joint_names, res.q, kin.lo, kin.hi, strict=True
                )
                if q - lo_j < AT_LIMIT or hi_j - q < AT_LIMIT
            ]
            self._limits.extend(held or ["reach"])
        else:
            self._pos, self._rot = pos, rot

    def _write(self, data: mujoco.MjData) -> None:
        key = (tuple(float(v) for v in self._q), self._grip)
        if key == self._written:
            return  # unchanged targets: the controls already hold them
        self._written = key
        ctrl = self._gear * self._q
        if self._feedforward:
            kin = self.kin
            kin.load(data)
            kin.set_arm(self._q)
            mujoco.mj_rne(self.world.model, kin.data, 0, self._bias)
            ctrl = ctrl + self._bias[self._dadr] / (self._gear * self._kp)
        data.ctrl[self._acts] = ctrl
        data.ctrl[self._grips] = self.gripper.ctrl(self._grip)


def _clip_norm(v: Vec, limit: float) -> Vec:
    n = math.sqrt(float(v @ v))
    out: Vec = v * (limit / n) if n > limit else v
    return out


def _below(model: mujoco.MjModel, body: int, root: int) -> bool:
    while body > 0:
        if body == root:
            return True
        body = int(model.body_parentid[body])
    return body == root
