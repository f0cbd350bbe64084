"""Undo and redo from the Edit menu's shortcuts, with the menu text naming the change."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from annotation import Answer
from app.gui._main_window import MainWindow

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


def key(qtbot: QtBot, k: Qt.Key, mod: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    target = QApplication.focusWidget() or QApplication.activeWindow()
    assert target is not None
    qtbot.keyClick(target, k, mod)


def test_undo_redo_through_the_gui(
    qtbot: QtBot, project_dir: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    w = make_window(project_dir)
    st = w.state
    assert st.project is not None and st.video is not None
    sg = st.project.annotations.add_subgoal(st.video.case_id, st.rater, source="cup", action="lift")
    st.set_cursor(sg.id, 0)
    st.data_changed.emit()

    def t1() -> Answer | None:
        assert st.project is not None and st.video is not None
        return st.project.annotations.answers(st.video.id, st.rater).get(sg.id, {}).get("T1")

    key(qtbot, Qt.Key.Key_Y)
    assert t1() is Answer.PASS
    assert w.actions_by_id["edit.undo"].text() == "&Undo T1 pass for S1"
    assert w.annotate.gates.rows[0][2].text().find("yes") >= 0

    key(qtbot, Qt.Key.Key_Z, CTRL)
    assert t1() is None
    assert w.actions_by_id["edit.redo"].text() == "&Redo T1 pass for S1"
    assert w.annotate.gates.rows[0][2].text() == "—"

    key(qtbot, Qt.Key.Key_Z, CTRL | SHIFT)
    assert t1() is Answer.PASS

    # a second undo goes past the answer to the subgoal itself
    key(qtbot, Qt.Key.Key_Z, CTRL)
    key(qtbot, Qt.Key.Key_Z, CTRL)
    assert st.plan() == []
    assert w.annotate.subgoals.list.count() == 0
    key(qtbot, Qt.Key.Key_Y, CTRL)  # the other redo key
    assert len(st.plan()) == 1
