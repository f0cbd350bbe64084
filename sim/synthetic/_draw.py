"""Anti-aliased sub-pixel drawing primitives on RGB uint8 images (thin wrappers over cv2)."""

from __future__ import annotations

import functools
import math

import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]
Points = npt.NDArray[np.float64]
RGB = tuple[int, int, int]

_SHIFT = 4
_MUL = 1 << _SHIFT


def shade(rgb: tuple[int, int, int] | tuple[float, float, float], f: float) -> RGB:
    """Scale brightness (f < 1 darker), keeping the hue."""
    return (
        min(255, round(rgb[0] * f)),
        min(255, round(rgb[1] * f)),
        min(255, round(rgb[2] * f)),
    )


def tint(rgb: tuple[int, int, int], toward: tuple[int, int, int], f: float) -> RGB:
    """Mix `rgb` with `toward` by fraction f."""
    return (
        round(rgb[0] + (toward[0] - rgb[0]) * f),
        round(rgb[1] + (toward[1] - rgb[1]) * f),
        round(rgb[2] + (toward[2] - rgb[2]) * f),
    )


def _fixed(pts: Points) -> npt.NDArray[np.int32]:
    return np.round(np.asarray(pts, dtype=np.float64) * _MUL).astype(np.int32).reshape(-1, 1, 2)


def _pt(p: tuple[float, float] | Points) -> tuple[int, int]:
    return (round(float(p[0]) * _MUL), round(float(p[1]) * _MUL))


def poly(img: Image, pts: Points, color: RGB | int) -> None:
    """Fill a polygon given in float pixels."""
    import cv2

    cv2.fillPoly(img, [_fixed(pts)], _color(color), cv2.LINE_AA, _SHIFT)


def outline(
    img: Image, pts: Points, color: RGB | int, thickness: int = 1, closed: bool = True
) -> None:
    import cv2

    cv2.polylines(img, [_fixed(pts)], closed, _color(color), max(1, thickness), cv2.LINE_AA, _SHIFT)


def line(
    img: Image,
    p0: tuple[float, float] | Points,
    p1: tuple[float, float] | Points,
    color: RGB | int,
    width: float,
) -> None:
    """A round-capped thick line (a capsule) of the given width in pixels."""
    import cv2

    w = max(1, round(width))
    cv2.line(img, _pt(p0), _pt(p1), _color(color), w, cv2.LINE_AA, _SHIFT)


def disc(img: Image, c: tuple[float, float] | Points, r: float, color: RGB | int) -> None:
    import cv2

    cv2.circle(img, _pt(c), max(1, round(r * _MUL)), _color(color), -1, cv2.LINE_AA, _SHIFT)


def ellipse_points(
    c: tuple[float, float], ax: float, ay: float, a0: float = 0.0, a1: float = 360.0, n: int = 40
) -> Points:
    """Points on an axis-aligned ellipse from angle a0 to a1 (degrees; 90 = down the screen)."""
    unit = _unit_arc(float(a0), float(a1), int(n))
    return np.asarray(unit * np.array([ax, ay]) + np.array([c[0], c[1]]), dtype=np.float64)


@functools.lru_cache(maxsize=256)
def _unit_arc(a0: float, a1: float, n: int) -> Points:
    t = np.radians(np.linspace(a0, a1, n))
    arc = np.stack([np.cos(t), np.sin(t)], axis=1)
    arc.setflags(write=False)
    return arc


def rotate(v: tuple[float, float], deg: float) -> tuple[float, float]:
    a = math.radians(deg)
    ca, sa = math.cos(a), math.sin(a)
    return (v[0] * ca - v[1] * sa, v[0] * sa + v[1] * ca)


def _color(c: RGB | int) -> tuple[int, int, int]:
    if isinstance(c, int):
        return (c, c, c)
    return (int(c[0]), int(c[1]), int(c[2]))
