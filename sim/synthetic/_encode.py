"""Write frames as H.264 MP4 (PyAV) and images as PNG (OpenCV)."""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from pathlib import Path

import numpy as np
import numpy.typing as npt

# Single-threaded x264 so that the same frames give the same bytes.
_X264_OPTIONS = {
    "crf": "23",
    "preset": "veryfast",
    "g": "48",
    "bf": "2",
    "threads": "1",
    "x264-params": "me=dia:subme=1:rc-lookahead=5",
}


def encode_mp4(frames: Iterable[npt.NDArray[np.uint8]], path: Path, fps: int) -> int:
    """Encode RGB uint8 frames (all the same even size) to H.264 yuv420p; returns the count."""
    import av
    import cv2

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with av.open(str(path), mode="w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=fps, options=dict(_X264_OPTIONS))
        stream.pix_fmt = "yuv420p"
        stream.codec_context.time_base = Fraction(1, fps)
        stream.codec_context.thread_count = 1
        shape: tuple[int, ...] | None = None
        for frame in frames:
            if frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
                raise ValueError(f"{path}: frame {count} is not RGB uint8 (got {frame.shape})")
            if shape is None:
                shape = frame.shape
                stream.width, stream.height = frame.shape[1], frame.shape[0]
            elif frame.shape != shape:
                raise ValueError(f"{path}: frame {count} has shape {frame.shape}, not {shape}")
            # OpenCV's I420 conversion is BT.601 limited range, like swscale's, and much faster.
            rgb = np.ascontiguousarray(frame)
            yuv = np.asarray(cv2.cvtColor(rgb, cv2.COLOR_RGB2YUV_I420), dtype=np.uint8)
            vf = av.VideoFrame.from_ndarray(yuv, format="yuv420p")
            vf.pts = count
            vf.time_base = Fraction(1, fps)
            for packet in stream.encode(vf):
                container.mux(packet)
            count += 1
        if count == 0:
            raise ValueError(f"{path}: no frames to encode")
        for packet in stream.encode(None):
            container.mux(packet)
    return count


def write_png(image: npt.NDArray[np.uint8], path: Path, longest: int | None = None) -> None:
    """Write an RGB image as PNG, optionally resized so its longest side is `longest` pixels."""
    import cv2

    img = image
    if longest is not None:
        h, w = img.shape[:2]
        k = longest / max(h, w)
        size = (max(1, round(w * k)), max(1, round(h * k)))
        interp = cv2.INTER_AREA if k < 1 else cv2.INTER_CUBIC
        img = np.asarray(cv2.resize(img, size, interpolation=interp), dtype=np.uint8)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(path), cv2.cvtColor(img, cv2.COLOR_RGB2BGR)):
        raise OSError(f"could not write {path}")
