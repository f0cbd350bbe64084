"""Skill planners: each turns a request into segments, or a PlanError before anything moves.

Every skill follows the same shape: travel at a height that clears whatever lies along the way
(the corridor between start and goal, widened by the hand or the carried object), come straight
down to the work, do the work slowly, go straight back up. Grasps close the jaws across one of
the object's horizontal axes, at a depth below its top the pads can hold, and only as wide open
as the object needs so the fingers do not brush its neighbours.
"""

from __future__ import annotations

import math
from typing import Any

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from sim.mujoco._ctl_route import SLOW, SPEED, Route, Segment
from sim.mujoco._ctl_world import CLEAR, PlanError, Refs, World, wrap

Vec = NDArray[np.float64]
Plan = tuple[list[Segment], dict[str, Any]]

GRASP_DEPTH = 0.025  # pads' centre this far below an object's top
TABLE_GAP = 0.006  # fingertips stay this far above the surface an object stands on
OPEN_MARGIN = 0.03  # jaw gap = object width + this, while approaching
PLACE_GAP = 0.003  # release with the object's bottom this far above the target
RETREAT = 0.08  # m straight up after releasing


def handle_grasp(lo: Vec, hi: Vec) -> Vec:
    """Where the pads' centre holds a handle with box (lo, hi): its middle, at most
    ``GRASP_DEPTH`` below its top (before clearing what the fingers sweep over)."""
    z = max(float(lo[2] + hi[2]) / 2, float(hi[2]) - GRASP_DEPTH)
    return np.array([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, z])


def _rz(a: float) -> Vec:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


