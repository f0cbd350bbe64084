"""The controller's view of the world: sensing from qpos, grasp yaw choice, IK validation.

A :class:`World` owns two scratch MjData: one the IK solver moves the arm around in, one that
mirrors the live configuration for questions like "where is that box" and "is it between the
pads". Planning a skill asks it for a grasp yaw (which of the object's horizontal axes to close
the jaws along, whether the fingers would hit a neighbour, which way the last joint should turn
to stay inside its limits) and to check every waypoint is reachable before anything moves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from sim.mujoco._arm import ArmBinding, subtree
from sim.mujoco._ctl_scene import (
    body_box,
    body_corners,
    corridor_top,
    obstacle_geoms,
    top_under,
    touching,
)
from sim.mujoco._gripper import Gripper, measure_gripper, open_fraction
from sim.mujoco._ik import Kinematics, copy_configuration, down_rotation, jaw_yaw

Vec = NDArray[np.float64]

CLEAR = 0.03  # m kept between anything carried (or the fingertips) and obstacles below
EMPTY = 0.03  # jaw opening fraction below which the gripper has closed on nothing
TWO_PI = 2.0 * math.pi


class PlanError(Exception):
    """A skill that cannot start; the message becomes the outcome's reason."""


def wrap(a: float) -> float:
    """Angle in (-pi, pi]."""
    return float(math.atan2(math.sin(a), math.cos(a)))


@dataclass(frozen=True)
class Refs:
    """Where the controller's references are now (the planning cursor's start)."""

    q: Vec
    pos: Vec
    yaw: float
    grip: float


