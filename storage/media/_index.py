"""VideoIndex: the frame table of one video file, stored so a video is demuxed only once."""

from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

Int64Array = npt.NDArray[np.int64]

# `index_at` treats a time within this many seconds after a frame's start as that frame, so a
# time computed from `time_of` (or rounded on its way through a UI) never lands one frame early.
_TIME_EPSILON_S = 1e-9

_INDEX_VERSION = 1
# How `pts` and `keyframes` are written in JSON: differences between neighbours (constant for
# constant frame rate, so they compress to almost nothing), int64 little-endian, zlib, base64.
_ARRAY_ENCODING = "delta-int64le-zlib-base64"


@dataclass(frozen=True, eq=False)
class VideoIndex:
    """Every frame of one video stream, in presentation order, with its timestamp.

    Built by `index_video` from the container alone (no full decode). A frame is addressed by its
    index ``i`` in presentation order; ``pts[i]`` is its presentation timestamp in ``time_base``
    units and is what readers use to find the frame exactly.

    Attributes:
        frame_count: Number of frames.
        width: Coded frame width in pixels, before rotation.
        height: Coded frame height in pixels, before rotation.
        rotation: Degrees to rotate the decoded picture counter-clockwise for display: 0, 90, 180
            or 270. Same convention as FFmpeg's display matrix (what ffprobe prints as
            ``rotation``) and as ``numpy.rot90``.
        fps: Average frame rate, ``frame_count / duration_s``; for display only, frames are
            addressed by timestamp.
        duration_s: Source seconds from the start of the first frame to the end of the last.
        codec: FFmpeg codec name, e.g. ``"h264"`` or ``"av1"``.
        time_base: Seconds per ``pts`` unit.
        pts: Presentation timestamp of every frame, sorted ascending, in ``time_base`` units.
        keyframes: Indices (presentation order) of the frames a decoder can start from.
        version: Format version of this record.
    """

    frame_count: int
    width: int
    height: int
    rotation: int
    fps: float
    duration_s: float
    codec: str
    time_base: Fraction
    pts: Int64Array
    keyframes: Int64Array
    version: int = _INDEX_VERSION

    def __post_init__(self) -> None:
        pts = _frozen_int64(self.pts)
        keyframes = _frozen_int64(self.keyframes)
        if pts.ndim != 1 or len(pts) != self.frame_count or self.frame_count < 1:
            raise ValueError(f"pts must hold frame_count={self.frame_count} (>= 1) timestamps")
        if np.any(np.diff(pts) <= 0):
            raise ValueError("pts must be strictly increasing")
        if keyframes.ndim != 1 or np.any(keyframes < 0) or np.any(keyframes >= self.frame_count):
            raise ValueError("keyframes must be frame indices")
        if self.rotation not in (0, 90, 180, 270):
            raise ValueError(f"rotation must be 0, 90, 180 or 270, not {self.rotation}")
        # Frozen dataclass: assignment in __post_init__ has to go through object.__setattr__.
        object.__setattr__(self, "pts", pts)
        object.__setattr__(self, "keyframes", _frozen_int64(np.unique(keyframes)))

    @cached_property
    def _times(self) -> npt.NDArray[np.float64]:
        """Start of every frame in seconds relative to the first; what time_of/index_at use."""
        times: npt.NDArray[np.float64] = (self.pts - self.pts[0]).astype(np.float64)
        times *= float(self.time_base)
        times.flags.writeable = False
        return times

    @property
    def display_size(self) -> tuple[int, int]:
        """(width, height) of frames as shown, i.e. after `rotation`."""
        if self.rotation in (90, 270):
            return self.height, self.width
        return self.width, self.height

    def time_of(self, i: int) -> float:
        """Source seconds at which frame `i` starts, relative to the first frame.

        Raises:
            IndexError: `i` is not a frame index.
        """
        return float(self._times[self._check(i)])

    def index_at(self, t: float) -> int:
        """The frame shown at source time `t`: the last frame starting at or before `t`.

        Times before the first frame give 0, times after the last give the last frame.
        """
        i = int(np.searchsorted(self._times, t + _TIME_EPSILON_S, side="right")) - 1
        return min(max(i, 0), self.frame_count - 1)

    def keyframe_before(self, i: int) -> int:
        """The last keyframe at or before frame `i`, where decoding must start to reach `i`.

        Returns 0 when no keyframe precedes `i` (decode from the start of the stream).
        """
        k = int(np.searchsorted(self.keyframes, self._check(i), side="right")) - 1
        return int(self.keyframes[k]) if k >= 0 else 0

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable dict that `from_json` turns back into an equal index."""
        return {
            "version": self.version,
            "frame_count": self.frame_count,
            "width": self.width,
            "height": self.height,
            "rotation": self.rotation,
            "fps": self.fps,
            "duration_s": self.duration_s,
            "codec": self.codec,
            "time_base": f"{self.time_base.numerator}/{self.time_base.denominator}",
            "array_encoding": _ARRAY_ENCODING,
            "pts": _encode_int64(self.pts),
            "keyframes": _encode_int64(self.keyframes),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> VideoIndex:
        """Rebuild an index written by `to_json`.

        Raises:
            ValueError: `d` is not a version-1 index (missing keys, wrong types, bad arrays).
        """
        if d.get("version") != _INDEX_VERSION or d.get("array_encoding") != _ARRAY_ENCODING:
            raise ValueError(f"not a version {_INDEX_VERSION} video index")
        try:
            return cls(
                frame_count=int(d["frame_count"]),
                width=int(d["width"]),
                height=int(d["height"]),
                rotation=int(d["rotation"]),
                fps=float(d["fps"]),
                duration_s=float(d["duration_s"]),
                codec=str(d["codec"]),
                time_base=Fraction(str(d["time_base"])),
                pts=_decode_int64(str(d["pts"])),
                keyframes=_decode_int64(str(d["keyframes"])),
            )
        except (KeyError, TypeError, ZeroDivisionError, zlib.error) as exc:
            raise ValueError(f"malformed video index: {exc!r}") from exc

    def __eq__(self, other: object) -> bool:
        # The JSON form covers every field, arrays included.
        if not isinstance(other, VideoIndex):
            return NotImplemented
        return self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]  # equal indexes compare by value, like a dict

    def _check(self, i: int) -> int:
        if not 0 <= i < self.frame_count:
            raise IndexError(f"frame {i} out of range 0..{self.frame_count - 1}")
        return i


def _frozen_int64(values: npt.ArrayLike) -> Int64Array:
    arr = np.array(values, dtype=np.int64)  # a private copy, so the caller cannot change it
    arr.flags.writeable = False
    return arr


def _encode_int64(values: Int64Array) -> str:
    deltas = np.diff(values, prepend=np.int64(0)).astype("<i8")
    return base64.b64encode(zlib.compress(deltas.tobytes())).decode("ascii")


def _decode_int64(text: str) -> Int64Array:
    raw = zlib.decompress(base64.b64decode(text, validate=True))
    if len(raw) % 8:
        raise ValueError("array length is not a multiple of 8 bytes")
    return np.cumsum(np.frombuffer(raw, dtype="<i8")).astype(np.int64)
