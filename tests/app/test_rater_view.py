"""Blinding in a shared project: in blind mode the window opens in the rater view, where rating
works and nothing names a generator, a judge or its scores, whatever keys, menus or layouts
the rater tries; the lead's passphrase (checked by the core) unlocks Results for the session."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QComboBox,
    QDockWidget,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QTabBar,
    QTextEdit,
    QWidget,
)
from pytestqt.qtbot import QtBot

from app.gui._main_window import MainWindow
from storage import Project
from tests.app.rated import rate_and_judge
from tests.app.test_annotate_keyboard import add_subgoal_by_keyboard, press

PASS = "correct horse"
CTRL = Qt.KeyboardModifier.ControlModifier
# what would unblind a rater: the generators (videos' models), the judge's model and profile
SECRETS = ("model_0", "model_1", "fake-vlm", "loop ·")


@pytest.fixture
def blind_project(project_dir: Path) -> Path:
    rate_and_judge(project_dir, {"alice": ("T3", None, "P2"), "bob": ("T2", "P4", None)})
    with Project.open(project_dir) as p:
        p.blinding.enable(PASS)
    return project_dir


def _columns(model: QAbstractItemModel, parent: QModelIndex) -> int:
    try:
        return model.columnCount(parent)
    except TypeError:  # a list model keeps columnCount private: one column
        return 1


def _model_texts(view: QAbstractItemView) -> list[str]:
    model = view.model()
    out: list[str] = []
    if model is None:
        return out
    todo = [QModelIndex()]
    while todo:
        parent = todo.pop()
        for r in range(model.rowCount(parent)):
            for c in range(max(1, _columns(model, parent))):
                index = model.index(r, c, parent)
                for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                    value = model.data(index, role)
                    if value is not None:
                        out.append(str(value))
                if c == 0:
                    todo.append(index)
        for c in range(_columns(model, parent)):
            head = model.headerData(c, Qt.Orientation.Horizontal)
            if head is not None:
                out.append(str(head))
    return out


def visible_texts(w: MainWindow) -> list[str]:
    """Every text a person can see in the window: widgets on screen, their items, tooltips,
    menus, the title and the status bar."""
    out = [w.windowTitle(), w.statusBar().currentMessage()]
    for widget in w.findChildren(QWidget):
        if not widget.isVisible():
            continue
        out.append(widget.toolTip())
        if isinstance(widget, QLabel | QAbstractButton | QLineEdit):
            out.append(widget.text())
        if isinstance(widget, QTextEdit | QPlainTextEdit):
            out.append(widget.toPlainText())
        if isinstance(widget, QComboBox):
            out += [widget.itemText(i) for i in range(widget.count())]
        if isinstance(widget, QTabBar):
            out += [widget.tabText(i) for i in range(widget.count())]
        if isinstance(widget, QDockWidget):
            out.append(widget.windowTitle())
        if isinstance(widget, QAbstractItemView):
            out += _model_texts(widget)
    menus = [a.menu() for a in w.menuBar().actions() if a.menu() is not None]
    for menu in menus:
        assert isinstance(menu, QMenu)
        out += [a.text() for a in menu.actions()]
    return out


def leaks(w: MainWindow) -> list[str]:
    return [t for t in visible_texts(w) if any(s in t for s in SECRETS)]


def click_menu(qtbot: QtBot, w: MainWindow, menu_title: str, action: QAction) -> None:
    """Open a menu of the menu bar and click one of its items, with the mouse."""
    bar = w.menuBar()
    top = next(a for a in bar.actions() if a.text().replace("&", "") == menu_title)
    menu = top.menu()
    assert isinstance(menu, QMenu)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.actionGeometry(top).center())
    qtbot.waitUntil(menu.isVisible)
    qtbot.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(action).center())


def type_into_dialog(qtbot: QtBot, text: str) -> Callable[[], None]:
    def fill() -> None:
        dlg = QApplication.activeModalWidget()
        assert dlg is not None, "no passphrase dialog"
        edit = dlg.findChild(QLineEdit)
        assert edit is not None and edit.echoMode() == QLineEdit.EchoMode.Password
        qtbot.keyClicks(edit, text)
        qtbot.keyClick(edit, Qt.Key.Key_Return)

    return fill


def unlock(qtbot: QtBot, w: MainWindow, passphrase: str) -> None:
    QTimer.singleShot(100, type_into_dialog(qtbot, passphrase))
    click_menu(qtbot, w, "Results", w.actions_by_id["results.unlock"])
    w.activateWindow()  # Xvfb has no window manager to hand activation back
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w)


def test_a_rater_in_a_blind_project_rates_and_sees_no_generator_or_judge(
    qtbot: QtBot, blind_project: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    w = make_window(blind_project)
    assert w.roles.role == "rater"
    assert "Rater view (blind mode)" in visible_texts(w)

    # rate the first video with the keyboard, as the README's journey does
    add_subgoal_by_keyboard(qtbot, w, ["red block", "blue plate", "place on", "on the plate"])
    qtbot.waitUntil(lambda: len(w.state.plan()) == 1)
    for _ in range(7):  # T1 T2 T3, P1 P2 P3 P4: yes
        press(qtbot, Qt.Key.Key_Y)
    assert w.annotate.scores.values["S"].text() == "100.0"

    # the keys of the other workspaces do nothing; Results and the judge stay out of sight
    for key in (Qt.Key.Key_3, Qt.Key.Key_2, Qt.Key.Key_4):
        press(qtbot, key, CTRL)
        qtbot.wait(50)
    assert w.workspace == "annotate"
    for title in ("Results", "Judge trace", "Jobs", "Episodes"):
        assert not w.docks[title].isVisible(), title
        assert not w.docks[title].toggleViewAction().isEnabled(), title
    for cid in ("view.results", "view.judge", "judge.run", "project.export", "results.blind"):
        assert not w.actions_by_id[cid].isEnabled(), cid
    assert w.actions_by_id["results.unlock"].isEnabled()
    # a dock brought back by a layout (restoreState) is hidden again, and holds nothing
    w.docks["Results"].show()
    qtbot.waitUntil(lambda: not w.docks["Results"].isVisible())
    assert w.results.results is None and w.results.board.rowCount() == 0
    assert w.trace_view.runs.count() == 0
    qtbot.wait(300)  # the video list's scores refresh after a pause
    assert leaks(w) == []

    # the wrong passphrase changes nothing; the lead's shows Results, with the generators
    unlock(qtbot, w, "wrong horse")
    assert w.roles.role == "rater" and "Wrong passphrase" in w.statusBar().currentMessage()
    assert not w.actions_by_id["view.results"].isEnabled()
    unlock(qtbot, w, PASS)
    assert w.roles.role == "lead"
    assert "Lead (unlocked)" in visible_texts(w)
    press(qtbot, Qt.Key.Key_3, CTRL)
    assert w.docks["Results"].isVisible()
    qtbot.waitUntil(lambda: w.results.results is not None, timeout=60_000)
    board = w.results.board
    assert {board.item(r, 0).text() for r in range(board.rowCount())} == {"model_0", "model_1"}  # type: ignore[union-attr]
    assert leaks(w)

    # Lock: back to the rater view, nothing kept
    click_menu(qtbot, w, "Results", w.actions_by_id["results.lock"])
    assert w.roles.role == "rater" and w.workspace == "annotate"
    assert w.results.results is None
    qtbot.wait(50)
    assert leaks(w) == []


def test_blind_mode_from_the_menu_and_a_new_window_opens_locked(
    qtbot: QtBot, project_dir: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    w = make_window(project_dir)
    assert w.roles.role == "lead" and w.actions_by_id["view.results"].isEnabled()
    assert not w.actions_by_id["results.unlock"].isEnabled()
    # the lead turns blind mode on: the passphrase, then the same again
    QTimer.singleShot(100, type_into_dialog(qtbot, PASS))
    QTimer.singleShot(600, type_into_dialog(qtbot, PASS))
    click_menu(qtbot, w, "Results", w.actions_by_id["results.blind"])
    qtbot.waitUntil(lambda: "Blind mode on" in w.statusBar().currentMessage(), timeout=5000)
    with Project.open(project_dir) as p:
        assert p.blinding.enabled and p.blinding.unlock(PASS)
    assert w.roles.role == "lead"  # this window stays the lead's
    w.close()

    w2 = make_window(project_dir)  # the next session starts in the rater view
    assert w2.roles.role == "rater"
    assert not w2.actions_by_id["view.results"].isEnabled()
