"""Drawing of tabletop objects (bricks, cups, plates, mats, fruit, boxes) and their shadows."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.synthetic._camera import Camera
from sim.synthetic._draw import (
    RGB,
    Image,
    Points,
    disc,
    ellipse_points,
    line,
    outline,
    poly,
    shade,
    tint,
)
from sim.synthetic._model import BOX_FLOOR, BOX_WALL, COLORS, SceneObject

_WHITE: RGB = (255, 255, 255)


@dataclass(frozen=True)
class Placed:
    """An object drawn at a pose (bottom centre) that may differ from its initial one."""

    obj: SceneObject
    x: float
    y: float
    z: float = 0.0


def _rgb(o: SceneObject) -> RGB:
    return COLORS[o.color]


def _quad(cam: Camera, corners: list[tuple[float, float, float]]) -> Points:
    return cam.project_many(np.array(corners, dtype=np.float64))


def _cuboid(
    img: Image, cam: Camera, x: float, y: float, z: float, a: float, b: float, h: float, rgb: RGB
) -> None:
    x0, x1, y0, y1, z1 = x - a, x + a, y - b, y + b, z + h
    if x0 > 0:
        poly(
            img,
            _quad(cam, [(x0, y0, z), (x0, y1, z), (x0, y1, z1), (x0, y0, z1)]),
            shade(rgb, 0.62),
        )
    if x1 < 0:
        poly(
            img,
            _quad(cam, [(x1, y0, z), (x1, y1, z), (x1, y1, z1), (x1, y0, z1)]),
            shade(rgb, 0.68),
        )
    front = _quad(cam, [(x0, y0, z), (x1, y0, z), (x1, y0, z1), (x0, y0, z1)])
    poly(img, front, shade(rgb, 0.80))
    top = _quad(cam, [(x0, y0, z1), (x1, y0, z1), (x1, y1, z1), (x0, y1, z1)])
    poly(img, top, tint(rgb, _WHITE, 0.10))
    outline(img, top, shade(rgb, 0.55))
    outline(img, front, shade(rgb, 0.50))
    line(img, top[0], top[1], tint(rgb, _WHITE, 0.35), 1)


def _draw_block(img: Image, cam: Camera, p: Placed) -> None:
    o, rgb = p.obj, _rgb(p.obj)
    _cuboid(img, cam, p.x, p.y, p.z, o.half_w, o.half_d, o.height, rgb)
    # Studs on top make it read as a toy brick.
    ztop = p.z + o.height
    r = o.half_w * 0.30
    side, top, edge = shade(rgb, 0.72), tint(rgb, _WHITE, 0.16), shade(rgb, 0.55)
    for dy in (0.5, -0.5):
        for dx in (-0.5, 0.5):
            sx, sy = p.x + dx * o.half_w, p.y + dy * o.half_d
            ax, ay = cam.ground_axes(sy, r)
            cb = cam.project(sx, sy, ztop)
            ct = cam.project(sx, sy, ztop + o.height * 0.13)
            poly(img, ellipse_points(cb, ax, ay, 0, 360, 16), side)
            cap = ellipse_points(ct, ax, ay, 0, 360, 16)
            poly(img, cap, top)
            outline(img, cap, edge)


def _cylinder(
    img: Image,
    cam: Camera,
    x: float,
    y: float,
    z: float,
    r: float,
    h: float,
    rgb: RGB,
    rim: bool,
) -> tuple[tuple[float, float], float, float]:
    """Draw a vertical cylinder; returns the top ellipse (centre, ax, ay)."""
    ax, ay = cam.ground_axes(y, r)
    cb = cam.project(x, y, z)
    ct = cam.project(x, y, z + h)
    n = max(12, min(48, int(ax)))
    lower = ellipse_points(cb, ax, ay, 0, 180, n)
    upper = ellipse_points(ct, ax, ay, 180, 360, n)
    poly(img, np.vstack([lower, upper]), rgb)
    # Shade the right flank, light the left one: a cheap cylindrical gradient.
    for a0, a1, col in ((0, 40, shade(rgb, 0.72)), (0, 16, shade(rgb, 0.62))):
        strip = np.vstack(
            [ellipse_points(cb, ax, ay, a0, a1, 8), ellipse_points(ct, ax, ay, a1, a0, 8)]
        )
        poly(img, strip, col)
    hl = np.vstack(
        [ellipse_points(cb, ax, ay, 122, 140, 6), ellipse_points(ct, ax, ay, 140, 122, 6)]
    )
    poly(img, hl, tint(rgb, _WHITE, 0.28))
    top = ellipse_points(ct, ax, ay, 0, 360, 2 * n)
    poly(img, top, tint(rgb, _WHITE, 0.12) if not rim else tint(rgb, _WHITE, 0.2))
    outline(img, np.vstack([lower, upper]), shade(rgb, 0.5))
    return ct, ax, ay


def _draw_cup(img: Image, cam: Camera, p: Placed) -> None:
    o, rgb = p.obj, _rgb(p.obj)
    r, h = o.half_w, o.height
    # Handle on the right, drawn first so the body overlaps its root.
    hx, hy = cam.project(p.x + r * 0.95, p.y, p.z + h * 0.52)
    hax = cam.px(p.y, r * 0.55)
    hay = cam.px(p.y, h * 0.30) * cam.upright
    arc = ellipse_points((hx, hy), hax, hay, -90, 90, 16)
    wid = max(1.0, cam.px(p.y, r * 0.22))
    outline(img, arc, shade(rgb, 0.45), round(wid + 2), closed=False)
    outline(img, arc, shade(rgb, 0.85), round(wid), closed=False)
    ct, ax, ay = _cylinder(img, cam, p.x, p.y, p.z, r, h, rgb, rim=True)
    inner = ellipse_points(ct, ax * 0.86, ay * 0.86, 0, 360, 40)
    poly(img, inner, shade(rgb, 0.42))
    # The lit inside of the far wall.
    far = np.vstack(
        [
            ellipse_points(ct, ax * 0.86, ay * 0.86, 180, 360, 20),
            ellipse_points((ct[0], ct[1] - ay * 0.25), ax * 0.86, ay * 0.55, 360, 180, 20),
        ]
    )
    poly(img, far, shade(rgb, 0.66))
    outline(img, ellipse_points(ct, ax, ay, 0, 360, 48), shade(rgb, 0.55))


def _draw_plate(img: Image, cam: Camera, p: Placed) -> None:
    o, rgb = p.obj, _rgb(p.obj)
    ct, ax, ay = _cylinder(img, cam, p.x, p.y, p.z, o.half_w, o.height, shade(rgb, 0.92), rim=False)
    poly(img, ellipse_points(ct, ax, ay, 0, 360, 64), tint(rgb, _WHITE, 0.10))
    well = ellipse_points((ct[0], ct[1] + ay * 0.03), ax * 0.66, ay * 0.66, 0, 360, 56)
    poly(img, well, shade(rgb, 0.93))
    outline(img, well, shade(rgb, 0.80))
    outline(img, ellipse_points(ct, ax * 0.95, ay * 0.95, 200, 340, 24), _WHITE, closed=False)
    outline(img, ellipse_points(ct, ax, ay, 0, 360, 64), shade(rgb, 0.70))


def _draw_mat(img: Image, cam: Camera, p: Placed) -> None:
    o, rgb = p.obj, _rgb(p.obj)
    z = p.z + o.height

    def rounded(a: float, b: float, zz: float) -> Points:
        rr = min(a, b) * 0.22
        pts: list[tuple[float, float, float]] = []
        for cx, cy, a0 in ((a - rr, b - rr, 0), (-a + rr, b - rr, 90), (-a + rr, -b + rr, 180)):
            for t in np.radians(np.linspace(a0, a0 + 90, 6)):
                pts.append((p.x + cx + rr * np.cos(t), p.y + cy + rr * np.sin(t), zz))
        for t in np.radians(np.linspace(270, 360, 6)):
            pts.append((p.x + a - rr + rr * np.cos(t), p.y - b + rr + rr * np.sin(t), zz))
        return cam.project_many(np.array(pts))

    edge = rounded(o.half_w, o.half_d, p.z)
    poly(img, edge, shade(rgb, 0.7))
    top = rounded(o.half_w, o.half_d, z)
    poly(img, top, rgb)
    stitch = rounded(o.half_w * 0.9, o.half_d * 0.86, z)
    outline(img, stitch, tint(rgb, _WHITE, 0.35))
    outline(img, top, shade(rgb, 0.6))


def _draw_fruit(img: Image, cam: Camera, p: Placed) -> None:
    o, rgb = p.obj, _rgb(p.obj)
    r = o.half_w
    c = cam.project(p.x, p.y, p.z + r)
    rad = cam.px(p.y, r)
    stretch = 1.25 if o.color == "yellow" else 1.0  # a lemon is longer than it is wide
    body = ellipse_points(c, rad * stretch, rad, 0, 360, 48)
    poly(img, body, shade(rgb, 0.70))
    lit = ellipse_points(
        (c[0] - rad * 0.10, c[1] - rad * 0.10), rad * 0.86 * stretch, rad * 0.86, 0, 360, 48
    )
    poly(img, lit, rgb)
    hl = (c[0] - rad * 0.38 * stretch, c[1] - rad * 0.40)
    disc(img, hl, rad * 0.24, tint(rgb, _WHITE, 0.30))
    disc(img, hl, rad * 0.11, tint(rgb, _WHITE, 0.65))
    outline(img, body, shade(rgb, 0.5))
    if stretch > 1.0:
        for side in (-1, 1):
            tip = (c[0] + side * rad * stretch * 1.08, c[1])
            disc(img, tip, rad * 0.16, shade(rgb, 0.85))
        return
    top = (c[0] + rad * 0.05, c[1] - rad * 0.62)
    line(img, top, (top[0] + rad * 0.12, top[1] - rad * 0.38), (96, 64, 36), rad * 0.12)
    if o.color in ("red", "green"):  # an apple: add a leaf
        leaf = ellipse_points((top[0] + rad * 0.34, top[1] - rad * 0.30), rad * 0.30, rad * 0.13)
        poly(img, leaf, (64, 140, 52) if o.color == "red" else (40, 110, 40))
    else:
        disc(img, top, rad * 0.08, (90, 110, 40))


def draw_box_back(img: Image, cam: Camera, p: Placed) -> None:
    """Outer side face, floor and the inner faces of a box: everything its contents cover."""
    o, rgb = p.obj, _rgb(p.obj)
    a, b, h, t = o.half_w, o.half_d, o.height, BOX_WALL
    x0, x1, y0, y1 = p.x - a, p.x + a, p.y - b, p.y + b
    i0, i1, j0, j1 = x0 + t, x1 - t, y0 + t, y1 - t
    z, zt, zf = p.z, p.z + h, p.z + BOX_FLOOR
    if x0 > 0:
        poly(
            img, _quad(cam, [(x0, y0, z), (x0, y1, z), (x0, y1, zt), (x0, y0, zt)]), shade(rgb, 0.6)
        )
    if x1 < 0:
        poly(
            img, _quad(cam, [(x1, y0, z), (x1, y1, z), (x1, y1, zt), (x1, y0, zt)]), shade(rgb, 0.7)
        )
    poly(img, _quad(cam, [(i0, j0, zf), (i1, j0, zf), (i1, j1, zf), (i0, j1, zf)]), shade(rgb, 0.5))
    poly(
        img, _quad(cam, [(i0, j1, zf), (i1, j1, zf), (i1, j1, zt), (i0, j1, zt)]), shade(rgb, 0.74)
    )
    if i0 < 0:
        left = _quad(cam, [(i0, j0, zf), (i0, j1, zf), (i0, j1, zt), (i0, j0, zt)])
        poly(img, left, shade(rgb, 0.84))
    if i1 > 0:
        right = _quad(cam, [(i1, j0, zf), (i1, j1, zf), (i1, j1, zt), (i1, j0, zt)])
        poly(img, right, shade(rgb, 0.62))
    # A soft contact shade where the floor meets the far wall.
    line(img, cam.project(i0, j1, zf), cam.project(i1, j1, zf), shade(rgb, 0.42), 2)


def draw_box_front(img: Image, cam: Camera, p: Placed) -> None:
    """The near outer wall and the rims: drawn over whatever is inside the box."""
    o, rgb = p.obj, _rgb(p.obj)
    a, b, h, t = o.half_w, o.half_d, o.height, BOX_WALL
    x0, x1, y0, y1 = p.x - a, p.x + a, p.y - b, p.y + b
    i0, i1, j0, j1 = x0 + t, x1 - t, y0 + t, y1 - t
    z, zt = p.z, p.z + h
    front = _quad(cam, [(x0, y0, z), (x1, y0, z), (x1, y0, zt), (x0, y0, zt)])
    poly(img, front, shade(rgb, 0.86))
    rim = tint(rgb, _WHITE, 0.14)
    edge = shade(rgb, 0.55)
    for quad in (
        [(x0, y1, zt), (x1, y1, zt), (x1, j1, zt), (x0, j1, zt)],
        [(x0, y0, zt), (i0, y0, zt), (i0, y1, zt), (x0, y1, zt)],
        [(i1, y0, zt), (x1, y0, zt), (x1, y1, zt), (i1, y1, zt)],
        [(x0, y0, zt), (x1, y0, zt), (x1, j0, zt), (x0, j0, zt)],
    ):
        q = _quad(cam, quad)
        poly(img, q, rim)
    outline(img, _quad(cam, [(x0, y0, zt), (x1, y0, zt), (x1, y1, zt), (x0, y1, zt)]), edge)
    outline(img, _quad(cam, [(i0, j0, zt), (i1, j0, zt), (i1, j1, zt), (i0, j1, zt)]), edge)
    outline(img, front, edge)


def draw_object(img: Image, cam: Camera, p: Placed) -> None:
    """Draw a (non-box) object at its pose; a box is drawn whole."""
    kind = p.obj.kind
    if kind == "block":
        _draw_block(img, cam, p)
    elif kind == "cup":
        _draw_cup(img, cam, p)
    elif kind == "plate":
        _draw_plate(img, cam, p)
    elif kind == "mat":
        _draw_mat(img, cam, p)
    elif kind == "fruit":
        _draw_fruit(img, cam, p)
    else:
        draw_box_back(img, cam, p)
        draw_box_front(img, cam, p)


def _footprint(o: SceneObject, x: float, y: float, z: float) -> Points:
    """Ground outline (x, y, z) of the object's volume at height z."""
    if o.kind in ("block", "box", "mat"):
        a, b = o.half_w, o.half_d
        return np.array(
            [(x - a, y - b, z), (x + a, y - b, z), (x + a, y + b, z), (x - a, y + b, z)]
        )
    t = np.linspace(0, 2 * np.pi, 16, endpoint=False)
    rx = o.half_w * (1.25 if o.kind == "fruit" and o.color == "yellow" else 1.0)
    return np.stack([x + rx * np.cos(t), y + o.half_d * np.sin(t), np.full_like(t, z)], axis=1)


def shadow_polygon(cam: Camera, p: Placed) -> Points:
    """Screen polygon (pixels) of the shadow the object casts on the table."""
    import cv2

    o = p.obj
    from sim.synthetic._camera import LIGHT

    pts = []
    for zz in (p.z, p.z + o.height * 0.8):
        fp = _footprint(o, p.x + LIGHT[0] * zz, p.y + LIGHT[1] * zz, 0.0)
        pts.append(cam.project_many(fp))
    allpts = np.vstack(pts).astype(np.float32)
    hull = cv2.convexHull(allpts)
    return np.asarray(hull, dtype=np.float64).reshape(-1, 2)
