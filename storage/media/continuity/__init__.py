"""Continuity scan: the physics violations that unfold *between* frames (a 1.5 s jump, two
swapped segments, a ghosted overlay), found on every frame for a fraction of a VLM call.

:func:`scan_video` decodes a clip once at a small size, computes per-frame signals
(:mod:`._signals`) and turns their one-frame spikes into candidate windows (:mod:`._windows`)
with a score and a reason. The thresholds are data (``resources/continuity/thresholds.json``),
never tuned per clip. Windows are suggestions for a person or a judge to look at, not verdicts.
"""

from __future__ import annotations

import time
from pathlib import Path

from storage.media.continuity._evaluate import (
    CORRUPTIONS,
    JudgeScore,
    Trial,
    boundaries,
    detection,
    evaluate,
    judge_detection,
)
from storage.media.continuity._model import (
    SCAN_VERSION,
    Scan,
    Thresholds,
    Window,
    load_thresholds,
    scan_version,
)
from storage.media.continuity._signals import (
    SIGNALS,
    Signals,
    compute_signals,
    gray_frames,
    scan_signals,
)
from storage.media.continuity._windows import difference_windows, find_windows, spike_scores


def scan_video(path: Path, thresholds: Thresholds | None = None) -> Scan:
    """Scan every frame of ``path``; raises :class:`storage.media.MediaError` for a file that
    cannot be decoded."""
    th = thresholds or load_thresholds()
    start = time.perf_counter()
    signals = scan_signals(Path(path))
    windows, combined = find_windows(signals, th)
    duration = float(signals.times[-1]) if signals.frame_count else 0.0
    return Scan(
        version=scan_version(th),
        frame_count=signals.frame_count,
        duration_s=round(duration, 6),
        windows=tuple(windows),
        frame_scores=tuple(round(float(x), 3) for x in combined),
        seconds=round(time.perf_counter() - start, 3),
    )


__all__ = [
    "CORRUPTIONS",
    "SCAN_VERSION",
    "SIGNALS",
    "JudgeScore",
    "Scan",
    "Signals",
    "Thresholds",
    "Trial",
    "Window",
    "boundaries",
    "compute_signals",
    "detection",
    "difference_windows",
    "evaluate",
    "find_windows",
    "gray_frames",
    "judge_detection",
    "load_thresholds",
    "scan_signals",
    "scan_version",
    "scan_video",
    "spike_scores",
]
