"""The SpaceMouse path: listing through the real hidapi module (no device is attached here, so
the listing is empty and must not fail), and the report parser and the map to teleop commands
through a stand-in for ``hid.device`` that hands back report byte strings the way a device
does, in the classic three-report form and the 13-byte one. A GUI test chooses such a device in
the teleop workspace and drives the arm with it."""

from __future__ import annotations

import struct
import sys
from collections.abc import Iterator
from pathlib import Path

import hid  # type: ignore[import-not-found]  # the hidapi wheel ships no stubs
import numpy as np
import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from annotation import UserError
from app.devices import _spacemouse
from app.devices._gamepad import DEADZONE, NEUTRAL, PRECISION_SPEED
from app.devices._spacemouse import (
    CONNEXION,
    FULL_SCALE,
    LOGITECH,
    MODELS,
    SpaceMouse,
    SpaceMouseError,
    SpaceMouseInfo,
    spacemice,
)
from app.gui._main_window import MainWindow
from sim.teleop import SessionStatus
from tests.app.test_teleop_gui import TICK_WAIT_MS, _start, teleop_window  # noqa: F401

LIN, ANG = 0.25, 1.5
NAVIGATOR = SpaceMouseInfo("SpaceNavigator", b"/dev/hidraw7", LOGITECH, 0xC626,
                           MODELS[(LOGITECH, 0xC626)])  # fmt: skip
PRO = SpaceMouseInfo("SpaceMouse Pro", b"/dev/hidraw8", LOGITECH, 0xC62B,
                     MODELS[(LOGITECH, 0xC62B)])  # fmt: skip
# a SpaceNavigator's reports as a USB capture shows them (spacenavd's notes on the device)
REST_TRANSLATION = bytes.fromhex("01000000000000")
TILT_BACK = bytes.fromhex("020000e2ff0000")  # ry = -30: small, inside the deadzone
LEFT_DOWN, RIGHT_DOWN = bytes.fromhex("030100"), bytes.fromhex("030200")
BOTH_DOWN, NONE_DOWN = bytes.fromhex("030300"), bytes.fromhex("030000")


def translation(x: int, y: int, z: int) -> bytes:
    return struct.pack("<Bhhh", 1, x, y, z)


def rotation(rx: int, ry: int, rz: int) -> bytes:
    return struct.pack("<Bhhh", 2, rx, ry, rz)


def six_axes(x: int, y: int, z: int, rx: int, ry: int, rz: int) -> bytes:
    return struct.pack("<Bhhhhhh", 1, x, y, z, rx, ry, rz)


class FakeHid:
    """Stands in for ``hid.device``: ``read`` hands back the queued reports one per call, then
    an empty list (nothing pending, as a non-blocking read says); unplugged, it raises OSError
    as hidapi's read does."""

    def __init__(self) -> None:
        self.queue: list[bytes] = []
        self.unplugged = False
        self.opened: bytes | None = None
        self.nonblocking: int | None = None
        self.closed = False

    def open_path(self, path: bytes) -> None:
        if self.unplugged:
            raise OSError("open failed")
        self.opened = path

    def set_nonblocking(self, v: int) -> int:
        self.nonblocking = v
        return 0

    def read(self, max_length: int, timeout_ms: int = 0) -> list[int]:
        if self.unplugged:
            raise OSError("read error")
        return list(self.queue.pop(0)[:max_length]) if self.queue else []

    def close(self) -> None:
        self.closed = True


def opened(info: SpaceMouseInfo = NAVIGATOR) -> tuple[SpaceMouse, FakeHid]:
    dev = FakeHid()
    return SpaceMouse(info, dev, max_linear=LIN, max_angular=ANG), dev


def test_no_spacemouse_is_listed_here_and_listing_does_not_fail() -> None:
    assert _spacemouse.available()  # the real hidapi module: the listing below went through it
    assert spacemice() == []


def _hid_entry(pid: int, vid: int = CONNEXION, usage: tuple[int, int] = (1, 8), path: bytes = b"",
               product: str = "", serial: str = "") -> dict[str, object]:  # fmt: skip
    return {"path": path or f"/dev/hidraw-{pid:x}-{usage[1]}".encode(), "vendor_id": vid,
            "product_id": pid, "usage_page": usage[0], "usage": usage[1],
            "product_string": product, "serial_number": serial, "interface_number": 0}  # fmt: skip


