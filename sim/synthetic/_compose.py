"""Compose one frame: table, shadows, objects in painter's order, the hand on top."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.synthetic._camera import Camera
from sim.synthetic._draw import Image
from sim.synthetic._hand import HandPose, draw_hand, draw_hand_shadow
from sim.synthetic._model import BOX_WALL
from sim.synthetic._objects import (
    Placed,
    draw_box_back,
    draw_box_front,
    draw_object,
    shadow_polygon,
)

_SHADOW_FACTOR = 0.25  # shadows are drawn and blurred at a quarter of the resolution
_SHADOW_DARK = 0.5  # darkening under a full shadow


@dataclass(frozen=True)
class FrameState:
    """What is on screen at one instant."""

    resting: tuple[Placed, ...]  # objects at rest, drawn into the cached static layer
    moving: tuple[Placed, ...]  # held or floating objects, drawn every frame
    hand: HandPose


def _inside_box(p: Placed, box: Placed, margin: float = 0.0) -> bool:
    """True if p's centre is within the box's outer rectangle and below its rim."""
    b = box.obj
    return (
        abs(p.x - box.x) < b.half_w + margin
        and abs(p.y - box.y) < b.half_d + margin
        and p.z < box.z + b.height
    )


def _overlaps_box(p: Placed, box: Placed) -> bool:
    b, o = box.obj, p.obj
    return (
        abs(p.x - box.x) < b.half_w + o.half_w
        and abs(p.y - box.y) < b.half_d + o.half_d
        and p.z < box.z + b.height - 0.02
    )


def in_wall(p: Placed, box: Placed) -> bool:
    """True if p's footprint cuts into one of the box's walls (it is inside solid cardboard)."""
    if not _overlaps_box(p, box):
        return False
    b, o = box.obj, p.obj
    inner_w, inner_d = b.half_w - BOX_WALL, b.half_d - BOX_WALL
    fully_inside = (
        abs(p.x - box.x) + o.half_w <= inner_w + 1e-6
        and abs(p.y - box.y) + o.half_d <= inner_d + 1e-6
    )
    return not fully_inside


def _base_y(p: Placed, items: tuple[Placed, ...], depth: int = 0) -> float:
    """Depth of the table-level object at the bottom of p's stack (for painter's order)."""
    if p.z < 0.1 or depth > 4:
        return p.y
    for q in items:
        if q is p or q.obj.flat:
            continue
        top = q.z + q.obj.height
        if (
            abs(top - p.z) < 0.05
            and abs(q.x - p.x) < q.obj.half_w
            and abs(q.y - p.y) < q.obj.half_d
        ):
            return _base_y(q, items, depth + 1)
    return p.y


def _apply_shadow(img: Image, mask: Image, blur: float) -> None:
    import cv2

    x, y, w, h = cv2.boundingRect(mask)
    if w == 0 or h == 0:
        return
    f = _SHADOW_FACTOR
    pad = int(3 * blur) + 2
    x0, y0 = max(0, x - pad), max(0, y - pad)
    x1, y1 = min(mask.shape[1], x + w + pad), min(mask.shape[0], y + h + pad)
    sub = cv2.GaussianBlur(mask[y0:y1, x0:x1], (0, 0), blur)
    fx0, fy0 = int(x0 / f), int(y0 / f)
    fx1, fy1 = min(img.shape[1], int(x1 / f)), min(img.shape[0], int(y1 / f))
    if fx1 <= fx0 or fy1 <= fy0:
        return
    big = cv2.resize(sub, (fx1 - fx0, fy1 - fy0), interpolation=cv2.INTER_LINEAR)
    light = (255 - (big.astype(np.uint16) * int(_SHADOW_DARK * 256) >> 8)).astype(np.uint8)
    roi = img[fy0:fy1, fx0:fx1]
    roi[...] = cv2.multiply(roi, cv2.merge([light, light, light]), scale=1.0 / 255.0)


def _shadow_mask(img: Image) -> Image:
    h, w = img.shape[:2]
    return np.zeros(
        (max(1, round(h * _SHADOW_FACTOR)), max(1, round(w * _SHADOW_FACTOR))), np.uint8
    )


def _cast(mask: Image, cam: Camera, items: tuple[Placed, ...]) -> None:
    from sim.synthetic._draw import poly

    for p in items:
        val = 150 if p.obj.flat else 235
        if p.z > 0.05 and not p.obj.flat:
            val = max(70, round(235 - 160 * min(p.z, 1.0)))
        poly(mask, shadow_polygon(cam, p) * _SHADOW_FACTOR, val)


def _draw_tall(img: Image, cam: Camera, items: tuple[Placed, ...]) -> None:
    boxes = [p for p in items if p.obj.kind == "box"]
    ops: list[tuple[tuple[float, int, float], int, Placed]] = []
    for p in items:
        if p.obj.kind == "box":
            ops.append(((-p.y, 0, 0.0), 0, p))
            ops.append(((-p.y, 2, 0.0), 2, p))
            continue
        home = next((b for b in boxes if _inside_box(p, b)), None)
        if home is not None:
            ops.append(((-home.y, 1, p.z), 1, p))
        else:
            ops.append(((-_base_y(p, items), 1, p.z), 1, p))
    ops.sort(key=lambda op: op[0])
    for _, kind, p in ops:
        if kind == 0:
            draw_box_back(img, cam, p)
        elif kind == 2:
            draw_box_front(img, cam, p)
        else:
            draw_object(img, cam, p)


def render_static(cam: Camera, table: Image, resting: tuple[Placed, ...]) -> Image:
    """Table, shadows and resting objects: everything that does not move this frame."""
    img = table.copy()
    flat = tuple(sorted((p for p in resting if p.obj.flat), key=lambda p: -p.y))
    tall = tuple(p for p in resting if not p.obj.flat)
    if flat:
        mask = _shadow_mask(img)
        _cast(mask, cam, flat)
        _apply_shadow(img, mask, 1.0)
        for p in flat:
            draw_object(img, cam, p)
    if tall:
        mask = _shadow_mask(img)
        _cast(mask, cam, tall)
        _apply_shadow(img, mask, 1.3)
        _draw_tall(img, cam, tall)
    return img


class Compositor:
    """Draws frames, re-rendering the static layer only when resting objects change."""

    def __init__(self, cam: Camera, table: Image) -> None:
        self._cam = cam
        self._table = table
        self._key: tuple[Placed, ...] | None = None
        self._static: Image | None = None

    def static_layer(self, resting: tuple[Placed, ...]) -> Image:
        if self._static is None or resting != self._key:
            self._static = render_static(self._cam, self._table, resting)
            self._key = resting
        return self._static

    def frame(self, state: FrameState) -> Image:
        cam = self._cam
        img = self.static_layer(state.resting).copy()
        mask = _shadow_mask(img)
        _cast(mask, cam, state.moving)
        if state.hand.visible:
            draw_hand_shadow(mask, cam, state.hand, _SHADOW_FACTOR, 170)
        _apply_shadow(img, mask, 1.6)
        boxes = [p for p in state.resting if p.obj.kind == "box"]
        for p in sorted(state.moving, key=lambda q: q.z):
            draw_object(img, cam, p)
            for b in boxes:
                if _overlaps_box(p, b):
                    draw_box_front(img, cam, b)
        draw_hand(img, cam, state.hand)
        return img
