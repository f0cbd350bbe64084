"""Continuity candidates for the annotate timeline: time order and next/previous (no Qt)."""

from __future__ import annotations

from app.gui.annotate._candidates import candidates, step_candidate
from storage.media.continuity import Scan, Window


def _w(start: float, end: float, score: float, reason: str) -> Window:
    return Window(start, end, score, reason, frame=int(start * 10), peak_s=start, kind="jump")


def _scan(*windows: Window) -> Scan:
    return Scan("1-test", 100, 10.0, tuple(windows), (), 0.1)


def at_10fps(t: float) -> int:
    return int(t * 10 + 1e-9)


def test_windows_come_in_time_order_with_their_rank_by_score() -> None:
    # a scan lists windows best first; the timeline walks them in time order
    scan = _scan(_w(6.0, 6.5, 9.0, "late jump"), _w(1.0, 1.4, 7.5, "early jump"),
                 _w(3.2, 3.3, 5.0, "tone change"))  # fmt: skip
    got = candidates(scan, at_10fps)
    assert [c.window.reason for c in got] == ["early jump", "tone change", "late jump"]
    assert [(c.start_frame, c.end_frame) for c in got] == [(10, 14), (32, 33), (60, 65)]
    assert [c.number for c in got] == [1, 2, 3] and [c.rank for c in got] == [2, 3, 1]
    assert got[0].status(3).startswith("candidate 1/3: early jump (1.00–1.40 s, score 7.5")
    assert "Suggested" in got[2].tooltip(3) and "rank 1" in got[2].tooltip(3)


def test_equal_starts_put_the_stronger_window_first() -> None:
    got = candidates(_scan(_w(2.0, 2.2, 3.0, "weak"), _w(2.0, 2.5, 8.0, "strong")), at_10fps)
    assert [c.window.reason for c in got] == ["strong", "weak"]


def test_no_scan_gives_no_candidates() -> None:
    assert candidates(None, at_10fps) == [] and candidates(_scan(), at_10fps) == []


def test_next_and_previous_from_the_playhead() -> None:
    starts = [10, 32, 60]
    # next: the first start strictly after the playhead
    assert step_candidate(starts, 0, 1) == 0
    assert step_candidate(starts, 10, 1) == 1  # standing on a start moves on
    assert step_candidate(starts, 12, 1) == 1  # inside the first window
    assert step_candidate(starts, 59, 1) == 2
    assert step_candidate(starts, 60, 1) == 0  # past the last: round to the first
    # previous: the last start strictly before the playhead
    assert step_candidate(starts, 99, -1) == 2
    assert step_candidate(starts, 60, -1) == 1
    assert step_candidate(starts, 40, -1) == 1  # inside the second: back to its start
    assert step_candidate(starts, 10, -1) == 2  # before the first: round to the last
    assert step_candidate(starts, 0, -1) == 2
    assert step_candidate([], 5, 1) is None and step_candidate([], 5, -1) is None
    assert step_candidate([7], 7, 1) == 0 and step_candidate([7], 7, -1) == 0