def test_only_6dof_interfaces_of_3dconnexion_devices_are_listed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    entries = [
        _hid_entry(0xC626, LOGITECH, path=b"/dev/hidraw1"),  # SpaceNavigator
        _hid_entry(0xC52B, LOGITECH, usage=(1, 2)),  # a Logitech receiver's mouse: not ours
        _hid_entry(0xC635, usage=(1, 8), path=b"/dev/hidraw2"),  # SpaceMouse Compact
        _hid_entry(0xC635, usage=(12, 1)),  # its consumer-control interface
        _hid_entry(0xC652, usage=(1, 2)),  # the CadMouse on a Universal Receiver
        _hid_entry(0xC650, usage=(1, 8)),  # a CadMouse, whatever it claims
        # a model newer than the table, named by the device
        _hid_entry(0xC6A0, product="SpaceMouse Next ", path=b"/dev/hidraw3"),
        _hid_entry(0xC6A1, usage=(1, 6), product="Keyboard Next"),  # 3Dconnexion, not 6-DoF
    ]
    monkeypatch.setattr(hid, "enumerate", lambda *a: entries)
    listed = spacemice()
    assert [(m.name, m.path, m.product_id) for m in listed] == [
        ("SpaceNavigator", b"/dev/hidraw1", 0xC626),
        ("SpaceMouse Compact", b"/dev/hidraw2", 0xC635),
        ("SpaceMouse Next", b"/dev/hidraw3", 0xC6A0),
    ]
    assert listed[2].model.full_scale == FULL_SCALE
    # a backend that cannot read usages: known models only, one interface per device
    blind = [_hid_entry(0xC626, LOGITECH, usage=(0, 0), path=p) for p in (b"/a", b"/b")]
    blind.append(_hid_entry(0xC6A0, usage=(0, 0)))
    monkeypatch.setattr(hid, "enumerate", lambda *a: blind)
    assert [(m.name, m.path) for m in spacemice()] == [("SpaceNavigator", b"/a")]


def test_a_failing_or_missing_hidapi_offers_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*a: object) -> list[dict[str, object]]:
        raise OSError("hid_enumerate failed")

    monkeypatch.setattr(hid, "enumerate", broken)
    assert spacemice() == []
    monkeypatch.setitem(sys.modules, "hid", None)  # `import hid` now raises ImportError
    assert not _spacemouse.available()
    assert spacemice() == []
    with pytest.raises(SpaceMouseError, match="hidapi"):
        SpaceMouse.open(NAVIGATOR)


def test_open_reads_the_path_without_blocking_and_says_why_it_cannot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[FakeHid] = []

    def device() -> FakeHid:
        made.append(FakeHid())
        return made[-1]

    monkeypatch.setattr(hid, "device", device)
    mouse = SpaceMouse.open(NAVIGATOR, max_linear=0.1)
    assert made[0].opened == b"/dev/hidraw7" and made[0].nonblocking == 1
    assert mouse.max_linear == 0.1 and mouse.attached and mouse.poll() == NEUTRAL
    mouse.close()
    assert made[0].closed and not mouse.attached

    def gone() -> FakeHid:
        dev = FakeHid()
        dev.unplugged = True
        return dev

    monkeypatch.setattr(hid, "device", gone)
    with pytest.raises(SpaceMouseError, match=r"SpaceNavigator.*hidraw7.*udev") as err:
        SpaceMouse.open(NAVIGATOR)
    assert isinstance(err.value, UserError)


