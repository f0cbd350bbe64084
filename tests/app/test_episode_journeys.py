"""The episode workspace under a person's hands, driven by real key presses and mouse clicks in
a real X server: the picture is the playhead in a fork (before and after the fork tick, live and
once stored), a live run is never dropped without asking, the keys step ticks, and Compare puts
both branches on one tick axis."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from app.gui._main_window import MainWindow
from sim.episode import open_scenario
from sim.interact import run_interactive
from sim.review import WorldCursor
from sim.users import PROFILES
from storage import Project

pytestmark = pytest.mark.gui

RENDER = {"contacts": False, "labels": False, "shadows": True, "antialias": True}


def fresh_render(root: Path, episode_id: str, tick: int) -> np.ndarray:
    """The stored episode's world restored to ``tick`` by replay, rendered anew."""
    with Project.open(root) as p:
        cursor = WorldCursor(p, episode_id)
        try:
            assert cursor.seek(tick) == tick
            return np.asarray(cursor.world.render("front", 640, 480, **RENDER)).copy()
        finally:
            cursor.close()


def same_picture(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and float(np.abs(a.astype(int) - b.astype(int)).mean()) < 0.5


def keys(w: MainWindow, *presses: Any) -> None:
    """Key presses on whatever has the focus in the window, as a person types them."""
    if QApplication.activeWindow() is not w:  # a question was just answered: back to the window
        w.activateWindow()
        for _ in range(100):
            if QApplication.activeWindow() is w:
                break
            QTest.qWait(50)
    for k in presses:
        key, mod = k if isinstance(k, tuple) else (k, Qt.KeyboardModifier.NoModifier)
        target = QApplication.focusWidget() or w
        QTest.keyClick(target, key, mod)


def answer_prompt(qtbot: QtBot, button: str, seen: list[str]) -> None:
    """Click ``button`` of the "a live episode is running" question once it shows."""

    def click() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox) or box.objectName() != "ask-to-leave":
            QTimer.singleShot(50, click)
            return
        seen.append(box.text())
        target = next(b for b in box.findChildren(QPushButton) if b.text() == button)
        QTest.mouseClick(target, Qt.MouseButton.LeftButton)

    QTimer.singleShot(50, click)


def shot(qtbot: QtBot, w: MainWindow, name: str) -> None:
    """The journey's last picture, to look at: with ``SCREENSHOT_DIR`` set (run this file under
    an Xvfb of the screen's size: ``-o xvfb_width=1366 -o xvfb_height=768``), the window fitted
    to the screen and grabbed as ``<name>-<W>x<H>.png``."""
    folder = os.environ.get("SCREENSHOT_DIR")
    if not folder:
        return
    screen = w.screen().geometry()
    w.setGeometry(w.screen().availableGeometry())
    qtbot.wait(600)
    Path(folder).mkdir(parents=True, exist_ok=True)
    w.grab().save(str(Path(folder) / f"{name}-{screen.width()}x{screen.height()}.png"))


def frame_at(qtbot: QtBot, w: MainWindow, tick: int) -> np.ndarray:
    view = w.episode.world
    qtbot.waitUntil(lambda: w.episode.tick == tick, timeout=30_000)
    qtbot.waitUntil(lambda: view.frame is not None and view.frame.tick == tick
                    and view.camera.currentText() == "front", timeout=30_000)  # fmt: skip
    assert view.frame is not None
    return view.frame.image.copy()