class World:
    def __init__(self, model: mujoco.MjModel, arm: ArmBinding) -> None:
        self.model, self.arm = model, arm
        self.kin = Kinematics(model, arm)
        self.sense = mujoco.MjData(model)
        self.gripper: Gripper = measure_gripper(model, arm)
        self.arm_bodies = subtree(model, arm.root_body_id)
        self.obstacles = obstacle_geoms(model, self.arm_bodies)
        self.home = np.array(arm.home, dtype=np.float64)
        self.last = arm.joint_ids[-1]
        self._sensed = False

    # -- sensing -------------------------------------------------------------------------

    def update(self, data: mujoco.MjData) -> None:
        """Mirror the live configuration (positions and contacts) into the sensing scratch."""
        copy_configuration(self.model, data, self.sense)
        mujoco.mj_fwdPosition(self.model, self.sense)

    def box(self, body: int) -> tuple[Vec, Vec]:
        return body_box(self.model, self.sense, body)

    def box_corners(self, body: int) -> Vec:
        return body_corners(self.model, self.sense, body)

    def site_pos(self) -> Vec:
        out: Vec = self.sense.site_xpos[self.arm.site_id].copy()
        return out

    def fingers_on(self, body: int) -> int:
        """How many gripper bodies touch ``body``."""
        return len(touching(self.model, self.sense, body, self.arm.gripper_body_ids))

    def holding(self, body: int) -> bool:
        need = 2 if len(self.gripper.finger_bodies) >= 2 else 1
        return (
            self.fingers_on(body) >= need
            and open_fraction(self.model, self.arm, self.sense.qpos) > EMPTY
        )

    def bottom_centre(self, body: int) -> Vec:
        lo, hi = self.box(body)
        return np.array([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, lo[2]])

    def heading(self, body: int) -> float:
        """Yaw of the body's x axis (or y axis, if x points up) on the floor plane."""
        rot = self.sense.xmat[body].reshape(3, 3)
        axis = rot[:, 0] if math.hypot(rot[0, 0], rot[1, 0]) > 0.3 else rot[:, 1]
        return float(math.atan2(axis[1], axis[0]))

    def options(self, body: int) -> list[tuple[float, float]]:
        """(jaw heading, object width across the jaws) along the body's horizontal axes."""
        pts = body_corners(self.model, self.sense, body)
        h = self.heading(body)
        out = []
        for k in range(4):
            a = h + k * math.pi / 2
            proj = pts[:, :2] @ np.array([math.cos(a), math.sin(a)])
            out.append((a, float(proj.max() - proj.min())))
        return out

    def top(self, p0: Vec, p1: Vec, radius: float, exclude: frozenset[int] = frozenset()) -> float:
        return corridor_top(self.model, self.sense, self.obstacles, p0, p1, radius, exclude)

    def hand_radius(self, gap: float | None = None) -> float:
        g = self.gripper
        half = (g.gap_open if gap is None else gap) / 2 + g.thick
        return max(half, g.across) + 0.01

    # -- IK ------------------------------------------------------------------------------

    def rot(self, yaw: float) -> Vec:
        return down_rotation(yaw, self.gripper.jaw)

    def solve(
        self,
        data: mujoco.MjData,
        q0: Vec,
        pos: Vec,
        yaw: float,
        iters: int = 200,
    ) -> tuple[Vec, bool]:
        self.kin.load(data)
        res = self.kin.solve(q0, pos, self.rot(yaw), rest=self.home, iters=iters)
        return res.q, res.ok

    def validate(
        self, data: mujoco.MjData, refs: Refs, waypoints: list[tuple[str, Vec, float]]
    ) -> None:
        """Raise PlanError naming the first waypoint the arm cannot reach."""
        q = refs.q
        for phase, pos, yaw in waypoints:
            q, ok = self.solve(data, q, pos, yaw)
            if not ok:
                where = " ".join(f"{v:.3f}" for v in pos)
                raise PlanError(f"unreachable ({phase} at {where})")

    def last_axis_z(self) -> float:
        """World z of the last joint's axis in the scratch pose (-1: turning it lowers yaw)."""
        return float(self.kin.data.xaxis[self.last][2])

    def choose_yaw(
        self,
        data: mujoco.MjData,
        refs: Refs,
        centre: Vec,
        options: list[tuple[float, float]],
        *,
        body: int,
        gap_margin: float,
        turn: float = 0.0,
        narrow: bool = False,
    ) -> tuple[float, float]:
        """Pick the jaw yaw (unwrapped, continuous with refs.yaw) and its object width.

        Prefers yaws whose fingers clear neighbouring objects, then the least travel of the
        last joint; ``turn`` is a yaw change that must also fit the last joint's limits.
        """
        g = self.gripper
        lo, hi = float(self.kin.lo[-1]), float(self.kin.hi[-1])
        best: tuple[float, float, float] | None = None
        reasons = []
        for heading, width in options:
            if width + gap_margin > g.gap_open + 1e-9:
                reasons.append(f"{width * 100:.1f} cm too wide")
                continue
            gap = min(g.gap_open, width + gap_margin)
            tip = float(centre[2]) - g.depth + 0.004
            sweep = (0.0,) if turn == 0.0 else (0.0, 0.25, 0.5, 0.75, 1.0)
            blocked = any(
                self.under_fingers(centre, heading + f * turn, width, gap, body) > tip
                for f in sweep
            )
            short = refs.yaw + wrap(heading - refs.yaw)
            q, ok = self.solve(data, refs.q, centre, short)
            if not ok:
                reasons.append("unreachable")
                continue
            uz = self.last_axis_z() or 1.0
            for k in (-1, 0, 1):
                q_last = float(q[-1]) + k * TWO_PI
                q_turned = q_last + turn / uz
                if not (lo <= q_last <= hi and lo <= q_turned <= hi):
                    continue
                cost = abs(q_last - float(refs.q[-1])) + (10.0 if blocked else 0.0)
                cost += 2.0 * width if narrow else 0.0
                if best is None or cost < best[0]:
                    best = (cost, short + k * TWO_PI * uz, width)
        if best is None:
            raise PlanError("no grasp: " + (", ".join(sorted(set(reasons))) or "joint limits"))
        return best[1], best[2]

    def under_fingers(
        self, centre: Vec, heading: float, width: float, gap: float, body: int
    ) -> float:
        """Top of what lies under the fingers' sweep from ``gap`` closed to ``width``."""
        g = self.gripper
        u = np.array([math.cos(heading), math.sin(heading), 0.0])
        offsets = [side * u * (d / 2 + g.thick / 2) for side in (-1.0, 1.0) for d in (gap, width)]
        pts = np.array([centre + o for o in offsets])
        exclude = subtree(self.model, body) if body >= 0 else frozenset()
        radius = max(g.thick / 2, g.across) + 0.002
        return top_under(self.model, self.sense, self.obstacles, pts, radius, exclude)

    def refs_from(self, data: mujoco.MjData, q: Vec, grip: float) -> Refs:
        self.kin.load(data)
        pos, rot = self.kin.fk(q)
        return Refs(q=q, pos=pos, yaw=jaw_yaw(rot, self.gripper.jaw), grip=grip)
