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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from storage.media.continuity._model import Window

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


def _case_bootstrap(
    items: Sequence[Any], rates: Callable[[Sequence[Any]], dict[str, float]], replicates: int,
    seed: int,
) -> tuple[list[str], dict[str, list[float] | None]]:  # fmt: skip
    """(the sources, each rate's 95 % interval): resample whole source clips (every version of
    one clip together), as the paper's case bootstrap resamples cases."""
    sources = sorted({x.source for x in items})
    by_source = {s: [x for x in items if x.source == s] for s in sources}
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(replicates if len(sources) > 1 else 0):
        picked = rng.choice(len(sources), len(sources), replace=True)
        draws.append(rates([x for k in picked for x in by_source[sources[k]]]))
    cis: dict[str, list[float] | None] = {}
    for key in rates(items):
        values = np.array([d[key] for d in draws if not np.isnan(d[key])])
        cis[key] = ([round(float(np.percentile(values, q)), 3) for q in (2.5, 97.5)]
                    if len(values) else None)  # fmt: skip
    return sources, cis


def evaluate(
    trials: Sequence[Trial], *, replicates: int = REPLICATES, seed: int = 0
) -> dict[str, Any]:
    """Per kind: detection rate with its 95 % case-bootstrap interval and localisation error;
    for the controls, the false-alarm rate and its interval."""
    point = _rates(trials)
    sources, cis = _case_bootstrap(trials, _rates, replicates, seed)
    report: dict[str, Any] = {"sources": len(sources), "trials": len(trials)}
    for key in (*CORRUPTIONS, "false_alarm"):
        ci = cis[key]
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


# ---- the judge on the same set (Ego2Act §8.2's judge detection) ----------------------------
@dataclass(frozen=True)
class JudgeScore:
    """One clip of the corrupted set as a judge batch scored it: ``p100`` is the run's Physics
    score (None: the run failed, was capped or gave no Physics score)."""

    source: str
    kind: str  # teleport | swap | ghost | none
    p100: float | None


def _judge_rates(scores: Sequence[JudgeScore]) -> dict[str, float]:
    control = {s.source: s.p100 for s in scores if s.kind == "none"}
    out: dict[str, float] = {}
    for kind in CORRUPTIONS:
        hits = [s.p100 < c for s in scores if s.kind == kind and s.p100 is not None
                and (c := control.get(s.source)) is not None]  # fmt: skip
        out[kind] = float(np.mean(hits)) if hits else float("nan")
    return out


def judge_detection(
    scores: Sequence[JudgeScore], *, replicates: int = REPLICATES, seed: int = 0
) -> dict[str, Any]:
    """Per kind, the paper's judge detection: a corrupted clip is detected when its Physics
    score is *below* that of its own source's unedited re-encode in the same batch (a tie is a
    miss). A pair where either clip has no score is left out of the rate and counted in
    ``left_out``. The 95 % interval resamples source clips, as :func:`evaluate` does. The paper
    defines no judge false alarm on controls, so for them only ``controls_scored`` is given."""
    point = _judge_rates(scores)
    sources, cis = _case_bootstrap(scores, _judge_rates, replicates, seed)
    control = {s.source: s.p100 for s in scores if s.kind == "none"}
    report: dict[str, Any] = {"sources": len(sources)}
    for kind in CORRUPTIONS:
        mine = [s for s in scores if s.kind == kind]
        scored = sum(1 for s in mine if s.p100 is not None and control.get(s.source) is not None)
        ci = cis[kind]
        rate = None if np.isnan(point[kind]) else round(point[kind], 3)
        report[kind] = {"rate": rate, "ci95": ci, "n": scored, "left_out": len(mine) - scored}
    controls = [s for s in scores if s.kind == "none"]
    report["controls"] = len(controls)
    report["controls_scored"] = sum(1 for s in controls if s.p100 is not None)
    return report
