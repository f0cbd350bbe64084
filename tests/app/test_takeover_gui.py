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
    start = ee(live.runner)
    QTest.keyPress(panel, Qt.Key.Key_W)
    live.step(8)
    qtbot.waitUntil(lambda: live.tick == 8, timeout=30_000)
    QTest.keyRelease(panel, Qt.Key.Key_W)
    QTest.keyClick(panel, Qt.Key.Key_R)  # a tap: pressed and released before any tick
    moved = ee(live.runner) - start
    assert moved[0] > 0.01 and abs(moved[1]) < 0.005  # W drove the arm along +x
    assert live.runner.actions == []  # the agent was held
    QTest.mouseClick(panel.take_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: live.teleop is None, timeout=10_000)
    assert panel.take_button.text() == "Take over"
    live.step(3)  # the workspace re-reads the trace as the episode goes on
    qtbot.waitUntil(lambda: live.tick == 11, timeout=30_000)

    def shown() -> bool:
        tl = ws.timeline
        return tl is not None and bool(tl.on("takeovers")) and "takeovers" in ws.view.tracks

    qtbot.waitUntil(shown, timeout=30_000)
    assert ws.timeline is not None
    (item,) = ws.timeline.on("takeovers")
    assert (item.start, item.end) == (0, 8)
    assert "dana" in item.label and "the agent is stuck" in item.label
    panel.stop()
