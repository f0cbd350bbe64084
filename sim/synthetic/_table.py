"""Procedural table surface: wood boards or linen cloth in perspective, with a soft vignette."""

from __future__ import annotations

import functools

import numpy as np
import numpy.typing as npt

from sim.synthetic._camera import Camera
from sim.synthetic._model import TableKind

TABLE_FAR_Y = 2.6  # depth of the table's far edge, table units

_TABLE_RGB: dict[TableKind, tuple[float, float, float]] = {
    "oak": (212.0, 178.0, 134.0),
    "walnut": (150.0, 112.0, 82.0),
    "linen": (200.0, 208.0, 214.0),
}
_WALL_RGB = (86.0, 90.0, 98.0)


def _smooth_noise(
    rng: np.random.Generator, shape: tuple[int, int], sigma: tuple[float, float]
) -> npt.NDArray[np.float32]:
    """Gaussian-smoothed white noise with zero mean and unit spread, wrapped at the edges."""
    import cv2

    raw = rng.standard_normal(shape).astype(np.float32)
    py, px = (min(int(3 * sigma[1]) + 1, shape[0]), min(int(3 * sigma[0]) + 1, shape[1]))
    padded = np.pad(raw, ((py, py), (px, px)), mode="wrap")
    blurred = cv2.GaussianBlur(padded, (0, 0), sigmaX=sigma[0], sigmaY=sigma[1])
    out = blurred[py : py + shape[0], px : px + shape[1]]
    std = float(out.std()) or 1.0
    return np.asarray(out / std, dtype=np.float32)


def _sample(
    tex: npt.NDArray[np.float32], u: npt.NDArray[np.float32], v: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    import cv2

    th, tw = tex.shape
    mu = np.mod(u, tw).astype(np.float32)
    mv = np.mod(v, th).astype(np.float32)
    return np.asarray(cv2.remap(tex, mu, mv, cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP))


@functools.lru_cache(maxsize=8)
def table_image(width: int, height: int, kind: TableKind, seed: int) -> npt.NDArray[np.uint8]:
    """The empty table (H, W, 3) RGB, read-only; deterministic for its arguments."""
    rng = np.random.default_rng(seed)
    cam = Camera(width, height)
    rows = np.arange(height, dtype=np.float64) + 0.5
    cols = np.arange(width, dtype=np.float64) + 0.5
    y = cam.unproject_rows(rows)[:, None] * np.ones((1, width))
    s = 1.0 / (1.0 + cam.persp * y)
    x = (cols[None, :] - width / 2) / (cam.unit * s)
    px_per_unit = cam.unit * s  # pixels per table unit at each pixel, for anti-aliasing

    xf = x.astype(np.float32)
    yf = y.astype(np.float32)
    if kind == "linen":
        fine = _smooth_noise(rng, (256, 256), (0.6, 0.6))
        folds = _smooth_noise(rng, (64, 64), (5.0, 5.0))
        fade = np.clip(px_per_unit / 400.0, 0.0, 1.0).astype(np.float32)  # weave fades far away
        weave = (np.sin(xf * 160.0) + np.sin(yf * 160.0)) * 0.5 * fade
        pattern = (
            0.012 * _sample(fine, xf * 120.0, yf * 120.0)
            + 0.012 * weave
            + 0.035 * _sample(folds, xf * 5.0, yf * 5.0)
        )
    else:
        board_w = 0.42
        shift = float(rng.uniform(0.0, board_w))
        bx = (x + shift) / board_w
        board = np.floor(bx).astype(np.int64)
        tones = rng.uniform(-0.07, 0.07, size=64)
        tone = tones[np.mod(board, 64)].astype(np.float32)
        grain = _smooth_noise(rng, (96, 1024), (0.8, 6.0))
        waves = _smooth_noise(rng, (64, 64), (4.0, 4.0))
        warp = 5.0 * _sample(waves, xf * 3.0 + board.astype(np.float32) * 7.0, yf * 2.0)
        streaks = np.sin(xf * 45.0 + warp + board.astype(np.float32) * 1.7)
        figure = _sample(waves, xf * 1.5 + 17.0, yf * 0.8 + board.astype(np.float32) * 5.0)
        fine = _sample(grain, xf * 220.0, yf * 10.0)
        seam_px = np.abs(bx - np.round(bx)) * board_w * px_per_unit
        seam = np.exp(-((seam_px / 0.8) ** 2)).astype(np.float32)
        pattern = tone + 0.035 * streaks + 0.04 * figure + 0.02 * fine - 0.28 * seam
    pattern = pattern.astype(np.float32)

    # Soft light from the far left, vignette toward the corners.
    nx = (cols[None, :] / width - 0.42) * 1.25
    ny = (rows[:, None] / height - 0.40) * 1.05
    light = 1.08 - 0.42 * (nx**2 + ny**2) - 0.06 * (cols[None, :] / width)
    base = np.array(_TABLE_RGB[kind], dtype=np.float32)
    img = base[None, None, :] * ((1.0 + pattern) * light.astype(np.float32))[:, :, None]

    # The far edge of the table and the wall behind it.
    edge_row = cam.far_edge_row(TABLE_FAR_Y)
    r = rows[:, None] * np.ones((1, width))
    wall_t = np.clip((edge_row - r) / max(edge_row, 1.0), 0.0, 1.0)
    wall = np.array(_WALL_RGB, dtype=np.float32)[None, None, :] * (0.78 + 0.22 * (1.0 - wall_t))[
        :, :, None
    ].astype(np.float32)
    cover = np.clip(edge_row - r + 0.5, 0.0, 1.0).astype(np.float32)[:, :, None]
    img = img * (1.0 - cover) + wall * cover
    lip = np.exp(-(((r - edge_row - 1.2) / 1.2) ** 2)).astype(np.float32)[:, :, None]
    img = img * (1.0 + 0.25 * lip)

    out = np.asarray(np.clip(img + 0.5, 0, 255), dtype=np.uint8)
    out.setflags(write=False)
    return out
