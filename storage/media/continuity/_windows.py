"""From per-frame signals to candidate windows: spike scores, their combination, the reasons.

A discontinuity between frames ``t − 1`` and ``t`` (a cut, a jump, an overlay switching on)
makes several signals spike at exactly one frame, while real motion, however fast, raises them
over several frames in a row. So a signal's *spike score* at ``t`` is the geometric mean of

- its ratio to the median of the surrounding ``baseline_s`` seconds (frames ``t − 1 … t + 1``
  left out), and
- its ratio to the larger of its two neighbours,

each denominator at least the signal's floor (a still clip's tiny noise is not a baseline). A
frame is a candidate when the geometric mean of the ``combine`` signals' spike scores reaches
``detect``; its window spans the transition (frame ``t − 1`` to ``t``) padded by ``pad_s``,
and candidates closer than ``merge_s`` are one window, scored by its highest frame.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from storage.media.continuity._model import Thresholds, Window
from storage.media.continuity._signals import Signals

Floats = npt.NDArray[np.float64]

_NAMES = {
    "diff": "frame difference",
    "hist": "tone histogram",
    "residual": "change the motion does not explain",
    "consistency": "motion that does not map back",
    "flow": "motion",
    "ssim": "structure",
}


def _fps(times: Floats) -> float:
    if len(times) < 2 or times[-1] <= 0:
        return 24.0
    return (len(times) - 1) / float(times[-1])


def spike_scores(signal: Floats, fps: float, baseline_s: float, floor: float) -> Floats:
    n = len(signal)
    out = np.zeros(n)
    half = max(3, round(baseline_s * fps / 2))
    for t in range(1, n):
        lo, hi = max(1, t - half), min(n, t + half + 1)
        around = np.concatenate([signal[lo : max(lo, t - 1)], signal[min(hi, t + 2) : hi]])
        base = float(np.median(around)) if len(around) else float(np.median(signal[1:]))
        neighbour = max(signal[t - 1] if t > 1 else 0.0, signal[t + 1] if t + 1 < n else 0.0)
        ratio = signal[t] / max(base, floor)
        isolation = signal[t] / max(neighbour, floor)
        out[t] = float(np.sqrt(max(ratio, 0.0) * max(isolation, 0.0)))
    return out


def _reason(scores: dict[str, float], strong: float) -> tuple[str, str]:
    """(kind, words) from the spike scores at a peak."""
    named = sorted(((v, k) for k, v in scores.items() if v >= strong), reverse=True)
    jump = max(scores.get("consistency", 0.0), scores.get("residual", 0.0)) >= strong
    kind = "jump" if jump else "tone"
    lead = ("content changes with no motion path to it" if jump else
            "the whole picture changes at once, as by a cut or an overlay")  # fmt: skip
    parts = ", ".join(f"{_NAMES.get(k, k)} {v:.1f}×" for v, k in named[:4])
    return kind, f"{lead} ({parts} the surrounding second)" if parts else lead


def find_windows(signals: Signals, th: Thresholds) -> tuple[list[Window], Floats]:
    """The candidate windows (best first, at most ``max_windows``) and every frame's score."""
    times = signals.times
    fps = _fps(times)
    spikes = {name: spike_scores(v, fps, th.baseline_s, th.floors.get(name, 1e-6))
              for name, v in signals.values.items()}  # fmt: skip
    logs = [np.log(np.maximum(spikes[name], 1e-9)) for name in th.combine]
    combined = np.exp(np.mean(logs, axis=0)) if logs else np.zeros(len(times))
    combined[0] = 0.0
    peaks = [t for t in range(1, len(times)) if combined[t] >= th.detect]
    groups: list[list[int]] = []
    for t in peaks:
        if groups and times[t] - times[groups[-1][-1]] <= th.merge_s:
            groups[-1].append(t)
        else:
            groups.append([t])
    windows = []
    for group in groups:
        best = max(group, key=lambda t: combined[t])
        at = {name: round(float(s[best]), 2) for name, s in spikes.items()}
        kind, words = _reason(at, th.strong)
        windows.append(Window(
            start_s=round(max(0.0, float(times[group[0] - 1]) - th.pad_s), 3),
            end_s=round(float(times[group[-1]]) + th.pad_s, 3),
            score=round(float(combined[best]), 2), reason=words, frame=best,
            peak_s=round(float(times[best]), 3), kind=kind, signals=at,
        ))  # fmt: skip
    windows.sort(key=lambda w: -w.score)
    return windows[: th.max_windows], combined


def difference_windows(signals: Signals, ratio: float, pad_s: float = 0.1) -> list[Window]:
    """The floor to beat: a plain frame-difference spike detector (a frame whose difference
    energy is ``ratio`` times the clip's median), one window per spike frame, best first."""
    diff = signals.values["diff"]
    times = signals.times
    med = max(float(np.median(diff[1:])) if len(diff) > 1 else 0.0, 1e-6)
    out = [
        Window(start_s=round(max(0.0, float(times[t - 1]) - pad_s), 3),
               end_s=round(float(times[t]) + pad_s, 3), score=round(float(diff[t] / med), 2),
               reason="frame difference spike", frame=t, peak_s=round(float(times[t]), 3),
               kind="difference", signals={"diff": round(float(diff[t] / med), 2)})
        for t in range(1, len(diff)) if diff[t] / med >= ratio
    ]  # fmt: skip
    return sorted(out, key=lambda w: -w.score)
