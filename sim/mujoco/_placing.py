"""Putting a sampled layout into MuJoCo: poses, articulated joints, parked objects, the arm.

The layout sampler (shared with the symbolic mode) says *where on the table plane* and *on or
in what* each object starts. Here that becomes a free-joint pose: the height is found from the
support's actual geometry under the object's footprint (a patty "in the pan" lands on the pan's
floor, not on its rim; a mug "in the drawer" on the drawer's bottom, below the chest's top), plus
a 2 mm drop that the settling phase takes up. Objects a layout leaves out are parked on the
floor far from the table (x ≥ 3 m), where nothing can reach or see them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from sim.mujoco._arm import set_home
from sim.mujoco._index import SceneIndex
from sim.world import Attr, LayoutError, Placed

DROP = 0.002  # m: objects start this far above their support and settle onto it
PARK_X = 3.0  # m: parked objects sit on the floor from here on, 0.4 m apart
PARK_STEP = 0.4

Vec = NDArray[np.float64]


def arm_home(scene: SceneIndex, data: mujoco.MjData) -> None:
    """Arm joints and servo targets at the home posture, jaws open (the check's posture too)."""
    set_home(scene.model, scene.arm, data)


def set_attrs(
    scene: SceneIndex, data: mujoco.MjData, attrs: Mapping[str, Mapping[str, Attr]]
) -> dict[str, dict[str, Attr]]:
    """Set articulated joints from layout attributes; returns the rest (``cooked``, ...).

    ``open`` is a fraction (0 closed .. 1 open), ``on`` a bool; physics owns both afterwards.
    Attributes physics does not model are carried by the world and merged into the graph.
    """
    extra: dict[str, dict[str, Attr]] = {}
    for obj, values in sorted(attrs.items()):
        if obj not in scene.notes:
            raise LayoutError(f"attrs for unknown object {obj!r}")
        i = scene.index(obj)
        joints = {a.attr: a for a in scene.articulations if a.obj == i}
        for key, value in sorted(values.items()):
            art = joints.get(key)
            if art is None:
                extra.setdefault(obj, {})[key] = value
                continue
            frac = (1.0 if value else 0.0) if isinstance(value, bool) else float(value)
            data.qpos[art.qadr] = art.value(min(1.0, max(0.0, frac)))
    return extra


def park(scene: SceneIndex, data: mujoco.MjData, objs: Iterable[str]) -> None:
    """Put objects on the floor beyond x = 3 m, upright, at rest, each on its own spot."""
    for obj in objs:
        i = scene.index(obj)
        half = scene.info.objects[obj].half
        set_pose(scene, data, i, (PARK_X + PARK_STEP * i, 0.0, half[2] + 0.001), 0.0)


def place_all(scene: SceneIndex, data: mujoco.MjData, placed: Mapping[str, Placed]) -> None:
    """Pose every placed object, in layout order (supports before what rests on them)."""
    model = scene.model
    for obj, p in placed.items():
        i = scene.index(obj)
        if scene.free_qadr[i] < 0:
            raise LayoutError(f"{obj!r} is fixed furniture; a layout cannot move it")
        mujoco.mj_kinematics(model, data)
        half = scene.info.objects[obj].half
        c, s = abs(math.cos(p.yaw)), abs(math.sin(p.yaw))
        foot = (c * half[0] + s * half[1], s * half[0] + c * half[1])
        x, y, ceiling = p.x, p.y, math.inf
        if p.relation == "in":
            ceiling = interior_top(scene, data, p.support)
            x, y = _follow_interior(scene, data, p)
        z = support_top(scene, data, p.support, (x, y), foot, ceiling)
        set_pose(scene, data, i, (x, y, z + half[2] + DROP), p.yaw)
    mujoco.mj_kinematics(model, data)


def _follow_interior(scene: SceneIndex, data: mujoco.MjData, p: Placed) -> tuple[float, float]:
    """Placement in fixed furniture is sampled at its default pose; an open drawer has moved."""
    info = scene.info.objects[p.support]
    if "fixed" not in info.tags or info.interior is None:
        return p.x, p.y
    now = interior_centre(scene, data, p.support)
    dx = now[0] - (info.pos[0] + info.interior[0][0])
    dy = now[1] - (info.pos[1] + info.interior[0][1])
    return p.x + float(dx), p.y + float(dy)


def set_pose(
    scene: SceneIndex, data: mujoco.MjData, i: int, pos: tuple[float, float, float], yaw: float
) -> None:
    """Free-joint pose (upright, heading ``yaw``) and zero velocity for object index ``i``."""
    q, d = int(scene.free_qadr[i]), int(scene.free_dadr[i])
    data.qpos[q : q + 3] = pos
    data.qpos[q + 3 : q + 7] = (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))
    data.qvel[d : d + 6] = 0.0


def _interior(scene: SceneIndex, container: str) -> tuple[int, Vec]:
    """The interior site of ``container`` and its half size (local frame)."""
    i = scene.index(container)
    for obj, site, half in scene.interiors:
        if obj == i:
            return site, half
    raise LayoutError(f"{container!r} has no interior to put things in")


def interior_top(scene: SceneIndex, data: mujoco.MjData, container: str) -> float:
    """World z of the top face of a container's interior box (its current pose)."""
    site, half = _interior(scene, container)
    rot = data.site_xmat[site].reshape(3, 3)
    return float(data.site_xpos[site][2] + np.abs(rot[2]) @ half)


def interior_half_xy(scene: SceneIndex, data: mujoco.MjData, container: str) -> tuple[float, float]:
    """Half extents in x and y of a container's interior box, world-aligned."""
    site, half = _interior(scene, container)
    rot = np.abs(data.site_xmat[site].reshape(3, 3))
    return float(rot[0] @ half), float(rot[1] @ half)


def interior_centre(scene: SceneIndex, data: mujoco.MjData, container: str) -> Vec:
    site, _ = _interior(scene, container)
    out: Vec = data.site_xpos[site].copy()
    return out


def support_top(
    scene: SceneIndex,
    data: mujoco.MjData,
    support: str,
    xy: tuple[float, float],
    foot: tuple[float, float],
    ceiling: float = math.inf,
) -> float:
    """Highest top, below ``ceiling``, of ``support``'s solid geoms under a footprint.

    ``foot`` is the half size of the footprint around ``xy``. Geoms are compared by their
    world boxes, which is exact for the box-and-cylinder furniture of our scenes.
    """
    lo, hi = scene.world_boxes(data, scene.box_range(scene.index(support)))
    over = (
        (lo[:, 0] < xy[0] + foot[0])
        & (hi[:, 0] > xy[0] - foot[0])
        & (lo[:, 1] < xy[1] + foot[1])
        & (hi[:, 1] > xy[1] - foot[1])
        & (hi[:, 2] <= ceiling + 1e-6)
    )
    if over.any():
        return float(hi[over, 2].max())
    below = hi[:, 2] <= ceiling + 1e-6
    return float(hi[below, 2].max()) if below.any() else float(hi[:, 2].max())