@pytest.fixture
def physics_parent(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "forkphys"
    with Project.create(root) as p:
        ep = run_interactive(bound=open_scenario("cook-patty"), persona=PROFILES["novice"],
                             project=p, mode="physics")  # fmt: skip
    assert ep.episode_id is not None
    return root, ep.episode_id


def test_a_fork_shows_the_world_of_the_playhead_before_and_after_the_fork_tick(
    make_window: Callable[[Path], MainWindow], physics_parent: tuple[Path, str], qtbot: QtBot
) -> None:
    root, parent = physics_parent
    w = make_window(root)
    w.set_workspace("episode")
    ws, panel = w.episode, w.episode.live
    ws.open(parent)
    qtbot.waitUntil(lambda: ws.timeline is not None and ws.fork_button.isEnabled(), timeout=30_000)
    ws.slider.setFocus()
    hop = Qt.KeyboardModifier.ShiftModifier
    keys(w, Qt.Key.Key_Home, *[(Qt.Key.Key_Right, hop)] * 8)  # hops of 10 ticks
    assert ws.tick == 80
    QTest.mouseClick(ws.fork_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.live is not None and panel.live.tick == 80
                    and not panel.live.playing, timeout=30_000)  # fmt: skip
    qtbot.waitUntil(lambda: ws.world.camera.count() > 0, timeout=30_000)  # cameras offered
    assert ws.world.camera.currentText() == "front"
    fork = panel.episode_id
    assert fork is not None and fork != parent
    at_fork = frame_at(qtbot, w, 80)
    assert same_picture(at_fork, fresh_render(root, parent, 80))
    ws.slider.setFocus()
    keys(w, *[(Qt.Key.Key_Left, hop)] * 6)  # back to tick 20, before the fork
    early = frame_at(qtbot, w, 20)
    assert not same_picture(early, at_fork)  # the arm was elsewhere: not the newest frame
    assert same_picture(early, fresh_render(root, parent, 20))
    # on past the fork tick: End goes to the live head, Space plays the run, Space pauses it
    panel.speed.setValue(0)
    ws.slider.setFocus()
    keys(w, Qt.Key.Key_End, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: panel.live is not None and panel.live.tick >= 130, timeout=30_000)
    ws.slider.setFocus()
    keys(w, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: panel.live is not None and not panel.live.playing, timeout=10_000)
    qtbot.waitUntil(lambda: panel.live is not None and ws.tick == panel.live.tick, timeout=30_000)
    head = panel.live.tick
    ws.slider.setFocus()
    keys(w, *[Qt.Key.Key_Left] * 15)
    after = frame_at(qtbot, w, head - 15)
    # stop and store: the fork becomes a recorded episode, opened where it stopped
    answer_prompt(qtbot, "Stop and store it", seen := [])
    QTest.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(seen), timeout=10_000)
    assert fork[:8] in seen[0]
    panel.stop(quiet=True)  # the run the Start button began: not part of this journey
    with Project.open(root) as p:
        stored = p.episodes.get(fork)
        assert stored.status.value == "cancelled" and stored.ticks >= head
    assert same_picture(after, fresh_render(root, fork, head - 15))
    ws.open(fork)
    qtbot.waitUntil(lambda: ws.timeline is not None and ws.timeline.episode.id == fork
                    and "fork of" in ws.title.text(), timeout=30_000)  # fmt: skip
    ws.slider.setFocus()
    keys(w, Qt.Key.Key_Home, *[(Qt.Key.Key_Right, hop)] * 3)
    assert same_picture(frame_at(qtbot, w, 30), fresh_render(root, parent, 30))
    shot(qtbot, w, "episode-fork")


def test_a_live_run_is_never_dropped_without_asking(
    make_window: Callable[[Path], MainWindow], tmp_path: Path, qtbot: QtBot
) -> None:
    root = tmp_path / "ask"
    with Project.create(root) as p:
        other = run_interactive(bound=open_scenario("stack-two"), persona=PROFILES["expert"],
                                project=p).episode_id  # fmt: skip
    assert other is not None
    w = make_window(root)
    w.set_workspace("episode")
    ws, panel = w.episode, w.episode.live
    panel.scenario.setCurrentText("cook-patty")
    QTest.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.step_button.isEnabled(), timeout=30_000)
    for _ in range(5):
        QTest.mouseClick(panel.step_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.live is not None and panel.live.tick == 5, timeout=30_000)
    first = panel.episode_id
    assert first is not None
    # Start again: asked; Cancel keeps the run as it was
    answer_prompt(qtbot, "Cancel", seen := [])
    QTest.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    assert seen and "tick 5" in seen[0]
    assert panel.episode_id == first and panel.live is not None and panel.live.tick == 5
    # closing the window: asked; Cancel keeps the window and the run
    answer_prompt(qtbot, "Cancel", seen := [])
    w.close()
    assert seen and w.isVisible() and panel.episode_id == first
    # opening another episode: asked; keep it paused, and the other episode shows
    answer_prompt(qtbot, "Keep it paused", seen := [])
    ws.open(other)
    qtbot.waitUntil(lambda: ws.timeline is not None and ws.timeline.episode.id == other,
                    timeout=30_000)  # fmt: skip
    assert seen and panel.live is not None and panel.episode_id == first
    assert "background" in panel.status.text()
    # Start again, stop and store: the first run is kept with what it had, and listed
    answer_prompt(qtbot, "Stop and store it", seen := [])
    QTest.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    assert seen
    qtbot.waitUntil(lambda: panel.episode_id not in (None, first), timeout=30_000)
    with Project.open(root) as p:
        kept = p.episodes.get(first)
        assert kept.status.value == "cancelled" and kept.ticks == 5
    qtbot.waitUntil(lambda: ws.browser.row_of(first) is not None, timeout=10_000)
    # closing during a run, stop and store: the window closes, the run is stored
    second = panel.episode_id
    answer_prompt(qtbot, "Stop and store it", seen := [])
    w.close()
    assert seen and not w.isVisible()
    with Project.open(root) as p:
        assert second is not None and p.episodes.get(second).status.value == "cancelled"


