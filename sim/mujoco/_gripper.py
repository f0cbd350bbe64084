"""What the controller needs to know about a parallel-jaw gripper, measured by physics.

Nothing here is read from names or hand-written constants. On a scratch copy of the model the
arm is held at its home posture, the gripper actuators are driven fully open, the simulation is
stepped until the hand's joints come to rest, and the shapes are measured; then the same closed
(with nothing between the jaws). Measuring the settled simulation, not a kinematic guess, is
what finds the pads of a gripper whose actuator drives a linkage tied to them by equality
constraints, where moving the actuated joint alone leaves the pads where they were.

The fingers are the hand's *colliding* geoms that move relative to the end-effector site
between open and closed (visual-only geoms cannot hold anything); the jaw axis is the direction
they move in; the gaps, depth, thickness and width come from the true collision shapes
(:mod:`._support`: mesh vertices, exact primitive extents), never from bounding boxes.
"""

from __future__ import annotations

import copy
import math
import weakref
from dataclasses import dataclass

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from sim.mujoco._arm import ArmBinding, actuated_joints, subtree
from sim.mujoco._support import extents

Vec = NDArray[np.float64]

SETTLE_VEL = 1e-3  # m/s or rad/s: every hand joint slower than this counts as at rest ...
SETTLE_FOR = 0.02  # s ... for this long
MIN_SECONDS = 0.05  # the actuators need a few steps before "not moving" means "arrived"
MAX_SECONDS = 3.0  # a gripper still moving after this is measured where it is
MOVED = 5e-4  # m: a geom that moves less than this between open and closed is not a finger
_SNAP = 1e-9  # jaw-axis components below this are float noise of the posture

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
    # the colliding finger geoms of each jaw: on the +jaw side, on the -jaw side
    finger_geoms: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    settled: bool = True  # both settings came to rest within MAX_SECONDS
    settle_seconds: float = 0.0  # simulated time the two settings took together

    def ctrl(self, grip: float) -> list[float]:
        """Actuator controls for ``grip`` in [0, 1] (0 open, 1 closed)."""
        return [o + grip * (c - o) for o, c in zip(self.open_ctrl, self.closed_ctrl, strict=True)]

    def grip_for_gap(self, gap: float) -> float:
        """The grip setting whose pad gap is ``gap`` (clipped to the jaw's travel)."""
        span = self.gap_open - self.gap_closed
        return float(np.clip((self.gap_open - gap) / span, 0.0, 1.0)) if span > 0 else 0.0


# Per model (the check's bare arm, each composed scene): PhysicsWorld, the controller and the
# scene index all ask for the same model's gripper, and a measurement takes a few hundred steps.
_CACHE: weakref.WeakKeyDictionary[mujoco.MjModel, dict[ArmBinding, Gripper]] = (
    weakref.WeakKeyDictionary()
)


def measure_gripper(model: mujoco.MjModel, arm: ArmBinding) -> Gripper:
    """The gripper of ``arm`` in ``model``, measured once per model (see the module doc)."""
    per_model = _CACHE.setdefault(model, {})
    found = per_model.get(arm)
    if found is None:
        found = per_model[arm] = _measure(model, arm)
    return found


def _scratch_model(model: mujoco.MjModel, arm: ArmBinding) -> mujoco.MjModel:
    """A copy without gravity, in which only the arm's own geoms collide.

    Without gravity the settled fingers do not depend on the home posture (the controller
    grasps pointing down, home need not); without the scene's geoms nothing can be between
    the jaws or press on the hand, so a bare arm and every scene it is composed into measure
    the same.
    """
    scratch = copy.copy(model)
    scratch.opt.gravity[:] = 0.0
    arm_bodies = subtree(model, arm.root_body_id) if arm.root_body_id >= 0 else frozenset()
    outside = ~np.isin(model.geom_bodyid, list(arm_bodies))
    scratch.geom_contype[outside] = 0
    scratch.geom_conaffinity[outside] = 0
    return scratch


