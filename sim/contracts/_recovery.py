"""Anomaly recovery classification: the evaluator-side decision table of spec C.6.10.

Every anomaly (injected, or natural such as a post-release slip) ends in exactly one of three
buckets, decided from evaluator facts plus a label of the agent's reaction, never from the
agent's own verdict. A *false* claim of recovery is "misinterpreted", not "unsuccessful" (W2W
Table 5). Counts are shown as "k/n (x%)" and always sum to n — W2W's own table does not (11/10).

The tolerance (3 mm / 10°, inclusive as in the LEGO check) and the reaction window K (steps
after the injection in which a reaction counts) are parameters, not findings of the papers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

RecoveryClass = Literal["successful", "unsuccessful_or_incomplete", "undetected_or_misinterpreted"]
RECOVERY_CLASSES: tuple[RecoveryClass, ...] = (
    "successful",
    "unsuccessful_or_incomplete",
    "undetected_or_misinterpreted",
)
#: How the agent read the anomaly once it reacted: brushed it off ("minor settling"), kept
#: planning with the old coordinates, acknowledged it and corrected, or declared it recovered.
Interpretation = Literal["dismissed", "reused_old", "acknowledged", "claims_recovered"]


@dataclass(frozen=True)
class Tolerance:
    position_mm: float = 3.0
    orientation_deg: float = 10.0
    reaction_window: int = 10  # K: steps after the injection within which a reaction counts


@dataclass(frozen=True)
class AnomalyHandling:
    """What the evaluator knows about one anomaly after the agent's handling.

    ``reaction_step`` is the first step with an inspection of or corrective action on an
    affected object, or an explicit mention (None: never). Errors are the largest remaining
    pose errors over the affected objects (None: unknown, e.g. the object is gone).
    ``fresh_estimate`` says whether later steps plan with the updated pose.
    """

    anomaly_id: str
    injected_step: int
    reaction_step: int | None
    interpretation: Interpretation | None
    position_error_mm: float | None
    orientation_error_deg: float | None
    fresh_estimate: bool


@dataclass(frozen=True)
class Recovery:
    anomaly_id: str
    label: RecoveryClass
    reason: str


def classify(h: AnomalyHandling, tol: Tolerance | None = None) -> Recovery:
    """One row of the decision table; the reason names the row that decided."""
    tol = tol or Tolerance()

    def out(label: RecoveryClass, reason: str) -> Recovery:
        return Recovery(h.anomaly_id, label, reason)

    if h.reaction_step is None or not (
        h.injected_step <= h.reaction_step <= h.injected_step + tol.reaction_window
    ):
        return out(
            "undetected_or_misinterpreted", f"no reaction within {tol.reaction_window} steps"
        )
    if h.interpretation in ("dismissed", "reused_old") or h.interpretation is None:
        said = {"dismissed": "dismissed the anomaly", "reused_old": "reused old coordinates"}
        return out("undetected_or_misinterpreted", said.get(h.interpretation or "", "no reading"))
    problems = _problems(h, tol)
    if not problems:
        return out("successful", "within tolerance and later steps use the fresh estimate")
    if h.interpretation == "claims_recovered":
        return out("undetected_or_misinterpreted", "declared recovered but " + "; ".join(problems))
    return out("unsuccessful_or_incomplete", "; ".join(problems))


def _problems(h: AnomalyHandling, tol: Tolerance) -> list[str]:
    found = []
    if h.position_error_mm is None:
        found.append("position unknown")
    elif h.position_error_mm > tol.position_mm:
        found.append(f"position off by {h.position_error_mm:g} mm (> {tol.position_mm:g} mm)")
    if h.orientation_error_deg is None:
        found.append("orientation unknown")
    elif h.orientation_error_deg > tol.orientation_deg:
        found.append(
            f"orientation off by {h.orientation_error_deg:g}° (> {tol.orientation_deg:g}°)"
        )
    if not h.fresh_estimate:
        found.append("later steps use a stale estimate")
    return found


@dataclass(frozen=True)
class Bucket:
    k: int
    n: int

    @property
    def share(self) -> float | None:
        return self.k / self.n if self.n else None

    @property
    def text(self) -> str:
        """ "k/n (x%)" with one decimal, "0/0 (—)" when there is nothing to count."""
        share = self.share
        return f"{self.k}/{self.n} (—)" if share is None else f"{self.k}/{self.n} ({share:.1%})"


def bucket_counts(labels: Iterable[RecoveryClass]) -> dict[RecoveryClass, Bucket]:
    """Every class with its count over all anomalies; by construction the counts sum to n."""
    seen = list(labels)
    unknown = sorted(set(seen) - set(RECOVERY_CLASSES))
    if unknown:
        raise ValueError(f"unknown recovery class(es): {', '.join(unknown)}")
    return {c: Bucket(seen.count(c), len(seen)) for c in RECOVERY_CLASSES}
