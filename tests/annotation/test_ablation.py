"""Rubric ablation runner (Table 18): spec case 22 and hand-computed examples."""

from __future__ import annotations

import pytest

from annotation import PHYSICS_VARIANTS, TASK_VARIANTS, GateRecord, ablation_table
from annotation._ablation import physics_scores, task_scores

ALL_PASS = {"T1": "pass", "T2": "pass", "T3": "pass"}


def test_spec_case_22_no_t1_auto_passes() -> None:
    rec = GateRecord("v", "A", ({"T1": "fail", "T2": "pass", "T3": "fail"},))
    got = task_scores(rec)
    assert got is not None
    assert got["Full rubric"] == 0 and got["No T1"] == 2
    assert got["No hierarchy (independent)"] == 1  # only T2 passed


def test_spec_cases_20_21_independent_counts() -> None:
    task = GateRecord("v", "A", ({"T1": "fail", "T2": "pass", "T3": "pass"},))
    assert task_scores(task) == {
        "Full rubric": 0,
        "No T1": 3,
        "No T2": 0,
        "No T3": 0,
        "No hierarchy (independent)": 2,
    }
    phys = GateRecord(
        "v", "A", ({**ALL_PASS, "P1": "pass", "P2": "fail", "P3": "pass", "P4": "pass"},)
    )
    got = physics_scores(phys)
    assert got is not None
    assert got["Full rubric"] == 1 and got["No hierarchy (independent)"] == 3 and got["No P2"] == 4


def _records() -> list[GateRecord]:
    v1_a = GateRecord(
        "v1",
        "A",
        (
            {"T1": "fail", "T2": "pass", "T3": "fail"},  # t = 0: its window is unattempted
            {**ALL_PASS, "P1": "pass", "P2": "fail", "P3": "pass", "P4": "pass"},
        ),
    )
    v1_b = GateRecord(
        "v1",
        "B",
        (
            {"T1": "pass", "T2": "fail", "T3": "pass", "P1": "na"},  # N/A stays N/A
            {**ALL_PASS, "P1": "fail", "P2": "pass", "P3": "pass", "P4": "pass"},
        ),
    )
    v2_b = GateRecord(
        "v2",
        "B",
        (
            {
                "T1": "pass",
                "T2": "pass",
                "T3": "fail",
                "P1": "pass",
                "P2": "pass",
                "P3": "pass",
                "P4": "fail",
            },
        ),
    )
    incomplete = GateRecord(
        "v1",
        "C",
        ({"T1": "fail"}, {**ALL_PASS, "P1": "fail"}),  # early-exit recording: not usable
    )
    unresolved = GateRecord("v2", "C", ({"T1": "pass", "T2": "pass", "T3": "unresolved"},))
    return [v1_a, v1_b, v2_b, incomplete, unresolved]


def test_hand_example_table() -> None:
    table = ablation_table(
        _records(),
        holistic_task={"v1": [2.0, 3.0], "v2": 2.0},
        holistic_physics={"v1": [3.0, None], "v2": [4.0]},
    )
    # Task, per rater then averaged: A = (1, 0, 1, 1, .5), B = (.25, .25, .25, .75, 0).
    want_task = {
        "Full rubric": 0.625,
        "No T1": 0.125,
        "No T2": 0.625,
        "No T3": 0.875,
        "No hierarchy (independent)": 0.25,
    }
    # Physics: A = (2, 2, 1, 2, 2, 0), B = (2, 1, 2, 2, 1.5, .5).
    want_phys = {
        "Full rubric": 2.0,
        "No P1": 1.5,
        "No P2": 1.5,
        "No P3": 2.0,
        "No P4": 1.75,
        "No hierarchy (independent)": 0.25,
    }
    for axis, want in (("task", want_task), ("physics", want_phys)):
        for variant, mae in want.items():
            row = table.get(axis, variant)
            assert row.mae == pytest.approx(mae), (axis, variant)
            assert row.delta_mae == pytest.approx(mae - want["Full rubric"])
            assert (row.n_records, row.n_raters) == (3, 2)  # rater C's records are left out
    assert [r.variant for r in table.rows] == [*TASK_VARIANTS, *PHYSICS_VARIANTS]
    md = table.markdown().splitlines()
    assert md[0] == "| Axis | Variant | MAE | ΔMAE |"
    assert md[2] == "| Task | Full rubric | 0.625 | 0 |"
    assert md[3] == "| Task | No T1 | 0.125 | -0.500 |"
    assert set(table.to_rows()[0]) == {
        "axis",
        "variant",
        "mae",
        "delta_mae",
        "n_records",
        "n_raters",
    }


def test_videos_without_holistic_rating_are_skipped() -> None:
    table = ablation_table(_records(), holistic_task={}, holistic_physics={"v2": 4.0})
    assert table.get("task", "Full rubric").n_records == 0
    assert table.get("physics", "Full rubric").n_records == 1
    assert table.get("physics", "No P4").mae == 0.0
