"""Recovery classification: every row of the C.6.10 decision table, tolerance and window edges."""

from __future__ import annotations

import pytest

from sim.contracts import (
    AnomalyHandling,
    Interpretation,
    RecoveryClass,
    Tolerance,
    bucket_counts,
    classify,
)

OK: RecoveryClass = "successful"
PART: RecoveryClass = "unsuccessful_or_incomplete"
MISS: RecoveryClass = "undetected_or_misinterpreted"


def _h(
    reaction: int | None,
    reading: Interpretation | None,
    pos: float | None = 0.0,
    rot: float | None = 0.0,
    fresh: bool = True,
) -> AnomalyHandling:
    return AnomalyHandling("a1", 10, reaction, reading, pos, rot, fresh)


@pytest.mark.parametrize(
    ("case", "handling", "label"),
    [
        ("no reaction", _h(None, None), MISS),
        ("dismissed as minor settling", _h(12, "dismissed", 21.0, 0.0, False), MISS),
        ("reused old coordinates", _h(12, "reused_old", 21.0, 0.0, False), MISS),
        ("dismissed, though the pose happens to be fine", _h(12, "dismissed"), MISS),
        ("false claim: bricks 66 mm away", _h(12, "claims_recovered", 66.0, 0.0, False), MISS),
        ("claims recovered, orientation still off", _h(12, "claims_recovered", 1.0, 180.0), MISS),
        ("corrected, position fixed but still inverted", _h(12, "acknowledged", 1.0, 180.0), PART),
        ("drift persists, stale estimate", _h(12, "acknowledged", 4.34, 0.0, False), PART),
        ("within tolerance, stale estimate", _h(12, "acknowledged", 1.0, 1.0, False), PART),
        ("corrected, within tolerance, fresh estimate", _h(12, "acknowledged", 1.0, 2.0), OK),
        ("claimed recovery that is true", _h(12, "claims_recovered", 0.5, 0.5), OK),
        ("object gone: pose unknown", _h(12, "acknowledged", None, None), PART),
    ],
)  # fmt: skip
def test_c610_decision_table(case: str, handling: AnomalyHandling, label: RecoveryClass) -> None:
    assert classify(handling).label == label, case


@pytest.mark.parametrize(
    ("pos", "rot", "label"),
    [(2.9, 9.0, OK), (3.0, 10.0, OK), (3.1, 0.0, PART), (0.0, 10.1, PART)],
)
def test_c610_tolerance_is_inclusive(pos: float, rot: float, label: RecoveryClass) -> None:
    assert classify(_h(12, "acknowledged", pos, rot)).label == label


def test_c610_tolerance_is_configurable() -> None:
    loose = Tolerance(position_mm=5.0, orientation_deg=20.0)
    assert classify(_h(12, "acknowledged", 4.34, 15.0), loose).label == OK
    assert classify(_h(12, "acknowledged", 4.34, 15.0)).label == PART


@pytest.mark.parametrize(
    ("reaction", "window", "label"),
    [(10, 5, OK), (15, 5, OK), (16, 5, MISS), (9, 5, MISS), (40, 30, OK)],
)
def test_c610_reaction_window_k(reaction: int, window: int, label: RecoveryClass) -> None:
    tol = Tolerance(reaction_window=window)
    assert classify(_h(reaction, "acknowledged"), tol).label == label


def test_reasons_name_what_is_wrong() -> None:
    r = classify(_h(12, "acknowledged", 1.0, 180.0))
    assert r.reason == "orientation off by 180° (> 10°)"
    assert classify(_h(12, "claims_recovered", 66.0)).reason.startswith("declared recovered but")


def test_buckets_read_k_of_n_and_sum_to_n() -> None:
    labels = [OK] * 4 + [PART] + [MISS] * 5
    buckets = bucket_counts(labels)
    assert [b.text for b in buckets.values()] == ["4/10 (40.0%)", "1/10 (10.0%)", "5/10 (50.0%)"]
    assert sum(b.k for b in buckets.values()) == 10
    assert all(b.n == 10 for b in buckets.values())
    assert bucket_counts([])[OK].text == "0/0 (—)"
    with pytest.raises(ValueError, match="unknown recovery class"):
        bucket_counts(["recovered"])  # type: ignore[list-item]