def test_classic_reports_full_scale_signs_and_deadzone() -> None:
    mouse, dev = opened()
    dev.queue += [REST_TRANSLATION, TILT_BACK]
    assert mouse.poll() == NEUTRAL  # at rest, and a small tilt is inside the deadzone
    assert mouse.axes == [0, 0, 0, 0, -30, 0]
    # full scale on every axis: right, towards the user, pressed down; twisted clockwise
    dev.queue += [translation(350, 350, 350), rotation(0, 0, 350)]
    cmd = mouse.poll()
    assert cmd.linear == pytest.approx((LIN, -LIN, -LIN))
    assert cmd.angular == pytest.approx((0.0, 0.0, -ANG))
    assert cmd.grip is None and cmd.speed == 1.0 and cmd.clutch
    # pushed away and lifted, twisted counter-clockwise; beyond full scale is clipped
    dev.queue += [translation(0, -500, -350), rotation(0, 0, -400)]
    cmd = mouse.poll()
    assert cmd.linear == pytest.approx((0.0, LIN, LIN)) and cmd.angular[2] == pytest.approx(ANG)
    # only the newest report of each kind counts; a rotation report keeps the translation
    dev.queue += [translation(350, 0, 0), translation(-175, 0, 0), rotation(0, 0, 0)]
    cmd = mouse.poll()
    assert cmd.linear[0] == pytest.approx(-LIN * (0.5 - DEADZONE) / (1 - DEADZONE))
    assert cmd.angular == (0.0, 0.0, 0.0)
    assert mouse.poll().linear[0] == cmd.linear[0]  # no report: the cap is held as it was
    # just inside the deadzone nothing; past it the output rises from 0 to the maximum
    dev.queue.append(translation(int(DEADZONE * 350 * 0.95), 0, 0))
    assert mouse.poll() == NEUTRAL
    dev.queue.append(translation(round((DEADZONE + (1 - DEADZONE) / 2) * 350), 0, 0))
    assert mouse.poll().linear[0] == pytest.approx(LIN / 2, abs=1e-3)


def test_tilting_the_cap_commands_nothing() -> None:
    mouse, dev = opened()
    dev.queue.append(rotation(350, -350, 0))
    assert mouse.poll() == NEUTRAL


def test_the_13_byte_report_carries_all_six_axes() -> None:
    mouse, dev = opened()
    dev.queue.append(six_axes(350, -350, 0, 10, 20, -350))
    cmd = mouse.poll()
    assert mouse.axes == [350, -350, 0, 10, 20, -350]
    assert cmd.linear == pytest.approx((LIN, LIN, 0.0))
    assert cmd.angular == pytest.approx((0.0, 0.0, ANG))
    dev.queue.append(six_axes(0, 0, 0, 0, 0, 0))
    assert mouse.poll() == NEUTRAL


def test_the_left_button_toggles_the_gripper_on_the_press_edge() -> None:
    mouse, dev = opened()
    dev.queue.append(LEFT_DOWN)
    assert mouse.poll().grip == 1.0  # closes on the press
    assert mouse.poll().grip is None  # held: no new edge
    dev.queue.append(LEFT_DOWN)  # a repeated report of the held button is no edge either
    assert mouse.poll().grip is None
    dev.queue.append(NONE_DOWN)
    assert mouse.poll().grip is None  # the release is not an edge
    dev.queue += [LEFT_DOWN, NONE_DOWN]  # a tap between two polls still counts
    assert mouse.poll().grip == 0.0
    dev.queue += [LEFT_DOWN, NONE_DOWN, LEFT_DOWN, NONE_DOWN]  # two taps in one poll cancel out
    assert mouse.poll().grip is None
    dev.queue.append(RIGHT_DOWN)  # the right button is no gripper press
    assert mouse.poll().grip is None


def test_the_right_button_held_is_precision_speed() -> None:
    mouse, dev = opened()
    dev.queue += [translation(350, 0, 0), RIGHT_DOWN]
    cmd = mouse.poll()
    assert cmd.speed == PRECISION_SPEED and cmd.linear[0] == pytest.approx(LIN)
    assert mouse.poll().speed == PRECISION_SPEED  # still held
    dev.queue.append(BOTH_DOWN)
    cmd = mouse.poll()
    assert cmd.speed == PRECISION_SPEED and cmd.grip == 1.0
    dev.queue.append(NONE_DOWN)
    assert mouse.poll().speed == 1.0


