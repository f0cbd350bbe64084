"""Taking the arm over in a live physics episode from the episode workspace: "Take over" holds
the agent, keys on the panel drive the arm (and are kept from window shortcuts), "Hand back"
returns it, and the workspace's timeline shows the span with who and why."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.gui._main_window import MainWindow
from storage import Project

pytestmark = pytest.mark.gui


def ee(runner: Any) -> np.ndarray:
    w = runner.world
    return np.array(w.data.site_xpos[w.scene.arm.site_id])


def test_take_over_drive_by_keys_hand_back_and_the_timeline_shows_it(
    make_window: Callable[[Path], MainWindow], tmp_path: Path, qtbot: QtBot
) -> None:
    root = tmp_path / "takeover"
    Project.create(root).close()
    w = make_window(root)
    w.set_workspace("episode")
    ws, panel = w.episode, w.episode.live
    panel.scenario.setCurrentText("stack-two")
    panel.mode.setCurrentText("physics")
    QTest.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.play_button.isEnabled(), timeout=30_000)
    assert panel.take_button.isVisible() and panel.take_button.text() == "Take over"
    dock = w.docks["Episodes"]
    w.docks["Episodes"].show()
    qtbot.wait(100)
    docked = dock.width()
    play_width = panel.play_button.width()
    panel.who.setText("dana")
    panel.why.setText("the agent is stuck")
    QTest.mouseClick(panel.take_button, Qt.MouseButton.LeftButton)
    live = panel.live
    assert live is not None and live.runner is not None
    qtbot.waitUntil(lambda: live.teleop is not None, timeout=10_000)
    assert panel.take_button.text() == "Hand back"
    # the panel keeps W to itself while it has the arm: the window's shortcuts never see it
    probe = QKeyEvent(QEvent.Type.ShortcutOverride, Qt.Key.Key_W, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(panel, probe)
    assert probe.isAccepted()
    # a paused run plays once taken over: a person cannot drive a world that does not move
    qtbot.waitUntil(lambda: live.playing, timeout=10_000)
    qtbot.waitUntil(lambda: "you have the arm" in panel.status.text(), timeout=10_000)
    # the longer status and the toggled buttons neither squeeze the list nor move a button
    assert abs(dock.width() - docked) <= 2 and panel.play_button.width() == play_width
    assert not panel.play_button.icon().isNull() and panel.play_button.text() == "Pause"
    # the keys work on the MuJoCo view too, where the eyes are: click the picture, hold W
    canvas = ws.world.canvas
    QTest.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=canvas.rect().center())
    assert QApplication.focusWidget() is canvas
    # D is "right" as seen through the camera shown, as in the Teleop workspace
    from sim.teleop import camera_axes

    world = live.runner.world
    qtbot.waitUntil(lambda: ws.world.camera.count() > 0, timeout=30_000)  # the view's world
    assert ws.world.camera.currentText() == "front"
    axes = camera_axes(world.model, world.data, "front")
    right, forward = np.array(axes.right), np.array(axes.forward)
    start = ee(live.runner)
    QTest.keyPress(canvas, Qt.Key.Key_D)
    qtbot.waitUntil(lambda: float((ee(live.runner) - start) @ right) > 0.01, timeout=30_000)
    QTest.keyRelease(canvas, Qt.Key.Key_D)
    moved = ee(live.runner) - start
    assert abs(float(moved @ forward)) < 0.005  # right on screen only
    assert live.runner.actions == []  # the agent was held
    QTest.mouseClick(panel.take_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: live.teleop is None, timeout=10_000)
    assert panel.take_button.text() == "Take over"
    QTest.mouseClick(panel.play_button, Qt.MouseButton.LeftButton)  # pause
    qtbot.waitUntil(lambda: not live.playing, timeout=10_000)
    handed = live.tick

    def shown() -> bool:
        tl = ws.timeline
        return (tl is not None and bool(tl.on("takeovers")) and "takeovers" in ws.view.tracks
                and tl.on("takeovers")[0].end > 0)  # fmt: skip

    qtbot.waitUntil(shown, timeout=30_000)
    assert ws.timeline is not None
    (item,) = ws.timeline.on("takeovers")
    assert item.start == 0 and 0 < item.end <= handed
    assert "dana" in item.label and "the agent is stuck" in item.label
    panel.stop()
