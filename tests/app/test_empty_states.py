"""Every Results view and the score panel say what is missing and the next step, on screen,
instead of an empty table, a blank chart or a bare "undefined"."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from annotation import Answer
from app.gui._main_window import MainWindow
from storage import Project
from tests.app.rated import rate

CTRL = Qt.KeyboardModifier.ControlModifier


def press(
    qtbot: QtBot, key: Qt.Key, mod: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier
) -> None:
    target = QApplication.focusWidget() or QApplication.activeWindow()
    assert target is not None
    qtbot.keyClick(target, key, mod)


def click_tab(qtbot: QtBot, w: MainWindow, title: str) -> None:
    bar = w.results.tabs.tabBar()
    index = next(i for i in range(bar.count()) if bar.tabText(i) == title)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())
    assert w.results.tabs.currentIndex() == index


def shown_note(w: MainWindow, key: str) -> str:
    """The sentence a view shows in its place, checked to be on screen."""
    if key == "scatter":
        item = w.results.plot_note
        assert item.isVisible() and w.results.plot.isVisible()
        return str(item.toPlainText())
    label = w.results.views[key].note
    assert label.isVisible(), f"{key}: the sentence is not on screen"
    return label.text()


def open_results(qtbot: QtBot, w: MainWindow) -> None:
    press(qtbot, Qt.Key.Key_3, CTRL)
    assert w.docks["Results"].isVisible()
    qtbot.waitUntil(lambda: w.results.compute_button.isEnabled(), timeout=60_000)


def test_a_fresh_project_results_say_what_is_missing_and_what_to_do(
    qtbot: QtBot, project_dir: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    w = make_window(project_dir)
    open_results(qtbot, w)
    notes = {}
    for title, key in (("Leaderboard", "board"), ("Agreement", "agreement"),
                       ("Judge vs human", "scatter"), ("Disagreements", "queue")):  # fmt: skip
        click_tab(qtbot, w, title)
        notes[key] = shown_note(w, key)
    for key, text in notes.items():
        assert "none of the 3 videos" in text and "has a complete human rating" in text, key
        # the next step, with the window's own menu names and keys
        assert "View → Annotate Workspace (Ctrl+1)" in text, key
        assert "Annotate → Add Subgoal… (Ctrl+Shift+N)" in text, key
    assert notes["board"].startswith("No leaderboard yet")
    assert notes["queue"].startswith("No disagreements to rank yet")


def test_one_rater_and_no_judge_each_view_says_which_input_is_missing(
    qtbot: QtBot, project_dir: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    with Project.open(project_dir) as p:
        for k, v in enumerate(p.videos()):
            rate(p, "alice", v.id, ("T3", None, "P2")[k % 3])
    w = make_window(project_dir)
    open_results(qtbot, w)
    panel = w.results
    assert panel.results is not None
    click_tab(qtbot, w, "Leaderboard")
    assert panel.note("board") is None and panel.board.isVisible()  # generators are ranked

    click_tab(qtbot, w, "Judge vs human")
    scatter = shown_note(w, "scatter")
    assert scatter.startswith("No judge runs yet")
    assert "Judge → Judge Videos… (Ctrl+J)" in scatter
    assert "Judge → Start / Stop Local Worker" in scatter

    click_tab(qtbot, w, "Disagreements")
    queue = shown_note(w, "queue")
    assert "no judge run yet" in queue and "no video has two ratings" in queue
    assert "Judge → Judge Videos… (Ctrl+J)" in queue and "WB_RATER" in queue

    # the agreement table's reasons are readable in full: wrapped, not cut, with a tooltip
    click_tab(qtbot, w, "Agreement")
    table = panel.agreement
    assert table.isVisible() and panel.note("agreement") is None
    why = table.columnCount() - 1
    reasons = [(r, table.item(r, why)) for r in range(table.rowCount())]
    reasons = [(r, it) for r, it in reasons if it is not None and it.text()]
    assert any(it.text() == "no video has two or more ratings on this axis" for _, it in reasons)
    metrics = table.fontMetrics()
    for r, item in reasons:
        assert item.toolTip() == item.text()
        width = table.columnWidth(why) - 8  # the cell's padding
        need = metrics.boundingRect(
            QRect(0, 0, width, 10_000), int(Qt.TextFlag.TextWordWrap), item.text()
        )
        assert table.rowHeight(r) >= need.height(), (item.text(), table.rowHeight(r))
        assert need.width() <= width


def test_the_score_says_why_it_is_undefined(
    qtbot: QtBot, project_dir: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    w = make_window(project_dir)
    st = w.state
    assert st.project is not None and st.video is not None
    st.project.annotations.add_subgoal(st.video.case_id, st.rater, source="cup", action="lift")
    st.data_changed.emit()
    scores = w.annotate.scores

    def shown() -> tuple[dict[str, str], str]:
        assert scores.reason.isVisible() or not scores.reason.text()
        return {k: v.text() for k, v in scores.values.items()}, scores.reason.text()

    values, reason = shown()
    assert "undefined" not in values.values()
    assert values["S"] == values["T"] == values["P"] == "—"
    assert reason == "S, T, P — (no subgoal complete yet: gate T1 of S1 not answered)"
    assert scores.values["S"].toolTip() == "no subgoal complete yet: gate T1 of S1 not answered"

    lst = w.annotate.subgoals.list  # pick S1 with the mouse, then answer with keys
    rect = lst.visualItemRect(lst.item(0))
    qtbot.mouseClick(lst.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    for key in (Qt.Key.Key_Y, Qt.Key.Key_Y):  # T1, T2 yes: T3 is next
        press(qtbot, key)
    assert shown()[1].endswith("gate T3 of S1 not answered)")
    for key in (Qt.Key.Key_Y, Qt.Key.Key_U):  # T3 yes; P1 unresolved withholds Physics
        press(qtbot, key)
    values, reason = shown()
    assert values["T"] == "100.0" and values["P"] == "—" and values["S"] == "—"
    assert "P — (Physics answered unresolved in S1)" in reason
    assert "S — (needs both T and P (P undefined))" in reason
    assert st.project.annotations.answers(st.video.id, st.rater)[st.plan()[0].id]["P1"] is (
        Answer.UNRESOLVED
    )