def _hand_dofs(model: mujoco.MjModel, arm: ArmBinding) -> list[int]:
    """Degrees of freedom of the hand's own joints (fingers, linkages), not the arm's."""
    arm_joints = set(arm.joint_ids)
    out: list[int] = []
    for j in range(model.njnt):
        if int(model.jnt_bodyid[j]) in arm.gripper_body_ids and j not in arm_joints:
            adr = int(model.jnt_dofadr[j])
            kind = int(model.jnt_type[j])
            width = {mujoco.mjtJoint.mjJNT_FREE: 6, mujoco.mjtJoint.mjJNT_BALL: 3}.get(kind, 1)
            out.extend(range(adr, adr + width))
    if not out:  # a gripper whose actuator drives joints outside the hand subtree
        out = [
            int(model.jnt_dofadr[j]) for a in arm.gripper_ids for j, _ in actuated_joints(model, a)
        ]
    return out


def _settle(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    arm: ArmBinding,
    ctrls: tuple[float, ...],
    dofs: list[int],
) -> tuple[bool, float]:
    """Drive the gripper to ``ctrls`` and step until its joints rest; (settled, seconds)."""
    for a, c in zip(arm.gripper_ids, ctrls, strict=True):
        data.ctrl[a] = c
    dt = float(model.opt.timestep)
    first, need = math.ceil(MIN_SECONDS / dt), max(1, math.ceil(SETTLE_FOR / dt))
    calm, steps = 0, 0
    for steps in range(1, math.ceil(MAX_SECONDS / dt) + 1):
        mujoco.mj_step(model, data)
        still = float(np.max(np.abs(data.qvel[dofs]))) < SETTLE_VEL if dofs else True
        calm = calm + 1 if still and steps >= first else 0
        if calm >= need:
            break
    mujoco.mj_kinematics(model, data)  # geom poses of the final qpos (mj_step leaves the last)
    return calm >= need, steps * dt


def _site_poses(data: mujoco.MjData, arm: ArmBinding, geoms: list[int]) -> tuple[Vec, Vec]:
    """Positions (n, 3) and rotations (n, 3, 3) of ``geoms`` in the site frame."""
    site_pos = data.site_xpos[arm.site_id]
    site_rot = data.site_xmat[arm.site_id].reshape(3, 3)
    pos: Vec = (data.geom_xpos[geoms] - site_pos) @ site_rot
    rot: Vec = site_rot.T @ data.geom_xmat[geoms].reshape(-1, 3, 3)
    return pos, rot


def _settled_poses(
    model: mujoco.MjModel, arm: ArmBinding, geoms: list[int]
) -> tuple[tuple[Vec, Vec], tuple[Vec, Vec], bool, float]:
    """Site-frame poses of ``geoms`` with the gripper settled open, then closed."""
    scratch = _scratch_model(model, arm)
    data = mujoco.MjData(scratch)
    for adr, act, q in zip(arm.qpos_adr, arm.actuator_ids, arm.home, strict=True):
        data.qpos[adr] = q
        data.ctrl[act] = q * float(model.actuator_gear[act, 0])
    dofs = _hand_dofs(model, arm)
    ok_open, t_open = _settle(scratch, data, arm, arm.gripper_open, dofs)
    opened = _site_poses(data, arm, geoms)
    ok_closed, t_closed = _settle(scratch, data, arm, arm.gripper_closed, dofs)
    closed = _site_poses(data, arm, geoms)
    return opened, closed, ok_open and ok_closed, t_open + t_closed


def _jaw_axis(moves: Vec) -> Vec:
    """Principal direction (site xy plane) of the fingers' closing displacements ``moves``.

    Oriented so that the first finger geom closes towards -jaw (it sits on the +jaw side),
    which is the convention the controller's jaw yaw has always used.
    """
    flat = moves[:, :2]
    _, vecs = np.linalg.eigh(flat.T @ flat)
    jaw = np.array([vecs[0, 1], vecs[1, 1], 0.0])
    jaw[np.abs(jaw) < _SNAP] = 0.0
    jaw /= np.linalg.norm(jaw) or 1.0
    along = flat @ jaw[:2]
    lead = int(np.flatnonzero(np.abs(along) >= 0.5 * np.abs(along).max())[0])
    out: Vec = (-jaw if along[lead] > 0 else jaw) + 0.0  # + 0.0: no negative zeros
    return out


