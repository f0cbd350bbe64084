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


class Mp4Writer:
    """Stream RGB uint8 frames (all the same even size) into an H.264 yuv420p MP4.

    Frames are encoded as they arrive, so a long episode never holds its video in memory.
    Use as a context manager; ``count`` is the number of frames written.
    """

    def __init__(self, path: Path, fps: int) -> None:
        import av

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fps = fps
        self.count = 0
        self._shape: tuple[int, ...] | None = None
        self._closed = False
        self._container = av.open(str(self.path), mode="w", format="mp4")
        self._stream = self._container.add_stream("libx264", rate=fps, options=dict(_X264_OPTIONS))
        self._stream.pix_fmt = "yuv420p"
        self._stream.codec_context.time_base = Fraction(1, fps)
        self._stream.codec_context.thread_count = 1

    def write(self, frame: npt.NDArray[np.uint8]) -> None:
        import av
        import cv2

        if frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
            raise ValueError(f"{self.path}: frame {self.count} is not RGB uint8 ({frame.shape})")
        if self._shape is None:
            self._shape = frame.shape
            self._stream.width, self._stream.height = frame.shape[1], frame.shape[0]
        elif frame.shape != self._shape:
            raise ValueError(
                f"{self.path}: frame {self.count} has shape {frame.shape}, not {self._shape}"
            )
        # OpenCV's I420 conversion is BT.601 limited range, like swscale's, and much faster.
        yuv = np.asarray(
            cv2.cvtColor(np.ascontiguousarray(frame), cv2.COLOR_RGB2YUV_I420), dtype=np.uint8
        )
        vf = av.VideoFrame.from_ndarray(yuv, format="yuv420p")
        vf.pts = self.count
        vf.time_base = Fraction(1, self.fps)
        for packet in self._stream.encode(vf):
            self._container.mux(packet)
        self.count += 1

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self.count == 0:
                raise ValueError(f"{self.path}: no frames to encode")
            for packet in self._stream.encode(None):
                self._container.mux(packet)
        finally:
            self._container.close()

    def __enter__(self) -> Mp4Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def encode_mp4(frames: Iterable[npt.NDArray[np.uint8]], path: Path, fps: int) -> int:
    """Encode RGB uint8 frames (all the same even size) to H.264 yuv420p; returns the count."""
    with Mp4Writer(path, fps) as writer:
        for frame in frames:
            writer.write(frame)
        return writer.count


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
