"""Teleop that matches the screen, through the devices and the window.

The keys, a gamepad (SDL's virtual joystick) and a SpaceMouse (a stand-in for ``hid.device``)
give the same screen-frame command for "right", "forward" and "up", so through any camera they
move the arm the same way. In the window, with real key events on the focused view: D moves the
arm right in the picture of the front camera (the default), and of the top camera once the
person picks it; and while nothing moves the workspace renders nothing (counted, not timed).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import sdl2
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.devices import Gamepad, SpaceMouse
from app.gui._main_window import MainWindow
from app.gui.teleop import KeyboardDevice, TeleopWorkspace
from sim.episode import make_world, open_scenario
from sim.mujoco import PhysicsWorld
from sim.teleop import SCREEN, Command, SessionStatus, camera_axes, to_world
from tests.app.test_gamepad import Pad, attach_pad, virtual  # noqa: F401 (a fixture)
from tests.app.test_spacemouse import NAVIGATOR, FakeHid, six_axes
from tests.app.test_teleop_gui import TICK_WAIT_MS, _start, teleop_window  # noqa: F401
from tests.sim.teleop.test_screen_motion import Pinhole, named

K = Qt.Key
LIN, ANG = 0.25, 1.5


@pytest.fixture(scope="module")
def world() -> PhysicsWorld:
    """The scene's cameras where the window's world has them (they are fixed to the scene)."""
    bound = open_scenario("stack-two")
    w = make_world(bound, "physics", arm="wb6")
    assert isinstance(w, PhysicsWorld)
    w.reset(bound.scenario.seed)
    return w


def _key(keys: KeyboardDevice, key: Qt.Key, press: bool = True) -> None:
    kind = QEvent.Type.KeyPress if press else QEvent.Type.KeyRelease
    keys.eventFilter(QObject(), QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier))


def _direction(cmd: Command, world: PhysicsWorld, camera: str) -> np.ndarray:
    lin = np.asarray(to_world(cmd, camera_axes(world.model, world.data, camera)).linear)
    return lin / np.linalg.norm(lin)


@pytest.mark.parametrize(
    ("key", "stick", "cap"),
    [
        (K.Key_D, (sdl2.SDL_CONTROLLER_AXIS_LEFTX, 1.0), (350, 0, 0)),  # right
        (K.Key_W, (sdl2.SDL_CONTROLLER_AXIS_LEFTY, -1.0), (0, -350, 0)),  # forward (away)
        (K.Key_R, (sdl2.SDL_CONTROLLER_AXIS_RIGHTY, -1.0), (0, 0, -350)),  # up
    ],
)
def test_keys_pad_and_spacemouse_agree_through_every_camera(
    qtbot: QtBot,
    virtual: list[int],  # noqa: F811 (the imported fixture)
    world: PhysicsWorld,
    key: Qt.Key,
    stick: tuple[int, float],
    cap: tuple[int, int, int],
) -> None:
    keys = KeyboardDevice(lambda _c: None, lambda _a: None)
    keys.max_linear, keys.max_angular = LIN, ANG
    _key(keys, key)
    by_key = keys.command()
    pad = Gamepad.open(attach_pad(virtual), max_linear=LIN, max_angular=ANG)
    Pad(pad).axis(*stick)
    by_pad = pad.poll()
    pad.close()
    dev = FakeHid()
    mouse = SpaceMouse(NAVIGATOR, dev, max_linear=LIN, max_angular=ANG)
    dev.queue.append(six_axes(*cap, 0, 0, 0))
    by_mouse = mouse.poll()
    for cmd in (by_key, by_pad, by_mouse):
        assert cmd.frame == SCREEN
        assert cmd.linear == pytest.approx(by_key.linear)  # one screen command, three devices
    for camera in ("front", "head", "top", "wrist"):
        want = _direction(by_key, world, camera)
        for cmd in (by_pad, by_mouse):
            np.testing.assert_allclose(_direction(cmd, world, camera), want, atol=1e-9)


def _st(ws: TeleopWorkspace) -> SessionStatus:
    assert ws.status is not None
    return ws.status


def _hold(qtbot: QtBot, ws: TeleopWorkspace, key: Qt.Key, until: Callable[[], bool]) -> None:
    """Press ``key`` on whatever has the focus (the view), hold it until ``until``, let go."""
    target = QApplication.focusWidget()
    assert target is ws.view.canvas
    QTest.keyPress(target, key)
    qtbot.waitUntil(until, timeout=TICK_WAIT_MS)
    QTest.keyRelease(target, key)


def _settle(qtbot: QtBot, ws: TeleopWorkspace) -> np.ndarray:
    """Wait until the arm has stopped (the status stops changing); its position then."""
    last = np.array(_st(ws).ee)
    for _ in range(40):
        qtbot.wait(150)
        now = np.array(_st(ws).ee)
        if float(np.abs(now - last).max()) < 1e-4:
            return now
        last = now
    raise AssertionError("the arm did not come to rest")


@pytest.mark.gui
def test_d_moves_the_arm_right_in_the_picture_and_idle_renders_nothing(
    qtbot: QtBot,
    teleop_window: MainWindow,  # noqa: F811 (the imported fixture)
    world: PhysicsWorld,
) -> None:
    ws, _op = _start(qtbot, teleop_window)
    qtbot.waitUntil(lambda: ws.view.frame is not None, timeout=30_000)
    assert ws.view.camera.currentText() == "front"  # the camera the workspace opens on
    session = ws.session
    assert session is not None

    # nothing pressed, nothing moving: no frame is published or rendered, the loop rests
    start = _settle(qtbot, ws)
    shown, published, tick = ws.frames_shown, session.published, session.tick
    qtbot.wait(1500)
    assert (ws.frames_shown, session.published) == (shown, published)
    assert session.tick - tick < 15  # a few slow ticks, not 75

    # D, a real key press on the focused view: right in the front camera's picture
    front: Pinhole = named(world, "front")
    _hold(qtbot, ws, K.Key_D, lambda: float(np.linalg.norm(np.array(_st(ws).ee) - start)) > 0.04)
    end = _settle(qtbot, ws)
    du, dv = front.pixel(end) - front.pixel(start)
    assert du > 8 and abs(dv) < 0.35 * du, (du, dv)
    assert ws.frames_shown > shown  # the view followed the arm

    # the person looks from above instead: D is right in that picture now
    ws.view.camera.setCurrentText("top")
    ws.view.canvas.setFocus()
    qtbot.waitUntil(lambda: ws.view.canvas.hasFocus())
    qtbot.waitUntil(lambda: ws.view.frame is not None and ws.view.frame.camera == "top",
                    timeout=TICK_WAIT_MS)  # fmt: skip
    top = named(world, "top")
    start = end
    _hold(qtbot, ws, K.Key_D, lambda: float(np.linalg.norm(np.array(_st(ws).ee) - start)) > 0.04)
    end = _settle(qtbot, ws)
    du, dv = top.pixel(end) - top.pixel(start)
    assert du > 8 and abs(dv) < 0.35 * du, (du, dv)
    # and W is up the top picture (away from the person at the bottom of it)
    start = end
    _hold(qtbot, ws, K.Key_W, lambda: float(np.linalg.norm(np.array(_st(ws).ee) - start)) > 0.04)
    end = _settle(qtbot, ws)
    du, dv = top.pixel(end) - top.pixel(start)
    assert dv < -8 and abs(du) < 0.35 * -dv, (du, dv)
