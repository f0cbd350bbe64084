"""The paper's judge detection on the corrupted set: a corruption counts when its Physics score
is below its own re-encode's in the same batch; a pair missing a score is left out, counted."""

from __future__ import annotations

import math

from storage.media.continuity import JudgeScore, judge_detection


def _source(name: str, control: float | None, **kinds: float | None) -> list[JudgeScore]:
    return [JudgeScore(name, "none", control)] + [JudgeScore(name, k, p) for k, p in kinds.items()]


def test_below_its_own_control_is_a_detection_a_tie_is_not_and_missing_scores_are_counted() -> None:
    scores = [
        *_source("a.mp4", 100.0, teleport=50.0, swap=100.0, ghost=None),
        # b's teleport scores below a's control, but b's own control is lower still: a miss
        *_source("b.mp4", 40.0, teleport=60.0, swap=0.0, ghost=20.0),
        *_source("c.mp4", None, teleport=0.0, swap=0.0, ghost=0.0),  # no control score
    ]
    r = judge_detection(scores, replicates=200)
    assert r["sources"] == 3 and (r["controls"], r["controls_scored"]) == (3, 2)
    got = {k: (r[k]["rate"], r[k]["n"], r[k]["left_out"]) for k in ("teleport", "swap", "ghost")}
    assert got == {"teleport": (0.5, 2, 1), "swap": (0.5, 2, 1), "ghost": (1.0, 1, 2)}
    lo, hi = r["teleport"]["ci95"]
    assert 0.0 <= lo < 0.5 < hi <= 1.0  # resampling a and b (c adds no pair) moves the rate
    assert r["ghost"]["ci95"] == [1.0, 1.0]  # only b's ghost is scored, and it is detected


def test_no_scored_pair_has_no_rate_and_one_source_no_interval() -> None:
    r = judge_detection(_source("a.mp4", None, teleport=10.0, swap=None))
    assert r["teleport"] == {"rate": None, "ci95": None, "n": 0, "left_out": 1}
    assert r["ghost"] == {"rate": None, "ci95": None, "n": 0, "left_out": 0}
    one = judge_detection(_source("a.mp4", 90.0, teleport=10.0))
    assert one["teleport"] == {"rate": 1.0, "ci95": None, "n": 1, "left_out": 0}
    assert not any(isinstance(v, float) and math.isnan(v) for v in one["teleport"].values())


def test_the_interval_is_seeded_and_resamples_whole_sources() -> None:
    scores = [s for k in range(6)
              for s in _source(f"{k}.mp4", 100.0, teleport=50.0 if k % 2 else 100.0)]  # fmt: skip
    a, b = judge_detection(scores, seed=3), judge_detection(scores, seed=3)
    assert a == b and a["teleport"]["rate"] == 0.5
    lo, hi = a["teleport"]["ci95"]
    assert lo < 0.5 < hi