class Planner:
    def __init__(self, world: World) -> None:
        self.w = world

    # -- shared pieces -------------------------------------------------------------------

    def _approach(
        self, r: Route, centre: Vec, z_work: float, yaw: float, gap: float, body: int
    ) -> None:
        """Travel above ``centre`` at a safe height, then come straight down to ``z_work``."""
        w, g = self.w, self.w.gripper
        top = w.top(r.pos, centre, w.hand_radius(gap))
        _, hi = w.box(body)
        z_safe = max(top, float(hi[2])) + CLEAR + g.depth
        grip = g.grip_for_gap(gap)
        if r.pos[2] < z_safe - 1e-3:
            r.move("approach", np.array([r.pos[0], r.pos[1], z_safe]), grip=grip)
        r.move(
            "approach", np.array([centre[0], centre[1], max(z_safe, z_work + 0.04)]), yaw, grip=grip
        )
        r.move("descend", np.array([centre[0], centre[1], z_work + 0.025]))
        r.move("descend", np.array([centre[0], centre[1], z_work]), speed=SLOW, settle=0.4)

    def _grasp(
        self, data: mujoco.MjData, refs: Refs, body: int, *, handle: bool, turn: float = 0.0
    ) -> tuple[Route, float]:
        """Approach, descend and close on ``body``; returns the route and the jaw gap used."""
        w, g = self.w, self.w.gripper
        lo, hi = w.box(body)
        if handle:
            centre = handle_grasp(lo, hi)
        else:
            z = max(float(hi[2]) - GRASP_DEPTH, float(lo[2]) + g.depth + TABLE_GAP)
            centre = np.array([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, z])
        yaw, width = w.choose_yaw(
            data,
            refs,
            centre,
            w.options(body),
            body=body,
            gap_margin=OPEN_MARGIN * 0.5,
            turn=turn,
            narrow=handle,
        )
        gap = min(g.gap_open, width + OPEN_MARGIN)
        # Fingertips stay above whatever the fingers sweep over: the table, a console, the
        # brick under the one being picked.
        z = max(
            float(centre[2]), w.under_fingers(centre, yaw, width, gap, body) + g.depth + TABLE_GAP
        )
        centre[2] = z
        r = Route(refs.pos, refs.yaw, refs.grip)
        self._approach(r, centre, z, yaw, gap, body)
        r.hold("grasp", 0.35, grip=1.0)
        r.hold("grasp", 0.2, check="grasp")  # let the squeeze build before judging it
        return r, gap

    def _rise_to(self, r: Route, z: float, phase: str, **kw: Any) -> None:
        if z > r.pos[2] + 1e-3:
            r.move(phase, np.array([r.pos[0], r.pos[1], z]), **kw)

    def _finish(self, data: mujoco.MjData, refs: Refs, r: Route, memo: dict[str, Any]) -> Plan:
        self.w.validate(data, refs, r.waypoints)
        return r.segments, memo

    # -- skills --------------------------------------------------------------------------

    def pick(self, data: mujoco.MjData, refs: Refs, body: int) -> Plan:
        w = self.w
        r, gap = self._grasp(data, refs, body, handle=False)
        lo, _ = w.box(body)
        hang = max(w.gripper.depth, r.pos[2] - float(lo[2]))
        # clear the tallest thing within half a metre: wherever the object goes next, the
        # carry starts above its neighbours (place() then plans its own corridor height)
        tallest = w.top(r.pos, r.pos, 0.5, exclude=frozenset({body}))
        z_lift = max(r.pos[2] + 0.1, tallest + CLEAR + hang)
        _, ok = w.solve(data, refs.q, np.array([r.pos[0], r.pos[1], z_lift]), r.yaw)
        if not ok:
            z_lift = r.pos[2] + 0.1
        r.move("lift", np.array([r.pos[0], r.pos[1], z_lift]), speed=SPEED * 0.6, check="held")
        return self._finish(data, refs, r, {"body": body, "gap": gap})

    def place(
        self, data: mujoco.MjData, refs: Refs, body: int, target: Vec, yaw: float | None
    ) -> Plan:
        w = self.w
        if body < 0 or not w.holding(body):
            raise PlanError("not holding anything")
        tcp = w.site_pos()
        offset = w.bottom_centre(body) - tcp
        turn = 0.0 if yaw is None else wrap(yaw - w.heading(body))
        goal_tcp = np.asarray(target, dtype=np.float64) - _rz(turn) @ offset
        goal_tcp[2] += PLACE_GAP
        lo, hi = w.box(body)
        radius = 0.5 * float(np.hypot(hi[0] - lo[0], hi[1] - lo[1])) + 0.02
        hang = max(w.gripper.depth, -float(offset[2]))
        top = w.top(refs.pos, goal_tcp, max(radius, w.hand_radius(0.0)), frozenset({body}))
        z_carry = max(top + CLEAR + hang, goal_tcp[2] + 0.05)
        r = Route(refs.pos, refs.yaw, refs.grip)
        self._rise_to(r, z_carry, "carry")
        z_travel = max(z_carry, r.pos[2])
        r.move(
            "carry", np.array([goal_tcp[0], goal_tcp[1], z_travel]), refs.yaw + turn, check="held"
        )
        r.move("lower", goal_tcp + np.array([0.0, 0.0, 0.025]))
        r.move("lower", goal_tcp, speed=SLOW * 0.6, settle=0.4)
        width = float(min(hi[0] - lo[0], hi[1] - lo[1]))
        gap = min(w.gripper.gap_open, max(width, 0.0) + OPEN_MARGIN)
        r.hold("release", 0.35, grip=w.gripper.grip_for_gap(gap))
        r.move("retreat", goal_tcp + np.array([0.0, 0.0, RETREAT]), check="placed")
        memo = {"body": body, "target": [float(v) for v in target]}
        return self._finish(data, refs, r, memo)

    def push(
        self, data: mujoco.MjData, refs: Refs, body: int, direction: Vec, distance: float
    ) -> Plan:
        w, g = self.w, self.w.gripper
        u = np.array([direction[0], direction[1], 0.0], dtype=np.float64)
        if np.linalg.norm(u) < 1e-9 or distance <= 0:
            raise PlanError("push needs a horizontal direction and a positive distance")
        u /= np.linalg.norm(u)
        lo, hi = w.box(body)
        centre = np.array([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, 0.0])
        back = float(np.min((w.box_corners(body) - centre)[:, :2] @ u[:2]))
        z = min(float(lo[2]) + g.depth + 0.008, float(hi[2]) + g.depth - 0.006)
        z = max(z, float(lo[2]) + g.depth + 0.003)
        start = centre + u * (back - g.across - 0.02)
        start[2] = z
        heading = math.atan2(u[1], u[0]) + math.pi / 2
        options = [(heading, 0.0), (heading + math.pi, 0.0)]
        yaw, _ = w.choose_yaw(data, refs, start, options, body=-1, gap_margin=0.0)
        r = Route(refs.pos, refs.yaw, refs.grip)
        top = w.top(r.pos, start, w.hand_radius(0.0))
        z_safe = max(top, float(hi[2])) + CLEAR + g.depth
        self._rise_to(r, z_safe, "approach", grip=1.0)
        r.move("approach", np.array([start[0], start[1], max(z_safe, r.pos[2])]), yaw, grip=1.0)
        r.move("descend", start, settle=0.3)
        end = start + u * (distance + 0.02)
        r.move("push", end, speed=SLOW * 1.2, settle=0.2)
        r.move("retreat", end - u * 0.03)
        r.move(
            "retreat",
            end - u * 0.03 + np.array([0.0, 0.0, float(hi[2] - lo[2]) + CLEAR]),
            check="moved",
        )
        memo = {
            "body": body,
            "start": [float(v) for v in w.sense.xpos[body]],
            "dir": [float(v) for v in u],
            "distance": float(distance),
        }
        return self._finish(data, refs, r, memo)

    def follow(self, data: mujoco.MjData, refs: Refs, body: int, path: list[Vec]) -> Plan:
        if not path:
            raise PlanError("empty path")
        r, gap = self._grasp(data, refs, body, handle=True)
        heading0: float | None = None
        yaw = r.yaw
        prev = r.pos.copy()
        points, yaws = [], []
        for p in path:
            p = np.asarray(p, dtype=np.float64)
            step = p - prev
            if math.hypot(step[0], step[1]) > 1e-4:
                h = math.atan2(step[1], step[0])
                turn = 0.0 if heading0 is None else wrap(h - heading0)
                if abs(turn) > math.pi / 2:  # a reversal (over the top of a lid) is no turn
                    turn = wrap(turn - math.pi)
                yaw += turn
                heading0 = h
            points.append(p)
            yaws.append(yaw)
            prev = p
        # one sweep, not a move per waypoint: the arm would stop at each (see _ctl_route)
        r.path("follow", points, yaws, speed=SLOW * 1.4, settle=0.2, check="held")
        r.hold("release", 0.35, grip=self.w.gripper.grip_for_gap(gap))
        r.move("retreat", r.pos + np.array([0.0, 0.0, RETREAT]), check="released")
        return self._finish(data, refs, r, {"body": body})

    def turn(self, data: mujoco.MjData, refs: Refs, body: int, angle: float) -> Plan:
        r, gap = self._grasp(data, refs, body, handle=True, turn=angle)
        r.move("turn", None, r.yaw + angle, settle=0.2, check="held")
        r.segments[-1]["dur"] = max(r.segments[-1]["dur"], abs(angle) / 0.8)
        r.hold("release", 0.35, grip=self.w.gripper.grip_for_gap(gap))
        r.move("retreat", r.pos + np.array([0.0, 0.0, RETREAT]), check="released")
        return self._finish(data, refs, r, {"body": body})

    def home(self, data: mujoco.MjData, refs: Refs) -> Plan:
        w = self.w
        r = Route(refs.pos, refs.yaw, refs.grip)
        top = w.top(refs.pos, refs.pos, w.hand_radius())
        self._rise_to(r, top + CLEAR + w.gripper.depth, "retreat")
        w.validate(data, refs, r.waypoints)
        r.joints("home", w.home, refs.q)
        return r.segments, {}
