"""Pushing a body by hand in a live episode: MuJoCo's own mouse spring.

The render thread finds what was grabbed and where the mouse drags it (``mjv_select``,
``mjv_initPerturb``, ``mjv_movePerturb`` against the scene it just drew); the physics thread
pulls the grabbed point toward that target with ``mjv_applyPerturbForce`` before every physics
step, as MuJoCo's ``simulate`` does. The two threads own different ``MjData`` (the render world
is restored from the live world's snapshots), so what crosses between them is a plain, frozen
:class:`Push`, never a MuJoCo struct.

A push is outside the recorded decisions, so an episode pushed by hand cannot be replayed
exactly; the live run marks it (``config.perturbed``) and replay refuses it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import mujoco  # type: ignore[import-untyped]
import numpy as np

Vec3 = tuple[float, float, float]


def _vec(a: object) -> Vec3:
    x, y, z = (float(v) for v in np.asarray(a, dtype=float).reshape(3))
    return (x, y, z)


@dataclass(frozen=True)
class Push:
    """One grabbed body: its point ``localpos`` (body frame) is pulled toward ``refselpos``."""

    obj: str  # the scene object grabbed
    body: int
    localpos: Vec3
    refpos: Vec3
    refselpos: Vec3
    refquat: tuple[float, float, float, float]
    localmass: float
    scale: float

    def perturb(self) -> mujoco.MjvPerturb:
        pert = mujoco.MjvPerturb()
        pert.select = self.body
        pert.active = int(mujoco.mjtPertBit.mjPERT_TRANSLATE)
        pert.localpos[:] = self.localpos
        pert.refpos[:] = self.refpos
        pert.refselpos[:] = self.refselpos
        pert.refquat[:] = self.refquat
        pert.localmass = self.localmass
        pert.scale = self.scale
        return pert


def _from(obj: str, pert: mujoco.MjvPerturb) -> Push:
    q = [float(v) for v in pert.refquat]
    return Push(
        obj, int(pert.select), _vec(pert.localpos), _vec(pert.refpos), _vec(pert.refselpos),
        (q[0], q[1], q[2], q[3]), float(pert.localmass), float(pert.scale),
    )  # fmt: skip


def grab(
    model: mujoco.MjModel, data: mujoco.MjData, scene: mujoco.MjvScene, obj: str, body: int,
    point: Vec3,
) -> Push:  # fmt: skip
    """Start pushing ``body`` (the object ``obj``) at the world ``point`` clicked on it."""
    pert = mujoco.MjvPerturb()
    pert.select = body
    rel = np.asarray(point, dtype=float) - data.xpos[body]
    pert.localpos[:] = data.xmat[body].reshape(3, 3).T @ rel
    mujoco.mjv_initPerturb(model, data, scene, pert)
    pert.active = int(mujoco.mjtPertBit.mjPERT_TRANSLATE)
    return _from(obj, pert)


def drag(
    model: mujoco.MjModel, data: mujoco.MjData, scene: mujoco.MjvScene, push: Push,
    reldx: float, reldy: float, *, horizontal: bool = False,
) -> Push:  # fmt: skip
    """Move the push's target by a mouse motion (fractions of the picture's height, y up): in
    the camera's vertical plane, or the horizontal one with ``horizontal`` (Shift)."""
    pert = push.perturb()
    action = mujoco.mjtMouse.mjMOUSE_MOVE_H if horizontal else mujoco.mjtMouse.mjMOUSE_MOVE_V
    mujoco.mjv_movePerturb(model, data, int(action), reldx, reldy, scene, pert)
    return replace(_from(push.obj, pert), obj=push.obj)


def apply(model: mujoco.MjModel, data: mujoco.MjData, push: Push | None) -> None:
    """Set the spring's force for the next physics step (clears every applied force first)."""
    data.xfrc_applied[:] = 0.0
    if push is not None:
        mujoco.mjv_applyPerturbForce(model, data, push.perturb())
