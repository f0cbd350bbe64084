"""Still images: probe, read and write, through OpenCV."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from storage.media._errors import MediaError
from storage.media._files import check_readable_file, temp_sibling
from storage.media._types import Image


def probe_image(path: Path) -> tuple[int, int]:
    """(width, height) of a still image as shown (EXIF orientation applied).

    Raises:
        MediaError: The file is missing, empty, or not an image OpenCV can read.
    """
    image = read_image_rgb(path)
    return image.shape[1], image.shape[0]


def read_image_rgb(path: Path) -> Image:
    """A still image as HxWx3 uint8 RGB, C-contiguous (alpha dropped, 16-bit scaled to 8).

    Raises:
        MediaError: The file is missing, empty, or not an image OpenCV can read.
    """
    import cv2

    check_readable_file(path)
    try:
        # imdecode on the bytes instead of imread(path): imread cannot open non-ASCII paths
        # on Windows.
        data = np.fromfile(path, dtype=np.uint8)
    except OSError as exc:
        raise MediaError(path, f"cannot be read ({exc.strerror or exc})") from None
    bgr = cv2.imdecode(data, cv2.IMREAD_COLOR)
    if bgr is None:
        raise MediaError(path, "not an image file, or the image is corrupt")
    return np.ascontiguousarray(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), dtype=np.uint8)


def write_png(path: Path, rgb: Image) -> None:
    """Write an HxWx3 uint8 RGB image (or HxW grey) as PNG, atomically.

    The image goes to a temporary file next to `path` that is renamed over it, so a crash never
    leaves a half-written PNG.

    Raises:
        ValueError: `rgb` is not a uint8 HxWx3 or HxW array.
        MediaError: The file cannot be written (the message names the file and the reason).
    """
    import cv2

    if rgb.dtype != np.uint8 or not (rgb.ndim == 2 or (rgb.ndim == 3 and rgb.shape[2] == 3)):
        raise ValueError(f"expected uint8 HxWx3 RGB or HxW grey, got {rgb.dtype} {rgb.shape}")
    pixels = rgb if rgb.ndim == 2 else cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
    ok, encoded = cv2.imencode(".png", pixels)
    if not ok:
        raise MediaError(path, "could not be encoded as PNG")
    tmp = temp_sibling(path)
    try:
        try:
            with open(tmp, "xb") as f:
                f.write(encoded.tobytes())
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise MediaError(path, f"cannot be written ({exc.strerror or exc})") from None
