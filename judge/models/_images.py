"""Images as a model is sent them: a crop, the longest side resized, JPEG bytes."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def encode_jpeg(
    rgb: npt.NDArray[np.uint8],
    *,
    roi: tuple[float, float, float, float] | None,
    max_side: int,
    quality: int,
) -> bytes:
    """Crop (ROI in 0..1 of the frame, applied first), resize the longest side to max_side, JPEG.

    Shrinking uses INTER_AREA (no aliasing); enlarging a small crop uses INTER_CUBIC, since
    INTER_AREA falls back to nearest-like blocks when upsampling.
    """
    import cv2

    if roi is not None:
        h, w = rgb.shape[:2]
        x, y, rw, rh = roi
        x0, y0 = int(np.floor(x * w)), int(np.floor(y * h))
        x1 = max(x0 + 1, min(w, int(np.ceil((x + rw) * w))))
        y1 = max(y0 + 1, min(h, int(np.ceil((y + rh) * h))))
        rgb = rgb[y0:y1, x0:x1]
    h, w = rgb.shape[:2]
    scale = max_side / max(h, w)
    if scale != 1.0:
        size = (max(1, round(w * scale)), max(1, round(h * scale)))
        interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC
        rgb = np.asarray(cv2.resize(rgb, size, interpolation=interp), dtype=np.uint8)
    bgr = cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2BGR)
    ok, buf = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise ValueError("JPEG encoding failed")
    return bytes(buf.tobytes())
