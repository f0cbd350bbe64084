"""A scripted teleoperator: it holds direction "keys" the way a person (or the synthetic key
events of the GUI tests) would, at full speed far from the goal and at a slow precision speed
near it, and reads only what a person sees: where the gripper is and where the bricks are."""

from __future__ import annotations

import math

import numpy as np

from sim.mujoco import jaw_yaw
from sim.teleop import Command, StepReport, Teleop

FAST, SLOW = 1.0, 0.2  # speed scales: a key held, and the precision modifier
NEAR = 0.03  # m: switch to the slow speed this close to the goal
TOL = 0.004  # m: an axis this close is "there", its key is released
YAW_TOL = 0.03  # rad


def press(axis_err: np.ndarray, tol: float) -> np.ndarray:
    """Which keys are held: +1 / -1 / 0 per axis."""
    out: np.ndarray = np.where(np.abs(axis_err) > tol, np.sign(axis_err), 0.0)
    return out


class Operator:
    def __init__(self, teleop: Teleop, step: callable | None = None) -> None:  # type: ignore[valid-type]
        self.t = teleop
        self._step = step or teleop.apply
        self.steps = 0
        self.reports: list[StepReport] = []

    def ee(self) -> np.ndarray:
        w = self.t.world
        return np.array(w.data.site_xpos[w.scene.arm.site_id])

    def yaw(self) -> float:
        w = self.t.world
        return jaw_yaw(w.data.site_xmat[w.scene.arm.site_id].reshape(3, 3), self.t.gripper.jaw)

    def send(self, cmd: Command) -> None:
        self.reports.append(self._step(cmd))
        self.steps += 1

    def move_to(self, goal: np.ndarray, *, limit: int = 120) -> None:
        for _ in range(limit):
            err = np.asarray(goal) - self.ee()
            if float(np.max(np.abs(err))) <= TOL:
                return
            speed = SLOW if float(np.linalg.norm(err)) < NEAR else FAST
            keys = press(err, TOL)
            self.send(Command(linear=tuple(keys * self.t.max_linear), speed=speed))  # type: ignore[arg-type]
        raise AssertionError(f"did not reach {goal} (at {self.ee()})")

    def turn_to(self, yaw: float, *, limit: int = 60) -> None:
        for _ in range(limit):
            err = math.remainder(yaw - self.yaw(), math.pi / 2)  # a square jaw fits 4 ways
            if abs(err) <= YAW_TOL:
                return
            speed = SLOW if abs(err) < 0.15 else FAST
            self.send(Command(angular=(0.0, 0.0, math.copysign(self.t.max_angular, err)),
                              speed=speed))  # fmt: skip
        raise AssertionError(f"did not turn to {yaw:.3f} (at {self.yaw():.3f})")

    def gripper(self, grip: float, steps: int = 6) -> None:
        for _ in range(steps):
            self.send(Command(grip=grip))

    def hold(self, steps: int) -> None:
        for _ in range(steps):
            self.send(Command())


def pick_and_place(op: Operator, obj: str, onto: str) -> None:
    """Grasp ``obj`` from above and set it down on ``onto`` (both brick-like: a top face)."""
    graph = op.t.world.graph
    src, dst = graph.nodes[obj], graph.nodes[onto]
    above = 0.08
    sp = np.array(src.pos)
    op.move_to(np.array([sp[0], sp[1], sp[2] + above]))
    op.turn_to(src.yaw)
    op.move_to(np.array([sp[0], sp[1], sp[2] + 0.005]))
    op.gripper(1.0)
    op.move_to(np.array([sp[0], sp[1], sp[2] + above]))
    graph = op.t.world.graph
    dp = np.array(graph.nodes[onto].pos)
    op.move_to(np.array([dp[0], dp[1], dp[2] + above]))
    op.turn_to(dst.yaw)
    # the grasped brick's centre sits where it was relative to the site
    op.move_to(np.array([dp[0], dp[1], dp[2] + dst.size[2] + src.size[2] + 0.008]))
    op.gripper(0.0)
    op.move_to(np.array([dp[0], dp[1], dp[2] + above]))
    op.hold(3)
