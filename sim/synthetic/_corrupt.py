"""Controlled corruptions of a clean clip, with the edited interval as ground truth
(Ego2Act §8.2, the paper's negative controls):

- ``teleport``: delete 1.5 s of frames: the picture jumps at one instant;
- ``swap``: reverse the order of two adjacent 1.5 s segments: three jumps, one backwards;
- ``ghost``: blend the frame from 3 s earlier at 50 % opacity for 2 s: objects look doubled;
- ``none``: the unedited clip, re-encoded the same way (the control).

Each edit is centred on the clip's most active 3 s, found by frame-difference energy (which
may pick camera motion rather than hand motion, as in the paper). The interval is in the
*output's* source time: for a teleport, the instant of the cut (start = end); for a swap, the
3 s whose order changed; for a ghost, the 2 s blended; for ``none``, empty. The output is
H.264 at the input's frame rate (rounded to a whole number of frames per second).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from annotation import UserError
from sim.synthetic._encode import encode_mp4

Kind = Literal["teleport", "swap", "ghost", "none"]
CORRUPTION_KINDS: tuple[Kind, ...] = ("teleport", "swap", "ghost", "none")
KINDS = CORRUPTION_KINDS
ACTIVE_S = 3.0  # the span the edit is centred on
CUT_S = 1.5  # teleport: seconds deleted; swap: each segment
GHOST_S, GHOST_LAG_S, GHOST_ALPHA = 2.0, 3.0, 0.5

Rgb = npt.NDArray[np.uint8]


class CorruptionError(UserError, ValueError):
    """A clip too short for the edit asked, or an unknown kind."""


@dataclass(frozen=True)
class Corruption:
    """What was done: ``start_s``/``end_s`` bound the edit in the output (see the module
    docstring); ``source_*`` is the stretch of the input it came from."""

    kind: str
    source: str
    output: str
    fps: float
    frames_in: int
    frames_out: int
    active_start_s: float
    start_s: float
    end_s: float
    source_start_s: float
    source_end_s: float

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2) + "\n"


def read_rgb(path: Path) -> tuple[list[Rgb], float]:
    """Every frame of ``path`` (RGB, presentation order) and its average frame rate."""
    from storage.media import MediaError, open_video  # here: sim.synthetic imports no storage

    container, stream = open_video(path)  # a missing or broken file: MediaError, named
    with container:
        frames = [(f.pts or 0, np.asarray(f.to_ndarray(format="rgb24"), dtype=np.uint8))
                  for f in container.decode(stream)]  # fmt: skip
        rate = stream.average_rate or stream.guessed_rate
    if not frames:
        raise MediaError(path, "no frames")
    frames.sort(key=lambda f: f[0])
    fps = float(rate) if rate else 24.0
    return [img for _pts, img in frames], fps


def most_active(frames: list[Rgb], fps: float, span_s: float = ACTIVE_S) -> int:
    """The first frame of the ``span_s`` window with the most frame-difference energy."""
    import cv2

    small = [cv2.resize(f, (160, max(2, round(f.shape[0] * 160 / f.shape[1]))),
                        interpolation=cv2.INTER_AREA).astype(np.float32)
             for f in frames]  # fmt: skip
    energy = np.array([0.0] + [float(np.abs(b - a).mean()) for a, b in itertools.pairwise(small)])
    span = max(1, round(span_s * fps))
    if span >= len(frames):
        return 0
    sums = np.convolve(energy, np.ones(span), mode="valid")  # sums[k] = energy[k : k + span]
    return int(np.argmax(sums))


def _interval(start: float, end: float, src_start: float, src_end: float) -> dict[str, float]:
    return {"start_s": start, "end_s": end, "source_start_s": src_start, "source_end_s": src_end}


def corrupt_frames(frames: list[Rgb], fps: float, kind: str) -> tuple[list[Rgb], dict[str, float]]:
    """The edited frames and the interval fields of :class:`Corruption` (seconds)."""
    n = len(frames)
    if kind not in KINDS:
        raise CorruptionError(f"unknown corruption {kind!r}: choose one of {', '.join(KINDS)}")
    need = {"teleport": ACTIVE_S, "swap": ACTIVE_S, "ghost": GHOST_LAG_S + GHOST_S, "none": 0.0}
    if n / fps < need[kind] + 0.5:
        raise CorruptionError(
            f"a {kind} needs a clip of at least {need[kind] + 0.5:g} s; this one is {n / fps:.2f} s"
        )
    active = most_active(frames, fps)
    centre = active + round(ACTIVE_S * fps / 2)
    cut = round(CUT_S * fps)
    out: dict[str, float] = {"active_start_s": active / fps}
    if kind == "none":
        return list(frames), out | _interval(0.0, 0.0, 0.0, 0.0)
    if kind == "teleport":
        a = min(max(centre - cut // 2, 1), n - cut - 1)
        edited = frames[:a] + frames[a + cut :]
        return edited, out | _interval(a / fps, a / fps, a / fps, (a + cut) / fps)
    if kind == "swap":
        a = min(max(centre - cut, 1), n - 2 * cut - 1)
        first, second = frames[a : a + cut], frames[a + cut : a + 2 * cut]
        edited = frames[:a] + second + first + frames[a + 2 * cut :]
        end = (a + 2 * cut) / fps
        return edited, out | _interval(a / fps, end, a / fps, end)
    lag, span = round(GHOST_LAG_S * fps), round(GHOST_S * fps)
    a = min(max(centre - span // 2, lag), n - span - 1)
    edited = list(frames)
    for t in range(a, a + span):
        mix = (1 - GHOST_ALPHA) * frames[t].astype(np.float32) + GHOST_ALPHA * frames[t - lag]
        edited[t] = np.clip(mix + 0.5, 0, 255).astype(np.uint8)
    return edited, out | _interval(a / fps, (a + span) / fps, (a - lag) / fps,
                                   (a - lag + span) / fps)  # fmt: skip


def corrupt_video(source: Path, kind: str, out: Path) -> Corruption:
    """Write ``source`` with the ``kind`` edit to ``out`` (MP4), and ``out``.json beside it
    holding the :class:`Corruption` (the ground truth); returns it."""
    frames, fps = read_rgb(source)
    edited, times = corrupt_frames(frames, fps, kind)
    return _write(source, kind, out, frames, edited, fps, times)


def _write(source: Path, kind: str, out: Path, frames: list[Rgb], edited: list[Rgb], fps: float,
           times: dict[str, float]) -> Corruption:  # fmt: skip
    rate = max(1, round(fps))
    h, w = edited[0].shape[:2]
    even = [f[: h - h % 2, : w - w % 2] for f in edited] if (h % 2 or w % 2) else edited
    written = encode_mp4(even, out, rate)
    record = Corruption(kind=kind, source=str(source), output=str(out), fps=float(rate),
                        frames_in=len(frames), frames_out=written,
                        **{k: round(v, 6) for k, v in times.items()})  # fmt: skip
    out.with_suffix(out.suffix + ".json").write_text(record.to_json(), "utf-8")
    return record


def corrupt_set(videos: list[Path], out_dir: Path) -> list[Corruption]:
    """Every kind of :data:`CORRUPTION_KINDS` of every video into ``out_dir`` (named
    ``<k>-<stem>.<kind>.mp4``); a video too short for a kind is skipped for that kind only."""
    out: list[Corruption] = []
    out_dir.mkdir(parents=True, exist_ok=True)
    for k, video in enumerate(videos):
        frames, fps = read_rgb(video)
        for kind in CORRUPTION_KINDS:
            try:
                edited, times = corrupt_frames(frames, fps, kind)
            except CorruptionError:
                continue
            target = out_dir / f"{k:03d}-{video.stem}.{kind}.mp4"
            out.append(_write(video, kind, target, frames, edited, fps, times))
    return out
