"""The gamepad in the teleop workspace, through SDL's virtual joystick (no hardware): the pad
is offered once it is attached, drives the arm while it is chosen (the keys then do not), its
A button closes the jaws, and what it did is recorded as a demonstration's actions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sdl2
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.gui._main_window import MainWindow
from sim.teleop import SessionStatus, list_demonstrations, load_demonstration
from storage import Project
from tests.app.test_gamepad import Pad, attach_pad, virtual  # noqa: F401 (a fixture)
from tests.app.test_teleop_gui import TICK_WAIT_MS, _start, teleop_window  # noqa: F401

pytestmark = pytest.mark.gui


def test_a_virtual_pad_drives_the_arm_in_the_teleop_workspace(
    qtbot: QtBot,
    teleop_window: MainWindow,  # noqa: F811 (the imported fixture)
    virtual: list[int],  # noqa: F811
    tmp_path: Path,
) -> None:
    w = teleop_window
    ws, keys = _start(qtbot, w)
    assert [ws.device.itemText(k) for k in range(ws.device.count())] == ["keyboard"]
    attach_pad(virtual, b"Virtual pad")
    ws.refresh_devices()
    assert ws.device.findText("gamepad: Virtual pad") == 1
    ws.device.setCurrentIndex(1)
    ws.device.activated.emit(1)  # what choosing it in the box does
    assert ws.pad is not None
    hands = Pad(ws.pad)

    def st() -> SessionStatus:
        assert ws.status is not None
        return ws.status

    ws.record_button.click()
    qtbot.waitUntil(lambda: st().recording, timeout=TICK_WAIT_MS)
    start = np.array(st().ee)
    # the keyboard does not move the arm while the pad has it
    keys.keys({Qt.Key.Key_A})  # left in the front camera's picture: -y
    # full right: right in the picture, which from the front camera (at +x) is +y
    hands.axis(sdl2.SDL_CONTROLLER_AXIS_LEFTX, 1.0)
    qtbot.waitUntil(lambda: st().ee[1] > start[1] + 0.03, timeout=TICK_WAIT_MS)
    keys.keys(set())
    hands.axis(sdl2.SDL_CONTROLLER_AXIS_LEFTX, 0.0)
    moved = np.array(st().ee) - start
    assert abs(moved[0]) < 0.01, "the stick pushed right moved the arm toward or from the camera"
    hands.button(sdl2.SDL_CONTROLLER_BUTTON_A, True)  # the press closes the jaws
    qtbot.waitUntil(lambda: st().grip == 1.0, timeout=TICK_WAIT_MS)
    hands.button(sdl2.SDL_CONTROLLER_BUTTON_A, False)
    rest = st().tick
    qtbot.waitUntil(lambda: st().tick > rest + 5, timeout=TICK_WAIT_MS)
    assert st().grip == 1.0  # the release is not a second toggle
    ws.stop_button.click()
    qtbot.waitUntil(lambda: not st().recording and len(st().stored) == 1, timeout=TICK_WAIT_MS)
    with Project.open(tmp_path / "p") as p:
        (summary,) = list_demonstrations(p, "stack-two")
        demo = load_demonstration(p, summary.id)
    assert demo.actions[:, 1].max() > 0  # recorded in world axes: the pad's right was +y
    assert demo.ee_pos[-1, 1] > demo.ee_pos[0, 1] + 0.03
    assert demo.actions[0, 6] == 0.0 and demo.actions[-1, 6] == 1.0  # the grip command
    assert demo.gripper[-1] < demo.gripper[0]  # and the jaws measured closing


def test_the_picker_lists_what_is_attached_when_it_opens(
    qtbot: QtBot,
    teleop_window: MainWindow,  # noqa: F811 (the imported fixture)
    virtual: list[int],  # noqa: F811
) -> None:
    import sdl2

    ws, _keys = _start(qtbot, teleop_window)
    assert ws.device.count() == 1  # the keyboard: nothing attached when the workspace was built
    attach_pad(virtual, b"Late pad")
    ws.device.showPopup()  # opening the picker looks again
    ws.device.hidePopup()
    assert ws.device.findText("gamepad: Late pad") == 1
    ws.device.setCurrentIndex(1)
    ws.device.activated.emit(1)
    assert ws.pad is not None
    ws.device.showPopup()  # still there: the choice stays
    ws.device.hidePopup()
    assert ws.device.currentText() == "gamepad: Late pad" and ws.pad is not None
    for k in range(sdl2.SDL_NumJoysticks()):  # unplug it
        sdl2.SDL_JoystickDetachVirtual(k)
    virtual.clear()
    sdl2.SDL_JoystickUpdate()
    ws.device.showPopup()
    ws.device.hidePopup()
    assert ws.device.currentText() == "keyboard" and ws.pad is None  # the keys have the arm
