"""What a continuity scan finds: candidate discontinuity windows, and the thresholds (data, in
``resources/continuity/thresholds.json``) that turned signals into them."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

#: bumped when the signals or how windows are made from them change (old scans are re-run)
SCAN_VERSION = 1


class Thresholds(BaseModel):
    """How spikes become windows (see the JSON file's ``notes``)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    version: int
    baseline_s: float = Field(gt=0)
    floors: dict[str, float]
    combine: tuple[str, ...]
    detect: float = Field(gt=0)
    strong: float = Field(gt=0)  # a signal's spike score worth naming in the reason
    pad_s: float = Field(ge=0)
    merge_s: float = Field(ge=0)
    max_windows: int = Field(ge=1)

    @property
    def digest(self) -> str:
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def load_thresholds() -> Thresholds:
    text = resources.files("resources").joinpath("continuity", "thresholds.json").read_text("utf-8")
    return Thresholds.model_validate_json(text)


@dataclass(frozen=True)
class Window:
    """A candidate discontinuity: from ``start_s`` to ``end_s`` (source seconds) around the
    frame where it peaks, how strongly (``score``; candidates reach the thresholds' ``detect``),
    and why, in words; ``signals`` holds each signal's spike score there."""

    start_s: float
    end_s: float
    score: float
    reason: str
    frame: int
    peak_s: float
    kind: str  # "jump": content with no motion path; "tone": the picture changes at once
    signals: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Window:
        return cls(**{k: d[k] for k in ("start_s", "end_s", "score", "reason", "frame",
                                         "peak_s", "kind")},
                   signals=dict(d.get("signals", {})))  # fmt: skip


@dataclass(frozen=True)
class Scan:
    """One video's scan: its windows, best first, and the combined score of every frame."""

    version: str  # f"{SCAN_VERSION}-{thresholds digest}": a scan made otherwise is stale
    frame_count: int
    duration_s: float
    windows: tuple[Window, ...]
    frame_scores: tuple[float, ...]
    seconds: float  # how long the scan took

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "frame_count": self.frame_count,
                "duration_s": self.duration_s, "seconds": self.seconds,
                "windows": [w.to_dict() for w in self.windows],
                "frame_scores": list(self.frame_scores)}  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Scan:
        return cls(version=str(d["version"]), frame_count=int(d["frame_count"]),
                   duration_s=float(d["duration_s"]), seconds=float(d.get("seconds", 0.0)),
                   windows=tuple(Window.from_dict(w) for w in d["windows"]),
                   frame_scores=tuple(float(x) for x in d.get("frame_scores", ())))  # fmt: skip


def scan_version(thresholds: Thresholds) -> str:
    return f"{SCAN_VERSION}-{thresholds.digest}"
