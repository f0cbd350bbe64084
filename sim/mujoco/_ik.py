"""Damped-least-squares inverse kinematics for one arm, on a private MjData.

The solver never touches the caller's MjData: it copies the scene configuration into its own
scratch data, moves only the arm joints there and reads the end-effector site pose and its
Jacobian (`mj_jacSite`). Targets are full 6-D poses; the controller uses "gripper pointing down,
jaws at yaw psi" (:func:`down_rotation`). A redundant arm (more joints than the 6-D task) is
pulled toward its comfortable posture in the Jacobian's null space, so a 7-joint arm does not
drift into odd elbow configurations over a long sequence of skills.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from sim.mujoco._arm import ArmBinding

Vec = NDArray[np.float64]

ROT_WEIGHT = 0.3  # metres per radian: how much an orientation error counts against a position one
DAMPING = 0.02  # DLS damping (task units); keeps steps bounded near singularities
MAX_STEP = 0.25  # rad per iteration: a bounded step keeps the iteration on one IK branch
NULL_GAIN = 0.3  # pull toward the rest posture in the null space (redundant arms only)


def down_rotation(yaw: float, jaw: Vec) -> Vec:
    """Site orientation with the site's +z pointing down and the jaw axis at heading ``yaw``.

    ``jaw`` is the jaw-closing direction in the site frame (perpendicular to the site's z).
    """
    c, s = math.cos(yaw), math.sin(yaw)
    # columns: jaw axis, (down x jaw axis), down -- written out, np.cross is slow on 3-vectors
    world = np.array([[c, s, 0.0], [s, -c, 0.0], [0.0, 0.0, -1.0]])
    n = math.hypot(float(jaw[0]), float(jaw[1]))
    jx, jy = float(jaw[0]) / n, float(jaw[1]) / n
    site = np.array([[jx, -jy, 0.0], [jy, jx, 0.0], [0.0, 0.0, 1.0]])
    out: Vec = world @ site.T
    return out


def jaw_yaw(rot: Vec, jaw: Vec) -> float:
    """Heading of the jaw axis of a site with orientation ``rot`` (projected on the floor)."""
    a = rot @ jaw
    return float(np.arctan2(a[1], a[0]))


def copy_configuration(model: mujoco.MjModel, src: mujoco.MjData, dst: mujoco.MjData) -> None:
    """Copy what positions the scene (``qpos``, mocap poses) from ``src`` into ``dst``."""
    dst.qpos[:] = src.qpos
    if model.nmocap:
        dst.mocap_pos[:] = src.mocap_pos
        dst.mocap_quat[:] = src.mocap_quat


def rotation_error(target: Vec, current: Vec) -> Vec:
    """World-frame rotation vector taking ``current`` to ``target`` (|angle| <= pi)."""
    qt, qc, res = np.zeros(4), np.zeros(4), np.zeros(3)
    mujoco.mju_mat2Quat(qt, target.reshape(-1))
    mujoco.mju_mat2Quat(qc, current.reshape(-1))
    mujoco.mju_subQuat(res, qt, qc)  # local frame of current
    out: Vec = current @ res
    return out


def mat_to_quat(rot: Vec) -> list[float]:
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(rot).reshape(-1))
    return [float(v) for v in q]


def quat_to_mat(quat: list[float]) -> Vec:
    m = np.zeros(9)
    mujoco.mju_quat2Mat(m, np.asarray(quat, dtype=np.float64))
    out: Vec = m.reshape(3, 3)
    return out


def slerp(q0: list[float], q1: list[float], s: float) -> list[float]:
    a, b = np.asarray(q0), np.asarray(q1)
    if float(a @ b) < 0:
        b = -b
    vel = np.zeros(3)
    mujoco.mju_subQuat(vel, b, a)
    out = a.copy()
    mujoco.mju_quatIntegrate(out, vel, s)
    return [float(v) for v in out]


@dataclass(frozen=True)
class IKResult:
    q: Vec
    pos_err: float  # metres
    rot_err: float  # radians
    ok: bool


class Kinematics:
    """Forward kinematics and the site Jacobian of one arm, on scratch data."""

    def __init__(self, model: mujoco.MjModel, arm: ArmBinding) -> None:
        self.model, self.arm = model, arm
        self.data = mujoco.MjData(model)
        self.qadr = np.array(arm.qpos_adr, dtype=np.int64)
        self.dadr = np.array(arm.dof_adr, dtype=np.int64)
        lo = np.full(arm.n, -np.inf)
        hi = np.full(arm.n, np.inf)
        for i, j in enumerate(arm.joint_ids):
            if model.jnt_limited[j]:
                lo[i], hi[i] = model.jnt_range[j]
        self.lo, self.hi = lo + 1e-4, hi - 1e-4
        self._jacp = np.zeros((3, model.nv))
        self._jacr = np.zeros((3, model.nv))
        self._jac = np.zeros((6, arm.n))
        self._damp = np.eye(6) * DAMPING**2

    def load(self, data: mujoco.MjData) -> None:
        """Copy the scene configuration (not the arm's target) from ``data``."""
        copy_configuration(self.model, data, self.data)

    def set_arm(self, q: Vec) -> None:
        self.data.qpos[self.qadr] = q
        mujoco.mj_kinematics(self.model, self.data)
        mujoco.mj_comPos(self.model, self.data)

    def site(self) -> tuple[Vec, Vec]:
        s = self.arm.site_id
        pos: Vec = self.data.site_xpos[s].copy()
        rot: Vec = self.data.site_xmat[s].reshape(3, 3).copy()
        return pos, rot

    def fk(self, q: Vec) -> tuple[Vec, Vec]:
        self.set_arm(q)
        return self.site()

    def jacobian(self) -> Vec:
        mujoco.mj_jacSite(self.model, self.data, self._jacp, self._jacr, self.arm.site_id)
        jac = self._jac  # reused: this runs every IK iteration, many times per tick
        np.take(self._jacp, self.dadr, axis=1, out=jac[:3])
        np.take(self._jacr, self.dadr, axis=1, out=jac[3:])
        jac[3:] *= ROT_WEIGHT
        out: Vec = jac.copy()
        return out

    def clip(self, q: Vec) -> Vec:
        # np.minimum/np.maximum: the same result as np.clip at a third of its call overhead
        out: Vec = np.minimum(np.maximum(q, self.lo), self.hi)
        return out

    def solve(
        self,
        q0: Vec,
        pos: Vec,
        rot: Vec,
        *,
        rest: Vec | None = None,
        iters: int = 150,
        tol_pos: float = 5e-4,
        tol_rot: float = 5e-3,
        restarts: bool = True,
    ) -> IKResult:
        """Move the arm from ``q0`` toward the site pose (pos, rot); call :meth:`load` first.

        A wrist roll that runs into its limit while turning the short way round is the usual
        local minimum; with ``restarts`` a failed solve is retried with the last joint started
        near either limit and mid-range, and the best result is kept.
        """
        best = self._descend(q0, pos, rot, rest, iters, tol_pos, tol_rot)
        # each bound on its own: -inf + inf (an unlimited last joint) is a numpy RuntimeWarning
        if best.ok or not restarts or not (np.isfinite(self.lo[-1]) and np.isfinite(self.hi[-1])):
            return best
        lo, hi = float(self.lo[-1]), float(self.hi[-1])
        for last in (lo + 0.2 * (hi - lo), 0.5 * (lo + hi), hi - 0.2 * (hi - lo)):
            start = np.asarray(q0, dtype=np.float64).copy()
            start[-1] = last
            res = self._descend(start, pos, rot, rest, iters, tol_pos, tol_rot)
            if res.ok:
                return res
            if res.pos_err + ROT_WEIGHT * res.rot_err < best.pos_err + ROT_WEIGHT * best.rot_err:
                best = res
        return best

    def _descend(
        self,
        q0: Vec,
        pos: Vec,
        rot: Vec,
        rest: Vec | None,
        iters: int,
        tol_pos: float,
        tol_rot: float,
    ) -> IKResult:
        q = self.clip(np.asarray(q0, dtype=np.float64).copy())
        n = q.size
        redundant = rest is not None and n > 6
        eye6 = self._damp
        for _ in range(iters + 1):
            p, r = self.fk(q)
            ep = pos - p
            er = rotation_error(rot, r)
            pe, re = math.sqrt(float(ep @ ep)), math.sqrt(float(er @ er))
            if pe < tol_pos and re < tol_rot:
                break
            jac = self.jacobian()
            err = np.concatenate([ep, ROT_WEIGHT * er])
            dq = jac.T @ np.linalg.solve(jac @ jac.T + eye6, err)
            if redundant:
                assert rest is not None
                # the exact projector: the damped one leaks into the task and stalls convergence
                null = np.eye(n) - np.linalg.pinv(jac, rcond=1e-3) @ jac
                dq += null @ (NULL_GAIN * (rest - q))
            big = float(np.max(np.abs(dq)))
            if big > MAX_STEP:
                dq *= MAX_STEP / big
            q = self.clip(q + dq)
        return IKResult(q=q, pos_err=pe, rot_err=re, ok=pe < 5 * tol_pos and re < 5 * tol_rot)
