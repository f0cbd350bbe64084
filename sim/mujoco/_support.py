"""How far a geom's collision shape reaches along a direction (its support function).

Used to measure the gripper from the shapes that actually touch objects: a mesh geom collides
as the convex hull of its vertices, so its extreme along any direction is an extreme vertex;
primitives have closed forms. A geom's bounding box (``geom_aabb``) is not good enough: it is
aligned with the geom frame, which for a mesh is the mesh's principal inertia frame, so for an
L-shaped or slanted finger its corners stick out centimetres beyond the mesh itself.
"""

from __future__ import annotations

import math

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

Vec = NDArray[np.float64]

_G = mujoco.mjtGeom


def _half_extent(model: mujoco.MjModel, geom: int, local: Vec) -> float:
    """Support of a primitive centred at its frame origin along the unit vector ``local``."""
    kind = int(model.geom_type[geom])
    size = model.geom_size[geom]
    lx, ly, lz = (abs(float(v)) for v in local)
    if kind == _G.mjGEOM_SPHERE:
        return float(size[0])
    if kind == _G.mjGEOM_CAPSULE:
        return float(size[0]) + float(size[1]) * lz
    if kind == _G.mjGEOM_CYLINDER:
        return float(size[0]) * math.hypot(lx, ly) + float(size[1]) * lz
    if kind == _G.mjGEOM_ELLIPSOID:
        return math.sqrt(sum((float(s) * v) ** 2 for s, v in zip(size, (lx, ly, lz), strict=True)))
    if kind == _G.mjGEOM_BOX:
        return float(size[0]) * lx + float(size[1]) * ly + float(size[2]) * lz
    # planes, height fields and SDF plugins do not make fingers; their bounding sphere is an
    # over-estimate that errs towards a narrower gap rather than a wider one
    return float(model.geom_rbound[geom])


def mesh_vertices(model: mujoco.MjModel, geom: int) -> Vec | None:
    """A mesh geom's vertices in its own frame (MuJoCo stores them so), else None."""
    if int(model.geom_type[geom]) != _G.mjGEOM_MESH:
        return None
    mesh = int(model.geom_dataid[geom])
    adr, num = int(model.mesh_vertadr[mesh]), int(model.mesh_vertnum[mesh])
    out: Vec = np.asarray(model.mesh_vert[adr : adr + num], dtype=np.float64)
    return out


def extents(model: mujoco.MjModel, geom: int, pos: Vec, rot: Vec, axes: Vec) -> tuple[Vec, Vec]:
    """(min, max) of the geom's collision shape projected on each row of ``axes``.

    ``pos``/``rot`` place the geom in the frame the axes are written in (e.g. the end-effector
    site's frame).
    """
    local = axes @ rot  # each axis in the geom's frame
    centre = axes @ pos
    verts = mesh_vertices(model, geom)
    if verts is not None:
        proj = verts @ local.T
        return centre + proj.min(axis=0), centre + proj.max(axis=0)
    half = np.array([_half_extent(model, geom, row) for row in local])
    return centre - half, centre + half
