"""The continuity scan on a fixed generated set: clean demo clips (seed 0) in the paper's four
versions. With the thresholds as shipped (data, not tuned per clip), every teleport, swap and
ghost has a window over its edit, no re-encoded control has one, and the windows say why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.synthetic import Corruption, corrupt_set, write_demo_cases
from storage.media import MediaError
from storage.media.continuity import (
    Trial,
    detection,
    evaluate,
    find_windows,
    load_thresholds,
    scan_signals,
    scan_video,
)


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Corruption, object]]:
    root = tmp_path_factory.mktemp("continuity")
    cases = write_demo_cases(root / "cases", seed=0)
    # the defect-free generated clip of each case, and one human recording
    clean = [next((c / "videos").glob("*gen_c*.mp4")) for c in cases]
    clean.append(cases[0] / "videos" / "human_success_1.mp4")
    return [(c, scan_signals(Path(c.output))) for c in corrupt_set(clean, root / "set")]


def _trials(scanned: list, thresholds=None) -> list[Trial]:  # type: ignore[no-untyped-def]
    th = thresholds or load_thresholds()
    return [Trial(c.source, c.kind, c.start_s, c.end_s, tuple(find_windows(s, th)[0]))
            for c, s in scanned]  # fmt: skip


def test_every_corruption_is_found_and_no_control_false_alarms(scanned: list) -> None:  # type: ignore[type-arg]
    trials = _trials(scanned)
    assert sorted({t.kind for t in trials}) == ["ghost", "none", "swap", "teleport"]
    missed = [(t.source, t.kind) for t in trials if t.kind != "none" and detection(t) is None]
    assert missed == []
    alarms = [(t.source, t.windows[0]) for t in trials if t.kind == "none" and t.windows]
    assert alarms == []
    report = evaluate(trials, replicates=200)
    for kind in ("teleport", "swap", "ghost"):
        assert report[kind]["rate"] == 1.0 and report[kind]["n"] == 4
        assert report[kind]["localisation_s"]["p90"] <= 0.15  # within a few frames of the edit
    assert report["false_alarm"] == {"rate": 0.0, "ci95": [0.0, 0.0], "n": 4}


def test_a_window_says_where_and_why(scanned: list) -> None:  # type: ignore[type-arg]
    c, s = next((c, s) for c, s in scanned if c.kind == "swap")
    windows, scores = find_windows(s, load_thresholds())
    assert len(scores) == s.frame_count and scores[0] == 0.0
    joins = [c.start_s, (c.start_s + c.end_s) / 2, c.end_s]
    assert len(windows) >= 2  # a swap has three joins; each is a jump
    for w in windows:
        assert min(abs(w.peak_s - j) for j in joins) < 0.1
        assert w.start_s < w.peak_s <= w.end_s and w.score >= load_thresholds().detect
        assert "content changes with no motion path" in w.reason and "×" in w.reason


def test_the_thresholds_are_the_data_file(scanned: list) -> None:  # type: ignore[type-arg]
    strict = load_thresholds().model_copy(update={"detect": 1e6})
    assert all(not t.windows for t in _trials(scanned, strict))
    text = (Path(__file__).parents[2] / "resources" / "continuity" / "thresholds.json").read_text()
    assert json.loads(text)["detect"] == load_thresholds().detect


def test_scan_video_reports_the_clip_and_refuses_a_broken_file(
    tmp_path: Path, scanned: list
) -> None:  # type: ignore[type-arg]
    c, _s = next((c, s) for c, s in scanned if c.kind == "teleport")
    scan = scan_video(Path(c.output))
    assert scan.frame_count == c.frames_out and scan.windows
    assert scan.windows[0].start_s <= c.start_s <= scan.windows[0].end_s
    assert scan.version.startswith("1-") and len(scan.frame_scores) == scan.frame_count
    (tmp_path / "x.mp4").write_text("not a video")
    with pytest.raises(MediaError, match=r"x\.mp4"):
        scan_video(tmp_path / "x.mp4")
