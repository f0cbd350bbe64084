"""Geometric questions the controller asks about the scene: boxes, obstacles, contacts.

All answers come from a scratch MjData the caller has filled from the live state (``qpos``),
never from derived fields of the live MjData: after ``mj_setState`` those are stale until the
next ``mj_forward``, and a controller that read them would not replay identically.
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from sim.mujoco._gripper import geom_corners

Vec = NDArray[np.float64]
IntArray = NDArray[np.int64]


def body_geoms(model: mujoco.MjModel, body: int) -> list[int]:
    start, num = int(model.body_geomadr[body]), int(model.body_geomnum[body])
    return list(range(start, start + num)) if start >= 0 else []


def body_corners(model: mujoco.MjModel, data: mujoco.MjData, body: int) -> Vec:
    """World corners of the local boxes of a body's geoms, stacked (8 per geom)."""
    geoms = body_geoms(model, body)
    if not geoms:
        return np.asarray(data.xpos[body], dtype=np.float64).reshape(1, 3).copy()
    return np.vstack([geom_corners(model, data, g) for g in geoms])


def body_box(model: mujoco.MjModel, data: mujoco.MjData, body: int) -> tuple[Vec, Vec]:
    """World axis-aligned box (lo, hi) around a body's geoms."""
    pts = body_corners(model, data, body)
    return pts.min(axis=0), pts.max(axis=0)


def obstacle_geoms(model: mujoco.MjModel, arm_bodies: frozenset[int]) -> IntArray:
    """Geoms the hand could hit: collidable, not planes, not part of the arm."""
    keep = [
        g
        for g in range(model.ngeom)
        if (model.geom_contype[g] or model.geom_conaffinity[g])
        and int(model.geom_type[g]) != mujoco.mjtGeom.mjGEOM_PLANE
        and int(model.geom_bodyid[g]) not in arm_bodies
    ]
    return np.array(keep, dtype=np.int64)


def _segment_hits_box(p0: Vec, p1: Vec, lo: Vec, hi: Vec) -> bool:
    """Does the 2-D segment p0-p1 touch the rectangle [lo, hi]? (slab test)"""
    t0, t1 = 0.0, 1.0
    d = p1 - p0
    for k in range(2):
        if abs(d[k]) < 1e-12:
            if p0[k] < lo[k] or p0[k] > hi[k]:
                return False
            continue
        a, b = (lo[k] - p0[k]) / d[k], (hi[k] - p0[k]) / d[k]
        t0, t1 = max(t0, min(a, b)), min(t1, max(a, b))
        if t0 > t1:
            return False
    return True


def _tallest(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    geoms: IntArray,
    exclude: frozenset[int],
    near: Callable[[Vec, Vec], bool],
) -> float:
    """Highest top of the geoms (bodies not excluded) whose world box (lo, hi) is ``near``."""
    top = -np.inf
    for g in geoms:
        if int(model.geom_bodyid[g]) in exclude:
            continue
        corners = geom_corners(model, data, int(g))
        lo, hi = corners.min(axis=0), corners.max(axis=0)
        if hi[2] > top and near(lo, hi):
            top = float(hi[2])
    return float(top)


def corridor_top(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    geoms: IntArray,
    p0: Vec,
    p1: Vec,
    radius: float,
    exclude: frozenset[int] = frozenset(),
) -> float:
    """Highest top of the geoms within ``radius`` of the floor-plane segment p0-p1."""
    a, b = p0[:2], p1[:2]
    return _tallest(
        model,
        data,
        geoms,
        exclude,
        lambda lo, hi: _segment_hits_box(a, b, lo[:2] - radius, hi[:2] + radius),
    )


def top_under(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    geoms: IntArray,
    points: Vec,
    radius: float,
    exclude: frozenset[int],
) -> float:
    """Highest top of the geoms (not excluded) within ``radius`` of any of ``points`` in xy."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)[:, :2]
    return _tallest(
        model,
        data,
        geoms,
        exclude,
        lambda lo, hi: bool(
            np.any(np.all((pts > lo[:2] - radius) & (pts < hi[:2] + radius), axis=1))
        ),
    )


def touching(
    model: mujoco.MjModel, data: mujoco.MjData, body: int, bodies: frozenset[int]
) -> set[int]:
    """Which of ``bodies`` are in contact with ``body`` (data must hold fresh contacts)."""
    out: set[int] = set()
    for i in range(data.ncon):
        c = data.contact[i]
        if c.dist > 1e-3:
            continue
        b1, b2 = int(model.geom_bodyid[c.geom[0]]), int(model.geom_bodyid[c.geom[1]])
        if b1 == body and b2 in bodies:
            out.add(b2)
        elif b2 == body and b1 in bodies:
            out.add(b1)
    return out
