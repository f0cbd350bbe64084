"""A right hand and forearm seen from above and behind: open, or closed around an object."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim.synthetic._camera import Camera
from sim.synthetic._draw import RGB, Image, Points, disc, line, outline, poly, rotate

SKIN: RGB = (226, 176, 144)
_SKIN_DARK: RGB = (196, 142, 112)
_SKIN_LIGHT: RGB = (236, 192, 162)
_SKIN_MID: RGB = (212, 160, 128)
_EDGE: RGB = (122, 80, 62)
_NAIL: RGB = (238, 206, 196)
_SLEEVE: RGB = (62, 66, 74)
_SLEEVE_EDGE: RGB = (34, 36, 42)

# Fingers from index (left, thumb side) to little finger: across offset, forward offset,
# length, width and open spread (degrees), in palm-widths of table units.
_FINGERS = (
    (-0.118, 0.000, 0.29, 0.080, -7.0),
    (-0.040, 0.014, 0.32, 0.082, -2.0),
    (0.040, 0.008, 0.30, 0.078, 3.5),
    (0.112, -0.022, 0.24, 0.068, 9.0),
)


@dataclass(frozen=True)
class HandPose:
    """Grip point (table units; z is the height of the fingers) and how closed the hand is."""

    x: float
    y: float
    z: float
    grip: float = 0.0
    visible: bool = True


@dataclass(frozen=True)
class _Capsule:
    p0: tuple[float, float]
    p1: tuple[float, float]
    width: float


@dataclass(frozen=True)
class _HandGeometry:
    palm: Points
    forearm: Points
    sleeve: Points
    fingers: tuple[_Capsule, ...]
    thumb: tuple[_Capsule, ...]
    knuckles: tuple[tuple[float, float], ...]
    direction: tuple[float, float]
    scale: float


def _add(p: tuple[float, float], v: tuple[float, float], k: float) -> tuple[float, float]:
    return (p[0] + v[0] * k, p[1] + v[1] * k)


def _unit(v: tuple[float, float]) -> tuple[float, float]:
    n = math.hypot(v[0], v[1]) or 1.0
    return (v[0] / n, v[1] / n)


def hand_geometry(cam: Camera, pose: HandPose) -> _HandGeometry:
    """Screen-space shapes of the hand for a pose (shared by the drawing and the shadow)."""
    g = cam.project(pose.x, pose.y, pose.z)
    s = 0.86 * cam.unit * cam.scale(pose.y) * (1.0 + 0.25 * max(pose.z, 0.0))
    grip = min(max(pose.grip, 0.0), 1.0)
    shoulder = (cam.width * 0.86, cam.height * 2.3)
    to_hand = _unit((g[0] - shoulder[0], g[1] - shoulder[1]))
    d = _unit((0.55 * to_hand[0], 0.55 * to_hand[1] - 0.45))
    n = (-d[1], d[0])  # points to the right of the hand
    knuckle = _add(g, d, -(0.12 + 0.12 * grip) * s)
    wrist = _add(knuckle, d, -0.36 * s)

    palm_pts = [
        _add(_add(wrist, n, -0.125 * s), d, 0.0),
        _add(_add(wrist, n, -0.150 * s), d, 0.14 * s),
        _add(_add(knuckle, n, -0.160 * s), d, -0.05 * s),
        _add(_add(knuckle, n, -0.120 * s), d, 0.025 * s),
        _add(_add(knuckle, n, 0.000 * s), d, 0.045 * s),
        _add(_add(knuckle, n, 0.115 * s), d, 0.010 * s),
        _add(_add(knuckle, n, 0.155 * s), d, -0.06 * s),
        _add(_add(wrist, n, 0.140 * s), d, 0.12 * s),
        _add(_add(wrist, n, 0.120 * s), d, 0.0),
    ]
    fingers: list[_Capsule] = []
    knuckles: list[tuple[float, float]] = []
    for across, fwd, length, width, spread in _FINGERS:
        base = _add(_add(knuckle, n, across * s), d, fwd * s)
        knuckles.append(base)
        fdir = rotate(d, spread * (1.0 - grip))
        visible_len = length * (1.0 - 0.55 * grip)
        tip = _add(base, fdir, visible_len * s)
        fingers.append(_Capsule(base, tip, width * s * (1.0 + 0.12 * grip)))
    t0 = _add(_add(wrist, d, 0.12 * s), n, -0.12 * s)
    a1, a2 = -55.0 + 25.0 * grip, -28.0 + 26.0 * grip
    t1 = _add(t0, rotate(d, a1), 0.14 * s)
    t2 = _add(t1, rotate(d, a2), (0.12 - 0.03 * grip) * s)
    thumb = (_Capsule(t0, t1, 0.10 * s), _Capsule(t1, t2, 0.088 * s))

    back = _unit((shoulder[0] - wrist[0], shoulder[1] - wrist[1]))
    m = (-back[1], back[0])
    cuff = _add(wrist, back, 0.62 * s)
    far = _add(wrist, back, 3.2 * s)
    forearm = np.array(
        [
            _add(wrist, m, 0.118 * s),
            _add(cuff, m, 0.155 * s),
            _add(cuff, m, -0.155 * s),
            _add(wrist, m, -0.118 * s),
        ]
    )
    sleeve = np.array(
        [
            _add(cuff, m, 0.185 * s),
            _add(far, m, 0.34 * s),
            _add(far, m, -0.34 * s),
            _add(cuff, m, -0.185 * s),
        ]
    )
    return _HandGeometry(
        palm=np.array(palm_pts),
        forearm=forearm,
        sleeve=sleeve,
        fingers=tuple(fingers),
        thumb=thumb,
        knuckles=tuple(knuckles),
        direction=d,
        scale=s,
    )


def draw_hand(img: Image, cam: Camera, pose: HandPose) -> None:
    if not pose.visible:
        return
    h = hand_geometry(cam, pose)
    s = h.scale
    grip = min(max(pose.grip, 0.0), 1.0)
    edge_w = max(1.0, s * 0.012)
    # Silhouette pass: everything slightly fattened in the edge colour, then filled over.
    outline(img, h.forearm, _EDGE, round(edge_w * 2))
    for c in (*h.fingers, *h.thumb):
        line(img, c.p0, c.p1, _EDGE, c.width + 2 * edge_w)
    outline(img, h.palm, _EDGE, round(edge_w * 2))
    poly(img, h.forearm, SKIN)
    # The far side of the forearm turns away from the light.
    f = h.forearm
    under = np.array([f[3], f[2], f[2] * 0.65 + f[1] * 0.35, f[3] * 0.7 + f[0] * 0.3])
    poly(img, under, _SKIN_MID)
    for c in h.thumb:
        line(img, c.p0, c.p1, SKIN, c.width)
    poly(img, h.palm, SKIN)
    for c in h.fingers:
        line(img, c.p0, c.p1, SKIN, c.width)

    d = h.direction
    n = (-d[1], d[0])
    # The little-finger side of the hand is in shade; a highlight runs along the back.
    shade_pts = np.array(
        [
            _add(h.knuckles[3], n, 0.03 * s),
            _add(_add(h.knuckles[3], n, 0.03 * s), d, -0.30 * s),
            _add(_add(h.knuckles[3], n, -0.02 * s), d, -0.34 * s),
            _add(h.knuckles[3], n, -0.02 * s),
        ]
    )
    poly(img, shade_pts, _SKIN_DARK)
    line(
        img,
        _add(h.knuckles[1], d, -0.06 * s),
        _add(h.knuckles[1], d, -0.26 * s),
        _SKIN_LIGHT,
        s * 0.07,
    )
    for c in h.fingers:
        mid = _add(c.p0, _unit((c.p1[0] - c.p0[0], c.p1[1] - c.p0[1])), c.width * 0.2)
        line(img, mid, c.p1, _SKIN_LIGHT, c.width * 0.22)
    # Creases between the fingers, knuckle bumps and nails (nails only on open fingers).
    for a, b in zip(h.fingers[:-1], h.fingers[1:], strict=True):
        p = ((a.p0[0] + b.p0[0]) / 2, (a.p0[1] + b.p0[1]) / 2)
        line(
            img,
            _add(p, d, 0.01 * s),
            _add(p, d, (0.07 + 0.02 * grip) * s),
            _EDGE,
            max(1.0, s * 0.008),
        )
    for k in h.knuckles:
        disc(img, _add(k, d, -0.015 * s), s * 0.022, _SKIN_LIGHT)
    for c in h.fingers:
        u = _unit((c.p1[0] - c.p0[0], c.p1[1] - c.p0[1]))
        if grip < 0.5:
            disc(img, _add(c.p1, u, -c.width * 0.22), c.width * 0.28, _NAIL)
        else:
            # Curled over the object: the middle phalanx turns down, into shade.
            bend = _add(c.p1, u, -c.width * 0.55)
            line(img, bend, c.p1, _SKIN_DARK, c.width * 0.86)
            m = (-u[1], u[0])
            line(
                img,
                _add(bend, m, -c.width * 0.3),
                _add(bend, m, c.width * 0.3),
                _SKIN_LIGHT,
                max(1.0, c.width * 0.18),
            )
    t = h.thumb[1]
    tu = _unit((t.p1[0] - t.p0[0], t.p1[1] - t.p0[1]))
    disc(img, _add(t.p1, tu, -t.width * 0.2), t.width * 0.28, _NAIL)
    poly(img, h.sleeve, _SLEEVE)
    outline(img, h.sleeve, _SLEEVE_EDGE, round(edge_w * 2))
    cuff = h.sleeve[[0, 3]]
    line(img, cuff[0], cuff[1], (84, 88, 98), max(2.0, s * 0.05))


def draw_hand_shadow(mask: Image, cam: Camera, pose: HandPose, factor: float, value: int) -> None:
    """Draw the hand's cast shadow into a single-channel mask that is `factor` times smaller."""
    if not pose.visible:
        return
    h = hand_geometry(cam, pose)
    off = cam.shadow_offset(pose.y, pose.z + 0.08)
    o = np.array(off)

    def tr(p: Points) -> Points:
        return np.asarray((np.asarray(p, dtype=np.float64) + o) * factor, dtype=np.float64)

    for shape in (h.palm, h.forearm, h.sleeve):
        poly(mask, tr(shape), value)
    for c in (*h.fingers, *h.thumb):
        line(mask, tr(np.array(c.p0)), tr(np.array(c.p1)), value, c.width * factor)
