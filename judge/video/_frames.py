"""Frame evidence: uniform and window sampling at source time, ROI crops, 512 px JPEGs.

Sampling rule (the paper leaves it open, spec §4.4): n frames over a span [a, b] are the frames
shown at the *mid-bin* times t_k = a + (k + 0.5)·(b − a)/n, k = 0..n−1, mapped to frames with
``VideoIndex.index_at`` (the frame on screen at that source time). Mid-bins never pick the very
first or last frame on their own, which are often static or black in generated clips, and they
give every frame the same share of the span; duplicate indices (n larger than the clip has
frames) are dropped, so fewer than n frames may come back.

Only the frames a batch needs are decoded, in ascending order through one reader, so runs of
nearby frames reuse the decoder's position instead of seeking. Decoded frames stay in a small
cache because the Task frames are a subset of the Physics frames under the mid-bin rule
(t = (k + .5)/8 equals (3k + 1.5)/24), and inspections revisit them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from judge.models import FrameImage, encode_jpeg
from storage.media import FrameReader, VideoIndex

Image = npt.NDArray[np.uint8]
Roi = tuple[float, float, float, float]

_MIN_ROI = 0.02  # a crop narrower than 2% of the frame is a slip, not a request


class _Reader(Protocol):
    def read(self, i: int) -> Image: ...

    def close(self) -> None: ...


ReaderFactory = Callable[[Path, VideoIndex], _Reader]


def mid_bin_times(start_s: float, end_s: float, n: int) -> list[float]:
    """The n mid-bin times over [start_s, end_s] (see the module docstring)."""
    span = max(0.0, end_s - start_s)
    return [start_s + (k + 0.5) * span / n for k in range(n)]


def sample_indices(index: VideoIndex, start_s: float, end_s: float, n: int) -> list[int]:
    """Frame indices for n mid-bin times over a span, de-duplicated, ascending."""
    return sorted({index.index_at(t) for t in mid_bin_times(start_s, end_s, n)})


def uniform_indices(index: VideoIndex, n: int) -> list[int]:
    """n frames spread uniformly over the whole video (mid-bin rule), de-duplicated."""
    return sample_indices(index, 0.0, index.duration_s, n)


@dataclass(frozen=True)
class Window:
    """An inspection window after validation: what was actually sampled, and why if changed."""

    start_s: float
    end_s: float
    roi: Roi | None
    n_frames: int
    notes: tuple[str, ...] = ()


def check_window(
    index: VideoIndex,
    start_s: float,
    end_s: float,
    roi: Roi | None,
    n_frames: int,
    *,
    max_frames: int = 24,
) -> Window:
    """Clamp a requested window to the video, the ROI to the frame, n to 1..max_frames.

    Every change is described in ``notes`` (recorded with the inspection and shown to the
    model) rather than refused: a slightly-off request still gets the nearest useful evidence.
    """
    notes: list[str] = []
    duration = index.duration_s
    a, b = float(start_s), float(end_s)
    if b < a:
        a, b = b, a
        notes.append(f"start and end were swapped ({start_s:.3f} > {end_s:.3f} s)")
    ca, cb = min(max(a, 0.0), duration), min(max(b, 0.0), duration)
    if (ca, cb) != (a, b):
        notes.append(f"window clamped to the video (0–{duration:.3f} s): {ca:.3f}–{cb:.3f} s")
    n = int(n_frames)
    if not 1 <= n <= max_frames:
        n = min(max(n, 1), max_frames)
        notes.append(f"n_frames {n_frames} clamped to {n} (allowed 1–{max_frames})")
    box = None
    if roi is not None:
        box = _clamp_roi(roi)
        if box is None:
            notes.append(f"region {roi} is empty or outside the frame; whole frame used")
        elif box != tuple(roi):
            notes.append(f"region clamped to the frame: {_fmt_roi(box)}")
    return Window(ca, cb, box, n, tuple(notes))


def _clamp_roi(roi: Roi) -> Roi | None:
    x, y, w, h = (float(v) for v in roi)
    x0, y0 = min(max(x, 0.0), 1.0), min(max(y, 0.0), 1.0)
    x1, y1 = min(max(x + w, 0.0), 1.0), min(max(y + h, 0.0), 1.0)
    if x1 - x0 < _MIN_ROI or y1 - y0 < _MIN_ROI:
        return None
    return (x0, y0, x1 - x0, y1 - y0)


def _fmt_roi(roi: Roi) -> str:
    return "x={:.3f} y={:.3f} w={:.3f} h={:.3f}".format(*roi)


class FrameSampler:
    """Decodes and encodes the frames one judge run sends, counting both.

    Attributes:
        frames_decoded: Frames actually decoded from the file (cache hits excluded).
        frames_encoded: Frame images made (each one sent under its own evidence id).
    """

    def __init__(
        self,
        path: Path,
        index: VideoIndex,
        *,
        max_side: int = 512,
        jpeg_quality: int = 90,
        reader_factory: ReaderFactory | None = None,
        cache_frames: int = 32,
    ) -> None:
        self.path = path
        self.index = index
        self._max_side = max_side
        self._quality = jpeg_quality
        self._factory: ReaderFactory = reader_factory or FrameReader
        self._reader: _Reader | None = None
        self._cache: OrderedDict[int, Image] = OrderedDict()
        self._cache_frames = cache_frames
        self.frames_decoded = 0
        self.frames_encoded = 0

    def uniform(self, n: int, prefix: str, origin: str) -> tuple[FrameImage, ...]:
        """n uniform frames over the whole video, with ids ``{prefix}01`` ... (e.g. T01)."""
        return self._frames(
            uniform_indices(self.index, n), None, origin, lambda k: f"{prefix}{k:02d}"
        )

    def window(self, w: Window, number: int) -> tuple[FrameImage, ...]:
        """The frames of a checked inspection window, with ids ``I{number}-01`` ..."""
        indices = sample_indices(self.index, w.start_s, w.end_s, w.n_frames)
        return self._frames(indices, w.roi, f"inspect:{number}", lambda k: f"I{number}-{k:02d}")

    def image(self, rgb: Image, evidence_id: str, origin: str) -> FrameImage:
        """A still (the initial image f₁) encoded like the frames; frame_index is -1."""
        jpeg = encode_jpeg(rgb, roi=None, max_side=self._max_side, quality=self._quality)
        return FrameImage(evidence_id, -1, 0.0, jpeg, None, origin)

    def prefetch(self, indices: Sequence[int]) -> None:
        """Decode every frame in ``indices`` in one forward pass (task and physics samples
        together), so later requests are cache hits instead of a second pass over the file."""
        wanted = sorted({i for i in indices if i not in self._cache})
        if not wanted:
            return
        if self._reader is None:
            self._reader = self._factory(self.path, self.index)
        read_many = getattr(self._reader, "read_many", None)
        if read_many is None:
            return
        self._cache_frames = max(self._cache_frames, len(wanted) + len(self._cache))
        for i, rgb in sorted(read_many(wanted).items()):
            self._cache[i] = rgb
            self.frames_decoded += 1

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        self._cache.clear()

    def _frames(
        self, indices: Sequence[int], roi: Roi | None, origin: str, name: Callable[[int], str]
    ) -> tuple[FrameImage, ...]:
        out = []
        for k, i in enumerate(indices, start=1):  # ascending: the reader decodes forward
            jpeg = encode_jpeg(
                self._rgb(i), roi=roi, max_side=self._max_side, quality=self._quality
            )
            self.frames_encoded += 1
            out.append(FrameImage(name(k), i, self.index.time_of(i), jpeg, roi, origin))
        return tuple(out)

    def _rgb(self, i: int) -> Image:
        if i in self._cache:
            self._cache.move_to_end(i)
            return self._cache[i]
        if self._reader is None:
            self._reader = self._factory(self.path, self.index)
        rgb = self._reader.read(i)
        self.frames_decoded += 1
        self._cache[i] = rgb
        if len(self._cache) > self._cache_frames:
            self._cache.popitem(last=False)
        return rgb
