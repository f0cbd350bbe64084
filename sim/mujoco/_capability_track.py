"""Follow a planned skill the way the controller tracks it, kinematically.

A plan's waypoints can all have IK solutions while the motion between them cannot be followed:
the controller moves the references along each segment (minimum-jerk in time, the orientation
slerped when the hand does not yet point down) and solves a few warm-started IK iterations per
control step, failing the skill "unreachable (tracking ...)" when the arm falls 1 cm or 0.1 rad
behind. This replays those references with the controller's own pieces (its time law, path
interpolation, IK settings) on perfect joint tracking, so the capability table predicts what
the controller will do, not only what the planner accepts.
"""

from __future__ import annotations

import math

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from sim.mujoco._controller import TRACK_ITERS
from sim.mujoco._ctl_route import Segment, along, min_jerk
from sim.mujoco._ctl_world import Refs, World, wrap
from sim.mujoco._ik import jaw_yaw, mat_to_quat, quat_to_mat, slerp

Vec = NDArray[np.float64]

CONTROL_PERIOD = 0.05  # s: PhysicsWorld's default, how often the controller steps


def track(
    world: World, data: mujoco.MjData, refs: Refs, segments: list[Segment]
) -> tuple[str, Refs]:
    """(why the controller cannot follow ``segments`` from ``refs``, or ""; the references
    where it ends, or stops)."""
    kin = world.kin
    kin.load(data)
    q = np.asarray(refs.q, dtype=np.float64).copy()
    pos, rot = kin.fk(q)
    quat = mat_to_quat(rot)
    yaw = float(refs.yaw)
    for seg in segments:
        if seg["kind"] == "hold":
            continue
        if seg["kind"] == "joint":
            q = np.array(seg["q"], dtype=np.float64)
            pos, rot = kin.fk(q)
            quat = mat_to_quat(rot)
            yaw = yaw + wrap(jaw_yaw(rot, world.gripper.jaw) - yaw)
            continue
        p0, y0, r0 = pos.copy(), yaw, quat
        down = mat_to_quat(world.rot(yaw))
        turn_over = abs(float(np.dot(down, quat))) < 1 - 1e-7
        steps = max(1, math.ceil(float(seg["dur"]) / CONTROL_PERIOD))
        for k in range(1, steps + 1):
            s = min_jerk(k / steps)
            if seg["kind"] == "path":
                p, y_k = along(p0, y0, seg, s)
            else:
                p = p0 + s * (np.array(seg["pos"]) - p0)
                y_k = y0 + s * (float(seg["yaw"]) - y0)
            if turn_over:
                quat = slerp(r0, mat_to_quat(world.rot(float(seg["yaw"]))), s)
                yaw = float(seg["yaw"]) if s >= 1.0 else yaw
            else:
                yaw = y_k
                quat = mat_to_quat(world.rot(yaw))
            res = kin.solve(q, p, quat_to_mat(quat), rest=world.home, iters=TRACK_ITERS,
                            tol_pos=2e-4, tol_rot=2e-3, restarts=False)  # fmt: skip
            q, pos = res.q, np.asarray(p, dtype=np.float64)
            if res.pos_err > 0.01 or res.rot_err > 0.1:
                return f"unreachable (tracking {seg['phase']})", Refs(q, pos, yaw, refs.grip)
    grip = float(segments[-1]["grip"]) if segments else refs.grip
    return "", Refs(q, pos, yaw, grip)
