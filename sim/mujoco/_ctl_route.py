"""Segments: the plain-data steps a skill is made of, and a builder that times them.

A skill is planned once, when it starts, into a list of segments: Cartesian moves of the grasp
point (position + jaw yaw, gripper pointing down), paths through several such poses (pulling a
drawer, swinging a lid), joint-space moves, and holds while the jaws close or open. Segments
are JSON-able dicts so the controller's state (and with it a mid-skill snapshot) is plain data.
Durations come from distance and a speed, with a minimum-jerk time law applied at execution, so
the arm starts and stops smoothly.

The arm comes to rest at the end of every segment, so a motion that should be one sweep is one
path segment (one time law over its whole length), never a chain of short moves: chained 3 cm
moves made the drawer pull surge every 0.3 s, each step of a 10 fps video three times the next.
And no move is shorter than ``MIN_MOVE``: a 0.25 s move is over in two or three video frames,
so an 8 cm retreat looked like a jump.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np
from numpy.typing import NDArray

Vec = NDArray[np.float64]
Segment = dict[str, Any]

SPEED = 0.3  # m/s, mean speed of free moves
SLOW = 0.07  # m/s, the last centimetres before contact, pushing, pulling handles
TURN_RATE = 1.6  # rad/s, mean yaw rate
JOINT_RATE = 0.9  # rad/s, mean rate of joint-space moves
MIN_MOVE = 0.6  # s, shortest move: sane accelerations, and at least six frames of a 10 fps video


def along(p0: Vec, y0: float, seg: Segment, k: float) -> tuple[Vec, float]:
    """Pose a fraction ``k`` of the way along a path segment's length (from ``p0``, ``y0``)."""
    pts = [np.asarray(p0, dtype=np.float64)] + [np.array(p) for p in seg["pts"]]
    yaws = [y0, *seg["yaws"]]
    lengths = [float(np.linalg.norm(b - a)) for a, b in pairwise(pts)]
    left = min(max(k, 0.0), 1.0) * sum(lengths)
    for i, piece in enumerate(lengths):
        if left <= piece and piece > 0.0:
            f = left / piece
            return pts[i] + f * (pts[i + 1] - pts[i]), yaws[i] + f * (yaws[i + 1] - yaws[i])
        left -= piece
    return pts[-1], yaws[-1]


def min_jerk(tau: float) -> float:
    """Minimum-jerk time law: 0 -> 1 with zero velocity and acceleration at both ends."""
    t = min(max(tau, 0.0), 1.0)
    return t * t * t * (10.0 - 15.0 * t + 6.0 * t * t)


class Route:
    """Accumulates segments from a planned cursor (position, yaw, grip)."""

    def __init__(self, pos: Vec, yaw: float, grip: float) -> None:
        self.pos, self.yaw, self.grip = np.asarray(pos, dtype=np.float64).copy(), yaw, grip
        self.segments: list[Segment] = []
        self.waypoints: list[tuple[str, Vec, float]] = []  # (phase, pos, yaw) to validate

    def move(
        self,
        phase: str,
        pos: Vec | None = None,
        yaw: float | None = None,
        *,
        speed: float = SPEED,
        grip: float | None = None,
        settle: float = 0.0,
        check: str | None = None,
    ) -> Route:
        end = self.pos if pos is None else np.asarray(pos, dtype=np.float64)
        end_yaw = self.yaw if yaw is None else float(yaw)
        dist = float(np.linalg.norm(end - self.pos))
        dur = max(MIN_MOVE, dist / speed, abs(end_yaw - self.yaw) / TURN_RATE)
        self.segments.append(
            {
                "phase": phase,
                "kind": "cart",
                "dur": dur,
                "pos": [float(v) for v in end],
                "yaw": end_yaw,
                "grip": self.grip if grip is None else float(grip),
                "settle": settle,
                "check": check,
            }
        )
        self.pos, self.yaw = end.copy(), end_yaw
        self.grip = self.segments[-1]["grip"]
        self.waypoints.append((phase, end.copy(), end_yaw))
        return self

    def path(
        self,
        phase: str,
        points: list[Vec],
        yaws: list[float],
        *,
        speed: float = SPEED,
        settle: float = 0.0,
        check: str | None = None,
    ) -> Route:
        """One move through ``points`` (with the jaw yaw at each), timed by the whole length."""
        pts = [np.asarray(p, dtype=np.float64) for p in points]
        length = sum(float(np.linalg.norm(b - a)) for a, b in pairwise([self.pos, *pts]))
        turned = sum(abs(b - a) for a, b in pairwise([self.yaw, *yaws]))
        dur = max(MIN_MOVE, length / speed, turned / TURN_RATE)
        self.segments.append(
            {
                "phase": phase,
                "kind": "path",
                "dur": dur,
                "pts": [[float(v) for v in p] for p in pts],
                "yaws": [float(y) for y in yaws],
                "pos": [float(v) for v in pts[-1]],
                "yaw": float(yaws[-1]),
                "grip": self.grip,
                "settle": settle,
                "check": check,
            }
        )
        self.waypoints += [(phase, p.copy(), y) for p, y in zip(pts, yaws, strict=True)]
        self.pos, self.yaw = pts[-1].copy(), float(yaws[-1])
        return self

    def hold(
        self,
        phase: str,
        dur: float,
        *,
        grip: float | None = None,
        settle: float = 0.0,
        check: str | None = None,
    ) -> Route:
        self.segments.append(
            {
                "phase": phase,
                "kind": "hold",
                "dur": dur,
                "grip": self.grip if grip is None else float(grip),
                "settle": settle,
                "check": check,
            }
        )
        self.grip = self.segments[-1]["grip"]
        return self

    def joints(self, phase: str, q: Vec, q_from: Vec, *, check: str | None = None) -> Route:
        dur = max(MIN_MOVE, float(np.max(np.abs(q - q_from))) / JOINT_RATE)
        self.segments.append(
            {
                "phase": phase,
                "kind": "joint",
                "dur": dur,
                "q": [float(v) for v in q],
                "grip": self.grip,
                "settle": 0.3,
                "check": check,
            }
        )
        return self
