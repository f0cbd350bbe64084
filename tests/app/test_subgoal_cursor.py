"""Clicking a subgoal puts the gate cursor on its first gate still to answer, so the next key
answers that gate; with every gate answered it lands on T1 and a key never silently replaces an
answer (the same key twice does)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from annotation import GATES_ALL, Answer
from app.gui._main_window import MainWindow

K = Qt.Key
P, F = Answer.PASS, Answer.FAIL


def press(qtbot: QtBot, key: Qt.Key) -> None:
    target = QApplication.focusWidget() or QApplication.activeWindow()
    assert target is not None
    qtbot.keyClick(target, key)


def click_subgoal(qtbot: QtBot, w: MainWindow, row: int) -> None:
    lst = w.annotate.subgoals.list
    item = lst.item(row)
    assert item is not None
    rect = lst.visualItemRect(item)
    assert rect.isValid() and lst.viewport().rect().contains(rect.center())
    qtbot.mouseClick(lst.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def gate(w: MainWindow) -> str:
    return GATES_ALL[w.state.gate_index]


def test_clicking_a_subgoal_lands_on_its_first_unanswered_gate(
    qtbot: QtBot, project_dir: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    w = make_window(project_dir)
    st = w.state
    assert st.project is not None and st.video is not None
    ann, vid = st.project.annotations, st.video.id
    s1 = ann.add_subgoal(st.video.case_id, st.rater, source="red block", action="lift")
    s2 = ann.add_subgoal(st.video.case_id, st.rater, source="cup", action="push")
    s3 = ann.add_subgoal(st.video.case_id, st.rater, source="lid", action="open")
    for g in ("T1", "T2"):
        ann.set_answer(vid, st.rater, s1.id, g, P)
    # S2: T2 "no" leaves T3 unreached; P1 answered, so P2 is next
    for g, a in (("T1", P), ("T2", F), ("P1", P)):
        ann.set_answer(vid, st.rater, s2.id, g, a)
    st.data_changed.emit()
    assert w.annotate.subgoals.list.count() == 3

    click_subgoal(qtbot, w, 2)  # S3: nothing answered
    assert (st.subgoal_id, gate(w)) == (s3.id, "T1")
    click_subgoal(qtbot, w, 0)  # S1: T1 and T2 answered yes
    assert (st.subgoal_id, gate(w)) == (s1.id, "T3")
    assert w.annotate.gates.rows[2][0].styleSheet()  # the highlighted row is T3's
    click_subgoal(qtbot, w, 1)  # S2: T3 is not reached, P1 answered
    assert (st.subgoal_id, gate(w)) == (s2.id, "P2")

    # the next key answers the gate the cursor landed on, and nothing else
    click_subgoal(qtbot, w, 0)
    press(qtbot, K.Key_N)
    assert ann.answers(vid, st.rater)[s1.id] == {"T1": P, "T2": P, "T3": F}
    press(qtbot, K.Key_PageDown)  # the keyboard's way to another subgoal lands the same way
    assert (st.subgoal_id, gate(w)) == (s2.id, "P2")


def test_a_fully_answered_subgoal_lands_on_t1_and_a_key_does_not_replace_silently(
    qtbot: QtBot, project_dir: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    w = make_window(project_dir)
    st = w.state
    assert st.project is not None and st.video is not None
    ann, vid = st.project.annotations, st.video.id
    s1 = ann.add_subgoal(st.video.case_id, st.rater, source="red block", action="lift")
    s2 = ann.add_subgoal(st.video.case_id, st.rater, source="cup", action="push")
    for g in GATES_ALL:
        ann.set_answer(vid, st.rater, s1.id, g, P)
    ann.set_answer(vid, st.rater, s2.id, "T1", F)  # t = 0: Physics locked, nothing left
    st.data_changed.emit()
    full = {g: P for g in GATES_ALL}

    click_subgoal(qtbot, w, 1)
    assert (st.subgoal_id, gate(w)) == (s2.id, "T1")
    click_subgoal(qtbot, w, 0)
    assert (st.subgoal_id, gate(w)) == (s1.id, "T1")

    press(qtbot, K.Key_N)  # would replace T1's "yes": it only says so
    assert ann.answers(vid, st.rater)[s1.id] == full
    message = w.statusBar().currentMessage()
    assert "T1 is already answered yes" in message and "again" in message
    press(qtbot, K.Key_Y)  # the same answer changes nothing, and moves on
    assert ann.answers(vid, st.rater)[s1.id] == full

    click_subgoal(qtbot, w, 1)
    click_subgoal(qtbot, w, 0)
    press(qtbot, K.Key_N)
    assert ann.answers(vid, st.rater)[s1.id] == full
    press(qtbot, K.Key_N)  # the same key again: now it replaces (and clears what it unreaches)
    assert ann.answers(vid, st.rater)[s1.id] == {"T1": F}

    # a click on the answer's own button is deliberate: it replaces at once
    click_subgoal(qtbot, w, 1)
    button = w.annotate.gates.rows[0][3][Answer.PASS]
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert ann.answers(vid, st.rater)[s2.id] == {"T1": P}


def test_opening_a_rated_video_lands_on_its_first_open_gate(
    qtbot: QtBot, project_dir: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    w = make_window(project_dir)
    st = w.state
    assert st.project is not None and st.video is not None
    ann, first = st.project.annotations, st.video
    s1 = ann.add_subgoal(first.case_id, st.rater, source="red block", action="lift")
    for g in ("T1", "T2", "T3", "P1"):
        ann.set_answer(first.id, st.rater, s1.id, g, P)
    st.data_changed.emit()
    others = [v for v in w.annotate.videos.videos() if v.id != first.id]
    w.annotate.open_video(others[0])
    items = [i for i in w.annotate.videos._video_items() if i.text(0) == first.id]
    rect = w.annotate.videos.visualItemRect(items[0])
    qtbot.mouseClick(w.annotate.videos.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert st.video is not None and st.video.id == first.id
    assert (st.subgoal_id, gate(w)) == (s1.id, "P2")
