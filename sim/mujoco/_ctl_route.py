"""Segments: the plain-data steps a skill is made of, and a builder that times them.

A skill is planned once, when it starts, into a list of segments: Cartesian moves of the grasp
point (position + jaw yaw, gripper pointing down), joint-space moves, and holds while the jaws
close or open. Segments are JSON-able dicts so the controller's state (and with it a
mid-skill snapshot) is plain data. Durations come from distance and a speed, with a minimum-jerk
time law applied at execution, so the arm starts and stops smoothly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

Vec = NDArray[np.float64]
Segment = dict[str, Any]

SPEED = 0.3  # m/s, mean speed of free moves
SLOW = 0.07  # m/s, the last centimetres before contact, pushing, pulling handles
TURN_RATE = 1.6  # rad/s, mean yaw rate
JOINT_RATE = 0.9  # rad/s, mean rate of joint-space moves
MIN_MOVE = 0.25  # s, shortest move (keeps accelerations sane for tiny moves)


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