def _sides(moves: Vec, centres: Vec, jaw: Vec) -> tuple[list[int], list[int]]:
    """Indices of the +jaw and -jaw side geoms: by the way each closes, else where it is."""
    along = moves @ jaw
    clear = np.abs(along) >= max(0.1 * float(np.abs(along).max()), 1e-12)
    plus = [i for i in range(len(along)) if clear[i] and along[i] < 0]
    minus = [i for i in range(len(along)) if clear[i] and along[i] > 0]
    where = centres @ jaw
    mid = (where[plus].mean() + where[minus].mean()) / 2 if plus and minus else 0.0
    for i in np.flatnonzero(~clear):
        (plus if where[i] > mid else minus).append(int(i))
    return sorted(plus), sorted(minus)


def _measure(model: mujoco.MjModel, arm: ArmBinding) -> Gripper:
    hand = [
        g
        for g in range(model.ngeom)
        if int(model.geom_bodyid[g]) in arm.gripper_body_ids
        and (model.geom_contype[g] or model.geom_conaffinity[g])
    ]
    (p_open, r_open), (p_closed, r_closed), settled, seconds = _settled_poses(model, arm, hand)
    # how far each geom's surface moves: its centre's shift plus its turn times its radius
    turn = np.linalg.norm((r_open - r_closed).reshape(len(hand), 9), axis=1) / math.sqrt(2)
    shift = np.linalg.norm(p_open - p_closed, axis=1) + model.geom_rbound[hand] * turn
    idx = np.flatnonzero(shift > MOVED)
    if len(idx) == 0:  # nothing moves: a gripper that opens 0 cm (the check says so)
        return Gripper(
            jaw=np.array([1.0, 0.0, 0.0]),
            gap_open=0.0,
            gap_closed=0.0,
            depth=0.0,
            thick=0.0,
            across=0.0,
            finger_bodies=frozenset(),
            open_ctrl=arm.gripper_open,
            closed_ctrl=arm.gripper_closed,
            settled=settled,
            settle_seconds=seconds,
        )
    fingers = [hand[i] for i in idx]
    moves = p_closed[idx] - p_open[idx]
    jaw = _jaw_axis(moves)
    plus, minus = _sides(moves, p_open[idx], jaw)
    axes = np.array([jaw, np.cross([0.0, 0.0, 1.0], jaw), [0.0, 0.0, 1.0]])

    def spans(pos: Vec, rot: Vec) -> tuple[Vec, Vec]:
        """(lo, hi) per finger geom along (jaw, across, approach)."""
        pairs = [extents(model, g, pos[i], rot[i], axes) for g, i in zip(fingers, idx, strict=True)]
        return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])

    def gap(lo: Vec, hi: Vec) -> float:
        # a gripper with one moving jaw closes against its approach axis
        inner_plus = float(lo[plus, 0].min()) if plus else 0.0
        inner_minus = float(hi[minus, 0].max()) if minus else 0.0
        return inner_plus - inner_minus

    lo_o, hi_o = spans(p_open, r_open)
    lo_c, hi_c = spans(p_closed, r_closed)
    thick = max(
        (float(hi_o[side, 0].max() - lo_o[side, 0].min()) for side in (plus, minus) if side),
        default=0.0,
    )
    across = max(float(np.max(hi_o[:, 1])), float(np.max(-lo_o[:, 1])))
    across = max(across, float(np.max(hi_c[:, 1])), float(np.max(-lo_c[:, 1])))
    return Gripper(
        jaw=jaw,
        gap_open=max(gap(lo_o, hi_o), 0.0),
        gap_closed=max(gap(lo_c, hi_c), 0.0),
        depth=max(float(hi_o[:, 2].max()), float(hi_c[:, 2].max())),
        thick=thick,
        across=across,
        finger_bodies=frozenset(int(model.geom_bodyid[g]) for g in fingers),
        open_ctrl=arm.gripper_open,
        closed_ctrl=arm.gripper_closed,
        finger_geoms=(tuple(fingers[i] for i in plus), tuple(fingers[i] for i in minus)),
        settled=settled,
        settle_seconds=seconds,
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
