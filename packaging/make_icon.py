"""Draw the workbench icon (resources/icons/workbench.png, 256×256) with our own code: a dark
tile, a two-link arm over a table line, and a playhead. Run once when the design changes:

    python packaging/make_icon.py
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

SIZE = 256
OUT = Path(__file__).resolve().parents[1] / "resources" / "icons" / "workbench.png"


def draw(size: int = SIZE) -> np.ndarray:
    s = size / 256
    img = np.zeros((size, size, 4), np.uint8)  # BGRA, transparent outside the tile
    tile = np.zeros((size, size), np.uint8)
    r = int(44 * s)
    cv2.rectangle(tile, (r, 0), (size - r, size), 255, -1)
    cv2.rectangle(tile, (0, r), (size, size - r), 255, -1)
    for cx, cy in ((r, r), (size - r, r), (r, size - r), (size - r, size - r)):
        cv2.circle(tile, (cx, cy), r, 255, -1, cv2.LINE_AA)
    img[tile > 0] = (58, 40, 32, 255)  # slate
    line = cv2.LINE_AA

    def p(x: float, y: float) -> tuple[int, int]:
        return int(x * s), int(y * s)

    cv2.line(img, p(40, 196), p(216, 196), (190, 200, 210, 255), int(8 * s), line)  # table
    base, elbow, wrist = p(70, 188), p(110, 100), p(176, 124)
    cv2.line(img, base, elbow, (60, 170, 250, 255), int(18 * s), line)  # links, amber
    cv2.line(img, elbow, wrist, (60, 170, 250, 255), int(14 * s), line)
    for c, rad in ((base, 14), (elbow, 11), (wrist, 8)):
        cv2.circle(img, c, int(rad * s), (240, 240, 240, 255), -1, line)
    cv2.line(img, p(170, 136), p(164, 158), (240, 240, 240, 255), int(6 * s), line)  # jaws
    cv2.line(img, p(184, 132), p(190, 154), (240, 240, 240, 255), int(6 * s), line)
    cv2.rectangle(img, p(166, 166), p(192, 192), (90, 200, 110, 255), -1, line)  # a brick
    cv2.line(img, p(206, 52), p(206, 210), (80, 80, 240, 255), int(5 * s), line)  # playhead
    tri = np.array([p(196, 44), p(216, 44), p(206, 58)], np.int32)
    cv2.fillConvexPoly(img, tri, (80, 80, 240, 255), line)
    return img


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(OUT), draw())
    print(OUT)


if __name__ == "__main__":
    main()
