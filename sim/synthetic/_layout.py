"""Seeded scene layouts: each object is placed at random inside its zone, without overlaps."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sim.synthetic._model import ObjectKind, Scene, SceneObject, TableKind

Zone = tuple[float, float, float, float]  # x0, x1, y0, y1 (table units)

_GAP = 0.08  # minimum free space between two objects


@dataclass(frozen=True)
class ObjectSpec:
    """An object to place: what it is and the zone its centre may fall in."""

    name: str
    kind: ObjectKind
    color: str
    zone: Zone
    scale: float = 1.0


def _clear(o: SceneObject, placed: list[SceneObject]) -> bool:
    for q in placed:
        if (
            abs(o.x - q.x) < o.half_w + q.half_w + _GAP
            and abs(o.y - q.y) < o.half_d + q.half_d + _GAP
        ):
            return False
    return True


def sample_scene(specs: Sequence[ObjectSpec], seed: int, table: TableKind = "oak") -> Scene:
    """A scene with every object inside its zone and apart from the others; deterministic."""
    rng = np.random.default_rng([seed, 4241])
    placed: list[SceneObject] = []
    for spec in specs:
        x0, x1, y0, y1 = spec.zone
        if x0 > x1 or y0 > y1:
            raise ValueError(f"object {spec.name!r}: empty zone {spec.zone}")
        chosen: SceneObject | None = None
        for _ in range(200):
            x = float(rng.uniform(x0, x1))
            y = float(rng.uniform(y0, y1))
            cand = SceneObject.make(spec.name, spec.kind, spec.color, x, y, spec.scale)
            if _clear(cand, placed):
                chosen = cand
                break
        if chosen is None:
            raise ValueError(f"object {spec.name!r}: no free spot in zone {spec.zone}")
        placed.append(chosen)
    return Scene(tuple(placed), table)


def layout_distance(a: Scene, b: Scene) -> float:
    """Largest displacement of a same-named object between two layouts (table units)."""
    out = 0.0
    for o in a.objects:
        q = b.object(o.name)
        out = max(out, math.hypot(o.x - q.x, o.y - q.y))
    return out