def test_the_pro_layout_uses_its_keys_1_and_2() -> None:
    mouse, dev = opened(PRO)
    menu_fit = bytes([3, 0b11, 0, 0, 0, 0, 0])
    keys_1_2 = bytes([3, 0, 0b0011_0000, 0, 0, 0, 0])  # bits 12 and 13 of the mask
    dev.queue.append(menu_fit)
    cmd = mouse.poll()
    assert cmd.grip is None and cmd.speed == 1.0
    dev.queue.append(keys_1_2)
    cmd = mouse.poll()
    assert cmd.grip == 1.0 and cmd.speed == PRECISION_SPEED


def test_an_unplugged_spacemouse_commands_nothing() -> None:
    mouse, dev = opened()
    dev.queue.append(translation(350, 0, 0))
    assert mouse.poll().linear[0] > 0
    dev.unplugged = True
    assert mouse.poll() == NEUTRAL and not mouse.attached
    assert dev.closed  # the handle of a gone device is released
    dev.unplugged = False
    dev.queue.append(translation(350, 0, 0))
    assert mouse.poll() == NEUTRAL  # and stays neutral: it is not read again
    mouse.close()


@pytest.fixture
def fake_device(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHid]:
    dev = FakeHid()
    import app.devices

    monkeypatch.setattr(app.devices, "spacemice", lambda: [NAVIGATOR])  # what the workspace lists
    monkeypatch.setattr(hid, "device", lambda: dev)
    yield dev


@pytest.mark.gui
def test_a_spacemouse_drives_the_arm_in_the_teleop_workspace(
    qtbot: QtBot,
    teleop_window: MainWindow,  # noqa: F811 (the imported fixture)
    fake_device: FakeHid,
    tmp_path: Path,
) -> None:
    ws, keys = _start(qtbot, teleop_window)
    ws.refresh_devices()
    k = ws.device.findText("spacemouse: SpaceNavigator")
    assert k >= 1
    ws.device.setCurrentIndex(k)
    ws.device.activated.emit(k)  # what choosing it in the box does
    assert isinstance(ws.pad, SpaceMouse) and fake_device.opened == b"/dev/hidraw7"

    def st() -> SessionStatus:
        assert ws.status is not None
        return ws.status

    # seen through the front camera (at +x, looking back along -x): right in the picture is +y
    start = np.array(st().ee)
    keys.keys({Qt.Key.Key_A})  # the keyboard's left (-y): it must not move the arm now
    fake_device.queue.append(translation(350, 0, 0))  # the cap pushed right: right, +y
    qtbot.waitUntil(lambda: st().ee[1] > start[1] + 0.03, timeout=TICK_WAIT_MS)
    keys.keys(set())
    fake_device.queue.append(translation(0, 0, 0))
    moved = np.array(st().ee) - start
    assert abs(moved[0]) < 0.01, "the cap pushed right moved the arm toward or from the camera"
    fake_device.queue += [LEFT_DOWN, NONE_DOWN]  # a tap of the left button closes the jaws
    qtbot.waitUntil(lambda: st().grip == 1.0, timeout=TICK_WAIT_MS)
    # back to the keyboard with the cap still pushed: the device is closed, and what it last
    # commanded does not go on driving the arm
    fake_device.queue.append(translation(350, 0, 0))
    here = np.array(st().ee)
    qtbot.waitUntil(lambda: st().ee[1] > here[1] + 0.02, timeout=TICK_WAIT_MS)
    ws.device.setCurrentIndex(0)
    ws.device.activated.emit(0)
    assert ws.pad is None and fake_device.closed
    qtbot.wait(300)  # stopping (a world at rest ticks slowly: wall time, not ticks)
    here = np.array(st().ee)
    qtbot.wait(600)
    assert abs(st().ee[1] - here[1]) < 0.003, "the SpaceMouse's last push went on after it"
    ws.view.canvas.setFocus()
    qtbot.waitUntil(lambda: ws.view.canvas.hasFocus())
    here = np.array(st().ee)
    keys.keys({Qt.Key.Key_A})  # left in the picture: -y
    qtbot.waitUntil(lambda: st().ee[1] < here[1] - 0.02, timeout=TICK_WAIT_MS)
    keys.keys(set())
