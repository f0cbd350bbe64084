"""Checks run at the end of a segment: did the grasp hold, did the object land, did it move.

Each check looks at the sensed world (positions and contacts recomputed from ``qpos``) and
returns a short reason on failure; the reason becomes the skill's outcome ``failed: <reason>``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.mujoco._ctl_world import EMPTY, World
from sim.mujoco._gripper import open_fraction

PLACE_TOL = 0.02  # m between the object's bottom centre and the place target


def check_segment(
    world: World,
    check: str,
    memo: dict[str, Any],
    held: int,
) -> tuple[str | None, int]:
    """(failure reason or None, body held afterwards or -1)."""
    body = int(memo.get("body", -1))
    if check == "grasp":
        if world.holding(body):
            return None, body
        if open_fraction(world.model, world.arm, world.sense.qpos) < EMPTY:
            return "grasp missed (the gripper closed on nothing)", -1
        return "grasp missed (the object is not between the pads)", -1
    if check == "held":
        if world.holding(body):
            return None, body
        return "dropped the object", -1
    if check == "released":
        if world.fingers_on(body):
            return "the gripper did not let go", body
        return None, -1
    if check == "placed":
        if world.fingers_on(body):
            return "the gripper did not let go", body
        target = np.array(memo["target"])
        off = float(np.linalg.norm(world.bottom_centre(body)[:2] - target[:2]))
        if off > PLACE_TOL:
            return f"placed {off * 100:.1f} cm from the target", -1
        return None, -1
    if check == "moved":
        moved = float((world.sense.xpos[body] - np.array(memo["start"])) @ np.array(memo["dir"]))
        if moved < 0.5 * float(memo["distance"]):
            return f"pushed {moved * 100:.1f} of {memo['distance'] * 100:.1f} cm", held
        return None, held
    raise ValueError(f"unknown check {check!r}")
