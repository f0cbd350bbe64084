"""Exports carry each video's continuity scan: the candidate windows and the scan version,
or an explicit "not scanned"."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

import storage._continuity_scans as kind_module
from annotation import Answer
from storage import CSV_COLUMNS, Project, continuity_export, import_cases, to_csv, to_json
from storage.media.continuity import Scan, Window
from tests.casefactory import make_case

WINDOW = Window(start_s=0.4, end_s=0.6, score=5.25, reason="content changes with no motion path",
                frame=6, peak_s=0.5, kind="jump", signals={"diff": 4.0})  # fmt: skip


def _rate(p: Project, video_id: str, case_id: str) -> None:
    s1 = p.annotations.add_subgoal(case_id, "r", source="red block", target="plate", action="place")
    p.annotations.set_answer(video_id, "r", s1.id, "T1", Answer.PASS)


def test_exports_include_windows_and_say_not_scanned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = tmp_path / "cases"
    make_case(cases, "stack_blocks", n_videos=2)
    monkeypatch.setattr(kind_module, "INLINE_SCAN_MAX_S", 0.0)  # queued, not scanned
    with Project.create(tmp_path / "p") as p:
        import_cases(p, cases)
        scanned, unscanned = p.videos("stack_blocks")
        version = p.continuity.current_version
        # a scan with one window, stored as a scan job would store it
        p.continuity.save(scanned.media, Scan(version=version, frame_count=12, duration_s=0.917,
                                              windows=(WINDOW,), frame_scores=(0.0,) * 12,
                                              seconds=0.01))  # fmt: skip
        for v in (scanned, unscanned):
            _rate(p, v.id, "stack_blocks")

        data = json.loads(to_json(p))
        assert data["format"] == "rollout-workbench/export@1" and len(data["ratings"]) == 2
        by_video = {e["video_id"]: e for e in data["continuity"]}
        assert set(by_video) == {scanned.id, unscanned.id}
        got = by_video[scanned.id]
        assert got["status"] == "scanned" and got["version"] == version
        assert got["case_id"] == "stack_blocks" and got["duration_s"] == 0.917
        assert got["windows"] == [WINDOW.to_dict()]
        assert by_video[unscanned.id] == {"video_id": unscanned.id, "case_id": "stack_blocks",
                                          "status": "not scanned", "version": None,
                                          "duration_s": None, "windows": None}  # fmt: skip
        assert continuity_export(p) == data["continuity"]

        rows = {r["video_id"]: r for r in csv.DictReader(io.StringIO(to_csv(p)))}
        assert tuple(next(iter(rows.values())).keys()) == CSV_COLUMNS
        assert rows[scanned.id]["video_continuity"] == "0.4-0.6 5.25 jump"
        assert rows[scanned.id]["video_continuity_version"] == version
        assert rows[unscanned.id]["video_continuity"] == "not scanned"
        assert rows[unscanned.id]["video_continuity_version"] == ""

        # scanned, nothing found: "none", which is not "not scanned"
        empty = Scan(version=version, frame_count=12, duration_s=0.917, windows=(),
                     frame_scores=(0.0,) * 12, seconds=0.01)  # fmt: skip
        p.continuity.save(unscanned.media, empty)
        rows = {r["video_id"]: r for r in csv.DictReader(io.StringIO(to_csv(p)))}
        assert rows[unscanned.id]["video_continuity"] == "none"
        entry = {e["video_id"]: e for e in continuity_export(p)}[unscanned.id]
        assert entry["status"] == "scanned" and entry["windows"] == []


def test_a_stale_scan_exports_as_not_scanned(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    make_case(cases, "stack_blocks", n_videos=1)
    with Project.create(tmp_path / "p") as p:
        import_cases(p, cases)  # a 1 s clip: scanned at import
        assert len(p.videos()) == 1
        assert {e["status"] for e in continuity_export(p)} == {"scanned"}
        p.db.execute("UPDATE continuity_scans SET version = '0-old'")
        p.db.conn.commit()
        assert [e["status"] for e in continuity_export(p)] == ["not scanned"]


def test_continuity_columns_are_documented() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "export-format.md").read_text()
    for key in ("video_continuity", "video_continuity_version", '"continuity"', "not scanned"):
        assert key in doc, key
