"""CSV and JSON export: documented columns, values, and blinding of the identity fields."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from annotation import Answer
from storage import CSV_COLUMNS, Project, collect, import_cases, to_csv, to_json


def test_export_rows_and_scores(tmp_path: Path, cases_dir: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        import_cases(p, cases_dir)
        a = p.annotations
        v = p.videos("stack_blocks")[0].id
        s1 = a.add_subgoal("stack_blocks", "r", source="red block", target="plate", action="place")
        for g, ans in zip(("T1", "T2", "T3"), (Answer.PASS, Answer.PASS, Answer.FAIL), strict=True):
            a.set_answer(v, "r", s1.id, g, ans)
        for g in ("P1", "P2"):
            a.set_answer(v, "r", s1.id, g, Answer.PASS)
        a.set_answer(v, "r", s1.id, "P3", Answer.FAIL)
        a.add_evidence(
            v, "r", start_frame=3, end_frame=7, subgoal_id=s1.id, gate="T3", note="beside"
        )
        rows = list(csv.DictReader(io.StringIO(to_csv(p))))
        assert tuple(rows[0].keys()) == CSV_COLUMNS
        (row,) = rows
        assert row["T3"] == "fail" and row["P4"] == "" and row["task_level"] == "2"
        assert row["physics_state"] == "2" and row["evidence"] == "T3@3-7 beside"
        assert float(row["video_T100"]) == 66.667 and float(row["video_P100"]) == 50.0
        data = json.loads(to_json(p))
        assert data["ratings"][0]["model"] == p.video(v).model
        blind = collect(p, include_identity=False)
        assert "model" not in blind[0] and "seed" not in blind[0]


def test_export_columns_are_documented() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "export-format.md").read_text()
    for col in CSV_COLUMNS:
        assert f"`{col}`" in doc, col
