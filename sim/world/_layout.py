"""Scene descriptions and seeded initial layouts, shared by both world modes.

A scene family (kitchen, tidy, stack) is described once by :class:`SceneInfo` — read from the
MJCF in physics and symbolic mode alike — and a scenario's :class:`Layout` says which objects
are present and where they may start. :func:`sample_layout` draws one arrangement from a seed;
the same seed gives the same arrangement in either mode.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from annotation import UserError
from sim.world._graph import Attr, Vec3


@dataclass(frozen=True)
class ObjectInfo:
    """One object of a scene family as the MJCF declares it."""

    id: str
    type: str
    half: Vec3  # half extents of its geoms' box in the body frame
    pos: Vec3  # position in the MJCF (where fixed objects stay)
    color: str | None = None
    tags: frozenset[str] = frozenset()
    attrs: Mapping[str, Attr] = field(default_factory=dict)  # defaults
    interior: tuple[Vec3, Vec3] | None = None  # containers: centre (body frame), half size

    @property
    def radius(self) -> float:
        """Footprint radius whatever the yaw."""
        return math.hypot(self.half[0], self.half[1])


@dataclass(frozen=True)
class SceneInfo:
    family: str
    objects: Mapping[str, ObjectInfo]
    table: str  # id of the table object
    table_top: float  # z of the table surface
    workspace: tuple[float, float, float, float]  # reachable xmin xmax ymin ymax
    cameras: tuple[str, ...] = ()


@dataclass(frozen=True)
class Placement:
    """Where one object starts: a region of the table, a fixed point, or on/in another object."""

    obj: str
    region: tuple[float, float, float, float] | None = None  # xmin xmax ymin ymax
    at: tuple[float, float] | None = None
    on: str | None = None
    inside: str | None = None
    yaw: tuple[float, float] = (0.0, 0.0)  # sampled uniformly, radians


@dataclass(frozen=True)
class Layout:
    family: str
    placements: tuple[Placement, ...]
    attrs: Mapping[str, Mapping[str, Attr]] = field(default_factory=dict)
    min_gap: float = 0.03  # clearance between footprints on the table, metres


@dataclass(frozen=True)
class Placed:
    """A sampled start: table-plane position, yaw, and what it rests on or in."""

    obj: str
    x: float
    y: float
    yaw: float
    support: str
    relation: str  # "on" | "in"


class LayoutError(UserError, ValueError):
    """A layout that cannot be realised (unknown object, no room)."""


RESTARTS = 50  # whole-layout redraws before a crowded layout is declared impossible


def sample_layout(layout: Layout, info: SceneInfo, seed: int) -> dict[str, Placed]:
    """Draw a start arrangement; deterministic for a seed. Raises :class:`LayoutError`.

    Objects are placed in order by rejection sampling; when one finds no room (the earlier
    ones happened to spread out), the whole layout is redrawn from the next stream of the same
    seed, so a seed always gives the same arrangement and crowded layouts still succeed.
    """
    error: LayoutError | None = None
    for attempt in range(RESTARTS):
        try:
            return _sample_once(layout, info, np.random.default_rng([seed, attempt]))
        except _NoRoomError as e:
            error = LayoutError(str(e))
    assert error is not None
    raise error


class _NoRoomError(LayoutError):
    pass


def _sample_once(layout: Layout, info: SceneInfo, rng: np.random.Generator) -> dict[str, Placed]:
    placed: dict[str, Placed] = {}
    taken: list[tuple[float, float, float]] = [  # x, y, radius of fixed furniture
        (o.pos[0], o.pos[1], o.radius)
        for o in info.objects.values()
        if "fixed" in o.tags and o.id != info.table and not _wall_mounted(o, info)
    ]
    for p in layout.placements:
        if p.obj not in info.objects:
            raise LayoutError(
                f"unknown object {p.obj!r} (known: {', '.join(sorted(info.objects))})"
            )
        obj = info.objects[p.obj]
        yaw = float(rng.uniform(p.yaw[0], p.yaw[1])) if p.yaw[1] > p.yaw[0] else p.yaw[0]
        if p.on or p.inside:
            base_id = p.on or p.inside
            assert base_id is not None
            base = placed.get(base_id)
            if base is None:
                if base_id not in info.objects:
                    raise LayoutError(f"{p.obj}: unknown support {base_id!r}")
                b = info.objects[base_id]
                if "fixed" not in b.tags:
                    raise LayoutError(f"{p.obj}: place {base_id!r} before {p.obj!r}")
                bx, by = b.pos[0], b.pos[1]
                if b.interior is not None and p.inside:
                    bx, by = bx + b.interior[0][0], by + b.interior[0][1]
            else:
                bx, by = base.x, base.y
            placed[p.obj] = Placed(p.obj, bx, by, yaw, base_id, "in" if p.inside else "on")
            continue
        if p.at is not None:
            x, y = p.at
            taken.append((x, y, obj.radius))
            placed[p.obj] = Placed(p.obj, x, y, yaw, info.table, "on")
            continue
        region = p.region or info.workspace
        for _ in range(200):
            x = float(rng.uniform(region[0], region[1]))
            y = float(rng.uniform(region[2], region[3]))
            if all(
                math.hypot(x - tx, y - ty) >= r + obj.radius + layout.min_gap for tx, ty, r in taken
            ):
                break
        else:
            raise _NoRoomError(f"no room for {p.obj!r} in region {list(region)}")
        taken.append((x, y, obj.radius))
        placed[p.obj] = Placed(p.obj, x, y, yaw, info.table, "on")
    return placed


def _wall_mounted(o: ObjectInfo, info: SceneInfo) -> bool:
    """Fixed furniture above the table top (nothing on the table under it)."""
    return o.pos[2] - o.half[2] > info.table_top + 0.05
