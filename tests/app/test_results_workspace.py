"""The results workspace on a small rated and judged project: tables, scatter, disagreement
queue, opening a video from the plot, exports, and staying responsive while it computes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

import app.gui.results._workspace as results_module
from app.gui._main_window import MainWindow
from tests.app.rated import rate_and_judge


@pytest.fixture
def rated_project(project_dir: Path) -> Path:
    return rate_and_judge(project_dir, {"alice": ("T3", None, "P2"), "bob": ("T2", "P4", None)})


def test_results_workspace(
    qtbot: QtBot,
    rated_project: Path,
    make_window: Callable[[Path], MainWindow],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = make_window(rated_project)
    # responsiveness: the 1,000 resamples run on a worker thread, never on the GUI thread
    threads: list[threading.Thread] = []
    real = results_module.compute

    def spy(*args: object) -> results_module.AgreementReport:
        threads.append(threading.current_thread())
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(results_module, "compute", spy)
    w.set_workspace("results")
    panel = w.results
    qtbot.waitUntil(lambda: panel.results is not None, timeout=60_000)
    assert w.docks["Results"].isVisible() and not w.docks["Rubric"].isVisible()
    assert threads and threads[0] is not threading.main_thread()
    board = panel.board
    header = [board.horizontalHeaderItem(c).text() for c in range(board.columnCount())]
    assert header[:4] == ["Model", "Human T", "Human P", "Human Agg"]
    assert any("loop · gated" in h for h in header)
    assert board.rowCount() == 2  # model_0 and model_1
    metrics = {panel.agreement.item(r, 3).text() for r in range(panel.agreement.rowCount())}
    assert {"icc_avg", "alpha", "ccc", "mae", "r"} <= metrics
    table = panel.agreement
    assert table.horizontalHeaderItem(6).text() == "Why empty"  # type: ignore[union-attr]
    for r in range(table.rowCount()):  # every "—" says why; every figure has no note
        empty = table.item(r, 4).text() == "—"  # type: ignore[union-attr]
        assert bool(table.item(r, 6).text()) == empty  # type: ignore[union-attr]
    assert panel.queue.rowCount() == 3
    n_points = len(panel.points.data)
    assert n_points >= 1
    # a click on a point opens the video in the player and shows both verdicts
    target = str(panel.points.data[0]["data"])
    panel._clicked(None, [panel.points.points()[0]])
    assert w.state.video is not None and w.state.video.id == target
    assert "Human consensus" in panel.verdicts.text() and "loop · gated" in panel.verdicts.text()
    # exports
    from app.gui.results._workspace import table_to_csv

    table_to_csv(panel.agreement, tmp_path / "agreement.csv")
    assert (tmp_path / "agreement.csv").read_text().startswith("Group,Evaluator,Axis,Metric")
    panel.tabs.setCurrentIndex(2)
    panel.save_figure(tmp_path / "scatter.png")
    panel.save_figure(tmp_path / "scatter.svg")
    assert (tmp_path / "scatter.png").stat().st_size > 1000
    assert "<svg" in (tmp_path / "scatter.svg").read_text()
    w.grab().save(str(tmp_path / "results.png"))


def test_results_on_a_project_without_ratings_says_so(
    qtbot: QtBot, project_dir: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    w = make_window(project_dir)
    w.set_workspace("results")
    panel = w.results
    qtbot.waitUntil(lambda: panel.compute_button.isEnabled(), timeout=60_000)
    qtbot.waitUntil(lambda: "no ratings" in panel.status.text(), timeout=60_000)
    assert panel.status.text().startswith("could not compute: no ratings: none of the 3 videos")
    assert panel.results is None and panel.agreement.rowCount() == 0
