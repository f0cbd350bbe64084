"""Leaderboard (Table 2 layout, Agg = mean of S) and coverage (Table 10 layout)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from annotation import (
    CaseBootstrap,
    Evaluator,
    Panel,
    consensus_evaluator,
    coverage_table,
    final_from_axes,
    geometric_final,
    leaderboard,
)
from tests.annotation.test_agreement_helpers import random_panel

NAN = math.nan


def _two_video_panel(t: list[float], p: list[float]) -> Panel:
    """One model, two videos rated once each (0–100)."""
    return Panel(
        ("v1", "v2"),
        np.array(["c1", "c2"]),
        np.array(["Gen", "Gen"]),
        np.array(["generated", "generated"]),
        np.array(t)[:, None],
        np.array(p)[:, None],
    )


def test_case_18_agg_is_mean_of_s() -> None:
    panel = _two_video_panel([100.0, 0.0], [100.0, NAN])
    board = leaderboard(panel, [], n_boot=0)
    assert board.cell("Gen", "Human", "T").estimate == 50
    assert board.cell("Gen", "Human", "P").estimate == 100  # V2 has no Physics
    assert board.cell("Gen", "Human", "Agg").estimate == 50
    assert geometric_final(50, 100) == pytest.approx(70.71, abs=5e-3)  # what G(means) would say


def test_case_19_agg_with_crossed_axes() -> None:
    panel = _two_video_panel([100.0, 25.0], [25.0, 100.0])
    ev = Evaluator(
        "Judge", np.array([100.0, 25.0]), np.array([25.0, 100.0]), np.array([50.0, 50.0])
    )
    board = leaderboard(panel, [ev], n_boot=0)
    for src in ("Human", "Judge"):
        assert board.cell("Gen", src, "T").estimate == 62.5
        assert board.cell("Gen", src, "P").estimate == 62.5
        assert board.cell("Gen", src, "Agg").estimate == pytest.approx(50.0)


def test_layout_order_and_human_success_max() -> None:
    panel, ev = random_panel(0)
    board = leaderboard(panel, [ev], n_boot=200, seed=1)
    assert board.models[:2] == ("human-success", "human-failure")
    assert board.models[2:] == ("Grok", "Seedance", "Kling", "Wan", "MiniMax", "Cosmos")
    assert board.evaluators == ("Human", "Judge")
    top = board.cell("human-success", "Human", "Agg")
    assert (top.estimate, top.ci_low, top.ci_high) == (100.0, 100.0, 100.0)
    rated = leaderboard(panel, [ev], n_boot=0, human_success="rated")
    assert rated.cell("human-success", "Human", "Agg").estimate < 100
    wide = board.wide()
    assert list(wide[0]) == [
        "model",
        "Human T",
        "Human P",
        "Human Agg",
        "Judge T",
        "Judge P",
        "Judge Agg",
    ]
    md = board.markdown(with_ci=True)
    assert md.splitlines()[0] == "| Gen. | Human T/P | Human Agg | Judge T/P | Judge Agg |"
    assert "| human-success | 100.0 [100.0,100.0]/100.0 [100.0,100.0] |" in md
    long = board.to_rows()
    assert len(long) == len(board.models) * 2 * 3
    assert set(long[0]) == {"model", "evaluator", "metric", "estimate", "ci_low", "ci_high", "n"}


def test_evaluator_aggregates_cover_the_videos_it_scored() -> None:
    panel, ev = random_panel(1)
    board = leaderboard(panel, [ev], n_boot=0)
    sel = panel.models == "Wan"
    assert board.cell("Wan", "Judge", "P").estimate == pytest.approx(np.nanmean(ev.physics[sel]))
    assert board.cell("Wan", "Judge", "P").n == int(np.isfinite(ev.physics[sel]).sum())
    human = consensus_evaluator(panel, human_success="max")
    assert board.cell("Wan", "Human", "Agg").estimate == pytest.approx(np.nanmean(human.final[sel]))


def test_intervals_are_case_bootstrap_percentiles() -> None:
    panel, ev = random_panel(2)
    board = leaderboard(panel, [ev], n_boot=150, seed=9)
    boot = CaseBootstrap.draw(panel.case_ids, 150, 9)
    reps = []
    for b in range(150):
        idx = boot.expand(b)
        idx = idx[panel.models[idx] == "Kling"]
        reps.append(np.nanmean(ev.final[idx]))
    cell = board.cell("Kling", "Judge", "Agg")
    assert (cell.ci_low, cell.ci_high) == pytest.approx(
        tuple(np.percentile(reps, [2.5, 97.5])), abs=1e-9
    )
    assert cell.ci_low <= cell.estimate <= cell.ci_high


def test_coverage_table_layout() -> None:
    t = np.array([100.0, 0.0, 50.0, 50.0, NAN])
    p = np.array([100.0, NAN, NAN, 75.0, 80.0])
    ev = Evaluator("Judge", t, p, final_from_axes(t, p))
    groups = ["A", "A", "A", "B", "B"]
    cov = coverage_table(ev, groups, window_coverage=[1.0, 0.0, 0.0, 0.5, NAN])
    a, b, overall = cov.rows
    assert (a.group, a.n_videos) == ("A", 3)
    assert (a.task, a.physics, a.unattempted, a.final) == pytest.approx(
        (100, 100 / 3, 100 / 3, 200 / 3)
    )
    assert a.window_coverage == pytest.approx(100 / 3)
    assert (b.task, b.physics, b.unattempted, b.final) == (50, 100, 0, 50)
    assert b.window_coverage == 50
    assert overall.group == "Overall" and overall.final == 60
    flagged = coverage_table(ev, groups, attempted=[True, True, True, True, False])
    assert flagged.rows[0].unattempted == 0 and flagged.rows[1].unattempted == 50
    assert math.isnan(flagged.rows[0].window_coverage)
    md = cov.markdown()
    assert md.splitlines()[0].startswith("| Group | Task | Physics | Unattempted (S = 0) | Final")
    assert "| B | 50.0 | 100.0 | 0.0 | 50.0 | 50.0 |" in md
    assert coverage_table(ev, groups, order=["B", "A"]).rows[0].group == "B"
