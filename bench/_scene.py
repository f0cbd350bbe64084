"""A synthetic clip that compresses like real footage: a handheld camera over a cluttered scene.

Test patterns are the wrong input for measuring a video cache's size: flat synthetic frames
compress to almost nothing, and per-pixel noise (``testsrc2`` + ``noise``) barely compresses at
all. This scene has the statistics that set the size of real egocentric video:

- a "dead leaves" canvas (overlapping discs with power-law radii, each with its own colour,
  shading and fine texture), the standard model of natural-image statistics (and of camera
  texture charts), so edges and detail come at every scale;
- handheld camera motion: a slow pan and zoom with shake, so almost every pixel moves every
  frame, as in a head-mounted recording;
- two "hands" (textured ellipses) moving independently of the background;
- mild sensor noise and lens blur, as in a camera, then an encode as a phone would (H.264).

Written with PyAV only (no ffmpeg command line), so tests and benches can make it anywhere.
Deterministic for a given size, length and seed.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]

# The canvas is larger than the view so the camera can wander over it.
_CANVAS_SCALE = 2.2
_NOISE_BANK = 8  # distinct sensor-noise fields, cycled (drawing fresh noise costs more)


def dead_leaves(width: int, height: int, rng: np.random.Generator) -> Image:
    """An RGB "dead leaves" image: discs of power-law radius, textured, drawn back to front."""
    import cv2

    canvas = np.full((height, width, 3), 128, np.uint8)
    r_min, r_max = 3.0, 0.18 * min(width, height)
    area = 0.0
    # Radii ~ r^-3 (scale invariance); enough discs to cover the canvas several times.
    while area < 4.0 * width * height:
        u = rng.random()
        r = 1.0 / math.sqrt(u / r_max**2 + (1 - u) / r_min**2)
        centre = (int(rng.integers(0, width)), int(rng.integers(0, height)))
        colour = tuple(int(c) for c in rng.integers(20, 236, 3))
        cv2.circle(canvas, centre, int(r), colour, -1, lineType=cv2.LINE_AA)
        area += math.pi * r * r
    # Fine texture (paper, cloth, wood grain) and a soft illumination gradient.
    grain = cv2.GaussianBlur(rng.normal(0, 14, (height, width)).astype(np.float32), (0, 0), 1.2)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    light = 0.75 + 0.35 * np.sin(xx / width * 2.1 + 0.4) * np.cos(yy / height * 1.7)
    out = canvas.astype(np.float32) * light[..., None] + grain[..., None]
    return np.clip(out, 0, 255).astype(np.uint8)


def _hand(size: int, rng: np.random.Generator) -> tuple[Image, npt.NDArray[np.float32]]:
    """A skin-toned textured ellipse and its soft alpha mask."""
    import cv2

    colour = np.array([190, 140, 110], np.float32) + rng.normal(0, 8, 3).astype(np.float32)
    tex = rng.normal(0, 10, (size, size)).astype(np.float32)
    tex = cv2.GaussianBlur(tex, (0, 0), 2.0)
    rgb = np.clip(colour + tex[..., None], 0, 255).astype(np.uint8)
    mask = np.zeros((size, size), np.float32)
    cv2.ellipse(mask, (size // 2, size // 2), (size // 2 - 2, size // 3), 30, 0, 360, 1.0, -1)
    return rgb, cv2.GaussianBlur(mask, (0, 0), 2.0)


class Scene:
    """Frames of the handheld scene, generated one at a time."""

    def __init__(self, width: int, height: int, fps: float, seed: int = 7) -> None:
        rng = np.random.default_rng(seed)
        self.width, self.height, self.fps = width, height, fps
        cw, ch = int(width * _CANVAS_SCALE), int(height * _CANVAS_SCALE)
        self._canvas = dead_leaves(cw, ch, rng)
        self._noise = [
            rng.normal(0, 2.5, (height, width, 3)).astype(np.float32) for _ in range(_NOISE_BANK)
        ]
        hand_size = height // 3
        self._hands = [_hand(hand_size, rng) for _ in range(2)]
        self._phase = rng.uniform(0, 2 * math.pi, 8)

    def frame(self, n: int) -> Image:
        """Frame `n` as HxWx3 uint8 RGB."""
        import cv2

        t = n / self.fps
        p = self._phase
        cw, ch = self._canvas.shape[1], self._canvas.shape[0]
        # Slow wander over the canvas plus a few pixels of shake at head-movement frequencies.
        cx = cw / 2 + 0.28 * cw * math.sin(0.11 * t + p[0]) + 3 * math.sin(7.3 * t + p[1])
        cy = ch / 2 + 0.22 * ch * math.sin(0.07 * t + p[2]) + 2 * math.sin(5.9 * t + p[3])
        zoom = 1.0 + 0.25 * math.sin(0.05 * t + p[4])
        angle = 6.0 * math.sin(0.09 * t + p[5])
        m = cv2.getRotationMatrix2D((cx, cy), angle, zoom)
        m[:, 2] += (self.width / 2 - cx, self.height / 2 - cy)
        view = cv2.warpAffine(
            self._canvas, m, (self.width, self.height), flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_REFLECT,
        )  # fmt: skip
        out = view.astype(np.float32)
        for k, (rgb, mask) in enumerate(self._hands):
            s = rgb.shape[0]
            x = int((self.width - s) * (0.5 + 0.4 * math.sin(0.6 * t + p[6] + 2 * k)))
            y = int((self.height - s) * (0.6 + 0.35 * math.sin(0.9 * t + p[7] + k)))
            a = mask[..., None]
            out[y : y + s, x : x + s] = out[y : y + s, x : x + s] * (1 - a) + rgb * a
        out = cv2.GaussianBlur(out, (0, 0), 0.6) + self._noise[n % _NOISE_BANK]
        return np.clip(out, 0, 255).astype(np.uint8)


def write_scene(
    path: Path,
    seconds: float,
    *,
    width: int = 854,
    height: int = 480,
    fps: int = 30,
    gop: int = 250,
    bframes: int = 3,
    crf: int = 20,
    seed: int = 7,
) -> Path:
    """Encode `seconds` of the scene to `path` as H.264 (yuv420p) and return `path`."""
    import av

    scene = Scene(width, height, fps, seed)
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {
            "crf": str(crf), "g": str(gop), "keyint_min": str(gop), "sc_threshold": "0",
            "bf": str(bframes), "preset": "veryfast",
        }  # fmt: skip
        for n in range(round(seconds * fps)):
            frame = av.VideoFrame.from_ndarray(scene.frame(n), format="rgb24")
            out.mux(stream.encode(frame))
        out.mux(stream.encode())
    return path
