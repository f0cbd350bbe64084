"""How well scans find controlled corruptions (Ego2Act §8.2's protocol, applied to the scan).

Each :class:`Trial` is one corrupted (or control) clip: its source, the edit's kind and interval
(output seconds), and the windows a detector returned. A corruption is **detected** when a window
overlaps its interval; a control (kind ``none``) **false-alarms** when it has any window. The
**localisation error** of a detection is the distance from the overlapping window's peak to the
nearest edit boundary (a teleport's cut; a swap's three joins; a ghost's onset or end).
Intervals are case-level bootstrap resamples of the *source* clips (each with all its versions),
as the paper's CIs resample cases.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from storage.continuity._model import Window

CORRUPTIONS = ("teleport", "swap", "ghost")
REPLICATES = 1000


@dataclass(frozen=True)
class Trial:
    source: str
    kind: str  # teleport | swap | ghost | none
    start_s: float
    end_s: float
    windows: tuple[Window, ...]


def boundaries(t: Trial) -> list[float]:
    if t.kind == "swap":
        return [t.start_s, (t.start_s + t.end_s) / 2, t.end_s]
    if t.kind == "ghost":
        return [t.start_s, t.end_s]
    return [t.start_s]


def detection(t: Trial) -> Window | None:
    """The best window overlapping the edit (None: missed). Controls have no interval."""
    hits = [w for w in t.windows if w.start_s <= t.end_s and w.end_s >= t.start_s]
    return max(hits, key=lambda w: w.score) if hits else None


def _rates(trials: Sequence[Trial]) -> dict[str, float]:
    out: dict[str, float] = {}
    for kind in CORRUPTIONS:
        ks = [t for t in trials if t.kind == kind]
        out[kind] = float(np.mean([detection(t) is not None for t in ks])) if ks else float("nan")
    controls = [t for t in trials if t.kind == "none"]
    out["false_alarm"] = (float(np.mean([bool(t.windows) for t in controls])) if controls
                          else float("nan"))  # fmt: skip
    return out


def evaluate(
    trials: Sequence[Trial], *, replicates: int = REPLICATES, seed: int = 0
) -> dict[str, Any]:
    """Per kind: detection rate with its 95 % case-bootstrap interval and localisation error;
    for the controls, the false-alarm rate and its interval."""
    sources = sorted({t.source for t in trials})
    by_source = {s: [t for t in trials if t.source == s] for s in sources}
    point = _rates(trials)
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(replicates if len(sources) > 1 else 0):
        picked = rng.choice(len(sources), len(sources), replace=True)
        draws.append(_rates([t for k in picked for t in by_source[sources[k]]]))
    report: dict[str, Any] = {"sources": len(sources), "trials": len(trials)}
    for key in (*CORRUPTIONS, "false_alarm"):
        values = np.array([d[key] for d in draws if not np.isnan(d[key])])
        ci = ([round(float(np.percentile(values, q)), 3) for q in (2.5, 97.5)] if len(values)
              else None)  # fmt: skip
        n = sum(1 for t in trials if t.kind == (key if key != "false_alarm" else "none"))
        entry: dict[str, Any] = {"rate": round(point[key], 3), "ci95": ci, "n": n}
        if key != "false_alarm":
            errors = [min(abs(d.peak_s - b) for b in boundaries(t)) for t in trials
                      if t.kind == key and (d := detection(t)) is not None]  # fmt: skip
            entry["localisation_s"] = ({"median": round(float(np.median(errors)), 3),
                                        "p90": round(float(np.percentile(errors, 90)), 3)}
                                       if errors else None)  # fmt: skip
        report[key] = entry
    return report
