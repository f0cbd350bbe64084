"""Score a video by keyboard only, restart the app, and find everything again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QLineEdit
from pytestqt.qtbot import QtBot

from annotation import Answer
from app.gui._main_window import MainWindow
from storage import Project

K = Qt.Key


def press(
    qtbot: QtBot, key: Qt.Key, mod: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier
) -> None:
    target = QApplication.focusWidget() or QApplication.activeWindow()
    assert target is not None
    qtbot.keyClick(target, key, mod)


def add_subgoal_by_keyboard(qtbot: QtBot, window: MainWindow, fields: list[str]) -> None:
    """Ctrl+Shift+N, type each field, Tab between them, Enter to accept."""

    def fill() -> None:
        dlg = QApplication.activeModalWidget()
        assert dlg is not None, "the subgoal dialog did not open"
        for text in fields:
            w = QApplication.focusWidget()
            assert isinstance(w, QLineEdit)
            qtbot.keyClicks(w, text)
            qtbot.keyClick(w, K.Key_Tab)
        qtbot.keyClick(QApplication.focusWidget() or dlg, K.Key_Return)

    QTimer.singleShot(50, fill)
    ctrl_shift = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    press(qtbot, K.Key_N, ctrl_shift)
    # Xvfb has no window manager to hand activation back after a dialog closes
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)


def score_texts(w: MainWindow) -> dict[str, str]:
    return {k: v.text() for k, v in w.annotate.scores.values.items()}


def test_keyboard_only_scoring_survives_restart(
    qtbot: QtBot, project_dir: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    w = make_window(project_dir)
    video = w.state.video
    assert video is not None
    # S1: red block -> blue plate. Mark frames 2..5 as evidence for T1, then answer the gates.
    add_subgoal_by_keyboard(qtbot, w, ["red block", "blue plate", "place on", "on the plate"])
    qtbot.waitUntil(lambda: len(w.state.plan()) == 1)
    for _ in range(2):
        press(qtbot, K.Key_Right)
    press(qtbot, K.Key_I)
    for _ in range(3):
        press(qtbot, K.Key_Right)
    press(qtbot, K.Key_O)
    assert w.state.range == (2, 5)
    press(qtbot, K.Key_M)
    # T1 T2 T3 yes, P1 P2 yes, P3 no  (the cursor moves to the next gate after each answer)
    for key in (K.Key_Y, K.Key_Y, K.Key_Y, K.Key_Y, K.Key_Y, K.Key_N):
        press(qtbot, key)
    # S2: wrong object touched -> T1 no, physics locked as unattempted
    add_subgoal_by_keyboard(qtbot, w, ["green cup", "box", "put in"])
    qtbot.waitUntil(lambda: len(w.state.plan()) == 2)
    press(qtbot, K.Key_N)
    # P1 of S2 is locked: pressing Y there must not record anything
    press(qtbot, K.Key_Down)
    press(qtbot, K.Key_Down)
    press(qtbot, K.Key_Down)
    press(qtbot, K.Key_Y)

    expected = {"S": "50.0", "T": "50.0", "P": "50.0", "C": "1/2"}
    assert score_texts(w) == expected
    assert w.annotate.scores.note.text() == "complete"
    assert w.annotate.evidence.count() == 1
    row = next(i for i in w.annotate.videos._video_items() if i.text(0) == video.id)
    qtbot.waitUntil(lambda: row.text(1) == "50.0")  # the list's S column follows (debounced)
    w.close()

    # a fresh window on the same folder finds every decision, mark and score
    w2 = make_window(project_dir)
    assert w2.state.video is not None and w2.state.video.id == video.id
    assert score_texts(w2) == expected
    assert w2.annotate.evidence.count() == 1
    assert "frames 2–5" in w2.annotate.evidence.item(0).text()
    with Project.open(project_dir) as p:
        plan = p.annotations.plan(video.case_id, "tester")
        answers = p.annotations.answers(video.id, "tester")
        assert [s.source for s in plan] == ["red block", "green cup"]
        assert plan[0].target == "blue plate" and plan[0].action == "place on"
        assert answers[plan[0].id] == {
            "T1": Answer.PASS,
            "T2": Answer.PASS,
            "T3": Answer.PASS,
            "P1": Answer.PASS,
            "P2": Answer.PASS,
            "P3": Answer.FAIL,
        }
        assert answers[plan[1].id] == {"T1": Answer.FAIL}
        (mark,) = p.annotations.evidence(video.id, "tester")
        assert (mark.start_frame, mark.end_frame, mark.gate) == (2, 5, "T1")


def test_clicking_evidence_seeks_player(
    qtbot: QtBot, project_dir: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    w = make_window(project_dir)
    st = w.state
    assert st.project is not None and st.video is not None
    st.project.annotations.add_evidence(st.video.id, st.rater, start_frame=7, end_frame=9)
    st.data_changed.emit()
    assert st.frame == 0
    item = w.annotate.evidence.item(0)
    rect = w.annotate.evidence.visualItemRect(item)
    qtbot.mouseClick(w.annotate.evidence.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert st.frame == 7 and st.range == (7, 9)
    qtbot.waitUntil(lambda: w.annotate.view._image is not None)


def test_double_click_evidence_edits_its_note(
    qtbot: QtBot,
    project_dir: Path,
    make_window: Callable[[Path], MainWindow],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = make_window(project_dir)
    st = w.state
    assert st.project is not None and st.video is not None
    st.project.annotations.add_evidence(st.video.id, st.rater, start_frame=1, end_frame=2)
    st.data_changed.emit()
    monkeypatch.setattr(
        "app.gui.annotate._workspace.QInputDialog.getText", lambda *a, **k: ("cup vanishes", True)
    )
    item = w.annotate.evidence.item(0)
    rect = w.annotate.evidence.visualItemRect(item)
    with qtbot.waitSignal(w.annotate.evidence.note_requested, timeout=2000):
        # a real double-click: the first click (which seeks), then the double-click event
        qtbot.mouseClick(
            w.annotate.evidence.viewport(), Qt.MouseButton.LeftButton, pos=rect.center()
        )
        qtbot.mouseDClick(
            w.annotate.evidence.viewport(), Qt.MouseButton.LeftButton, pos=rect.center()
        )
    (mark,) = st.project.annotations.evidence(st.video.id, st.rater)
    assert mark.note == "cup vanishes"
    assert "cup vanishes" in w.annotate.evidence.item(0).text()