def test_keys_step_ticks_and_do_not_reach_the_hidden_annotate_workspace(
    make_window: Callable[[Path], MainWindow], project_dir: Path, qtbot: QtBot
) -> None:
    with Project.open(project_dir) as p:
        eid = run_interactive(bound=open_scenario("cook-patty"), persona=PROFILES["expert"],
                              project=p).episode_id  # fmt: skip
    assert eid is not None
    w = make_window(project_dir)
    annotate_frame = w.state.frame
    w.set_workspace("episode")
    ws = w.episode
    ws.open(eid)
    qtbot.waitUntil(lambda: ws.timeline is not None, timeout=30_000)
    ticks = ws.timeline.ticks
    ws.view.setFocus()
    shift = Qt.KeyboardModifier.ShiftModifier
    keys(w, Qt.Key.Key_Right, Qt.Key.Key_Right)
    assert ws.tick == 2
    keys(w, (Qt.Key.Key_Right, shift))
    assert ws.tick == 12
    keys(w, Qt.Key.Key_Left, (Qt.Key.Key_Left, shift))
    assert ws.tick == 1
    keys(w, Qt.Key.Key_End)
    assert ws.tick == ticks
    keys(w, Qt.Key.Key_Home, Qt.Key.Key_Space)  # plays at the episode's pace
    qtbot.waitUntil(lambda: ws.tick >= 3, timeout=10_000)
    keys(w, Qt.Key.Key_Space)
    stopped = ws.tick
    qtbot.wait(400)
    assert ws.tick == stopped and not ws.playing.isActive()
    # the Annotate workspace is hidden: its player did not move, its gates were not answered
    keys(w, Qt.Key.Key_Y, Qt.Key.Key_N)
    assert w.state.frame == annotate_frame
    project = w.state.project
    assert project is not None
    assert not project.db.execute("SELECT 1 FROM gate_decisions").fetchone()


def test_compare_puts_both_branches_on_one_tick_axis(
    make_window: Callable[[Path], MainWindow], tmp_path: Path, qtbot: QtBot
) -> None:
    root = tmp_path / "cmp1"
    with Project.create(root) as p:
        a = run_interactive(bound=open_scenario("cook-patty"), persona=PROFILES["novice"],
                            project=p).episode_id  # fmt: skip
        b = run_interactive(bound=open_scenario("cheeseburger"), persona=PROFILES["expert"],
                            project=p).episode_id  # fmt: skip
    assert a is not None and b is not None
    w = make_window(root)
    w.set_workspace("episode")
    ws = w.episode
    ws.open(a)
    qtbot.waitUntil(lambda: ws.timeline is not None and ws.timeline.episode.id == a, timeout=30_000)
    browser = ws.browser
    row = browser.row_of(b)
    assert row is not None
    rect = browser.table.visualItemRect(browser.table.item(row, 0))
    QTest.mouseClick(browser.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    QTest.mouseClick(browser.compare_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: ws.compared is not None, timeout=30_000)
    qtbot.wait(200)

    def x_of(view: Any, tick: float) -> float:
        vb = view.getPlotItem().vb
        scene = vb.mapViewToScene(QPointF(tick, 0))
        return float(view.mapToGlobal(view.mapFromScene(scene)).x())

    for tick in (0.0, 90.0, 200.0):  # the same tick is the same x in both timelines
        assert abs(x_of(ws.view, tick) - x_of(ws.parent_view, tick)) <= 1.0
    # zooming one zooms both: one axis
    ws.view.getPlotItem().vb.setXRange(40, 120, padding=0)
    qtbot.wait(100)
    assert abs(x_of(ws.view, 90) - x_of(ws.parent_view, 90)) <= 1.0
    ws.seek(90)
    shot(qtbot, w, "episode-compare")
