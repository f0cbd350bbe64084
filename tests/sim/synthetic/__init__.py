"""Shared pixel helpers for the synthetic renderer tests: find objects and the hand by colour."""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt

Frame = npt.NDArray[np.uint8]
Mask = npt.NDArray[np.bool_]

# OpenCV HSV ranges (H 0..180, S and V 0..255) of the saturated object colours.
_HUES: dict[str, tuple[tuple[int, int], ...]] = {
    "red": ((0, 7), (172, 180)),
    "yellow": ((21, 34),),
    "green": ((45, 85),),
    "blue": ((100, 125),),
}


def colour_mask(frame: Frame, colour: str) -> Mask:
    """Pixels of one of the saturated object colours (never the skin, table or box)."""
    import cv2

    hsv = cv2.cvtColor(frame, cv2.COLOR_RGB2HSV)
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    hue = np.zeros(h.shape, bool)
    for lo, hi in _HUES[colour]:
        hue |= (h >= lo) & (h <= hi)
    return np.asarray(hue & (s >= 150) & (v >= 90))


def skin_mask(frame: Frame) -> Mask:
    """Pixels of the hand (for scenes on the grey linen table)."""
    import cv2

    hsv = cv2.cvtColor(frame, cv2.COLOR_RGB2HSV)
    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    return np.asarray((h >= 8) & (h <= 13) & (s >= 60) & (s <= 135) & (v >= 140))


def centroid(mask: Mask) -> tuple[float, float] | None:
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return None
    return float(xs.mean()), float(ys.mean())


def blobs(mask: Mask, min_area: int) -> list[tuple[float, float]]:
    """Centroids of the connected components of at least `min_area` pixels."""
    import cv2

    n, _, stats, cents = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    return [
        (float(cents[i][0]), float(cents[i][1]))
        for i in range(1, n)
        if stats[i, cv2.CC_STAT_AREA] >= min_area
    ]


def max_step(track: list[tuple[float, float] | None]) -> float:
    """Largest centroid move between consecutive frames where the object is visible."""
    best = 0.0
    for a, b in itertools.pairwise(track):
        if a is not None and b is not None:
            best = max(best, float(np.hypot(b[0] - a[0], b[1] - a[1])))
    return best


def longest_run(flags: list[bool]) -> int:
    best = run = 0
    for f in flags:
        run = run + 1 if f else 0
        best = max(best, run)
    return best
