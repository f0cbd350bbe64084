"""3Dconnexion SpaceMice through hidapi (the ``hidapi`` wheel, import name ``hid``), as teleop
:class:`Command` s.

No Qt here: the teleop workspace polls :meth:`SpaceMouse.poll` on the timer it polls a gamepad
on. SDL does not list these devices (their HID usage is "multi-axis controller", neither
joystick nor gamepad), so they are read as raw HID reports. The ``hidapi`` wheel has the hidapi
library compiled in, so no system package is needed; on Linux the device node
(``/dev/hidraw*``) must be readable by the user, which 3Dconnexion's or spacenavd's udev rule
grants. Without the module (the ``devices`` extra), or when enumeration fails, no SpaceMouse is
listed and nothing fails: a missing device is simply not offered.

Reports (USB HID axis convention: +x right, +y towards the user, +z down, rotations right-handed
about those axes; 3 little-endian int16 per report):

==================  ============================================================
report 1, 7 bytes   translation x, y, z (the classic protocol)
report 2, 7 bytes   rotation rx, ry, rz
report 1, 13 bytes  all six axes at once (the newer wireless / Enterprise models)
report 3            the buttons, a little-endian bitmask
==================  ============================================================

The map, in the screen frame the gamepad and the keys give too (``sim.teleop.SCREEN``: as seen
in the picture; the session turns it into world axes through the camera being looked at):

=====================  =========================================================
push the cap right     right in the picture
push it away from you  forward: away from the camera, along the table
lift it                up
twist it               yaw, counter-clockwise seen from above = +z rotation
left button            toggles the gripper on the press edge: closes, then opens
right button (held)    precision: speed :data:`PRECISION_SPEED`
=====================  =========================================================

Tilting the cap commands nothing: a push along one axis always tilts it a little too, and the
other devices steer yaw only. Each axis is divided by its model's full scale (:data:`MODELS`),
clipped to -1 … 1 and shaped with a deadzone of :data:`DEADZONE`, as the gamepad's sticks are.
The Pro models' "left / right" are their numbered keys 1 and 2. A poll drains every report
queued since the last one (non-blocking reads) and keeps the newest axis values, so a press
shorter than a poll period still toggles the gripper.
"""

from __future__ import annotations

import contextlib
import importlib
from dataclasses import dataclass
from typing import Any, Protocol

from annotation import UserError
from app.devices._gamepad import DEADZONE, MAX_ANGULAR, MAX_LINEAR, NEUTRAL, PRECISION_SPEED
from sim.teleop import SCREEN, Command

LOGITECH, CONNEXION = 0x046D, 0x256F  # 3Dconnexion's vendor ids: the Logitech era, then its own
FULL_SCALE = 350.0  # counts at full deflection: what every model in the tables below reports
USAGE_PAGE_DESKTOP, USAGE_MULTI_AXIS = 0x01, 0x08
REPORT_BYTES = 64  # longer than any report of these devices
READS_PER_POLL = 256  # ~4 s of reports at their ~60 Hz: bounded so a flood cannot stall the GUI


@dataclass(frozen=True)
class Model:
    """What differs between models: ``buttons`` are the bits of the button mask used as the
    left (gripper) and right (precision) button."""

    name: str
    full_scale: float = FULL_SCALE
    buttons: tuple[int, int] = (0, 1)


_PRO_KEYS = (12, 13)  # keys "1" and "2" of the Pro layout (bits 0 / 1 are MENU and FIT there)

#: (vendor id, product id) -> model: the 6-DoF devices spacenavd and pyspacemouse know
MODELS: dict[tuple[int, int], Model] = {
    (LOGITECH, 0xC603): Model("SpaceMouse Plus XT"),
    (LOGITECH, 0xC605): Model("CadMan"),
    (LOGITECH, 0xC606): Model("SpaceMouse Classic"),
    (LOGITECH, 0xC621): Model("Spaceball 5000"),
    (LOGITECH, 0xC623): Model("SpaceTraveler"),
    (LOGITECH, 0xC625): Model("SpacePilot"),
    (LOGITECH, 0xC626): Model("SpaceNavigator"),
    (LOGITECH, 0xC627): Model("SpaceExplorer"),
    (LOGITECH, 0xC628): Model("SpaceNavigator for Notebooks"),
    (LOGITECH, 0xC629): Model("SpacePilot Pro", buttons=(17, 18)),
    (LOGITECH, 0xC62B): Model("SpaceMouse Pro", buttons=_PRO_KEYS),
    (LOGITECH, 0xC640): Model("NuLOOQ"),
    (CONNEXION, 0xC62E): Model("SpaceMouse Wireless (cable)"),
    (CONNEXION, 0xC62F): Model("SpaceMouse Wireless (receiver)"),
    (CONNEXION, 0xC631): Model("SpaceMouse Pro Wireless (cable)", buttons=_PRO_KEYS),
    (CONNEXION, 0xC632): Model("SpaceMouse Pro Wireless (receiver)", buttons=_PRO_KEYS),
    (CONNEXION, 0xC633): Model("SpaceMouse Enterprise", buttons=_PRO_KEYS),
    (CONNEXION, 0xC635): Model("SpaceMouse Compact"),
    (CONNEXION, 0xC636): Model("SpaceMouse Module"),
    (CONNEXION, 0xC638): Model("SpaceMouse Pro Wireless (Bluetooth)", buttons=_PRO_KEYS),
    (CONNEXION, 0xC63A): Model("SpaceMouse Wireless (Bluetooth)"),
    (CONNEXION, 0xC641): Model("SpaceMouse USB"),
    # whichever SpaceMouse is paired to it: the two-button layout works on every one of them
    (CONNEXION, 0xC652): Model("3Dconnexion Universal Receiver"),
}
#: 3Dconnexion products that are not 6-DoF devices (CadMice, keyboards, numpads; spacenavd's list)
NOT_SPACEMICE = frozenset(
    (CONNEXION, pid)
    for pid in (0xC62C, 0xC650, 0xC651, 0xC654, 0xC655, 0xC656, 0xC657, 0xC658, 0xC664,
                0xC665, 0xC668)
)  # fmt: skip


class SpaceMouseError(UserError):
    """A SpaceMouse that cannot be used: no hidapi, or the device cannot be opened."""


@dataclass(frozen=True)
class SpaceMouseInfo:
    """One attached device: ``path`` is its HID interface, what :meth:`SpaceMouse.open` opens."""

    name: str
    path: bytes
    vendor_id: int
    product_id: int
    model: Model


class HidDevice(Protocol):
    """The part of ``hid.device`` a :class:`SpaceMouse` reads through."""

    def read(self, max_length: int, timeout_ms: int = 0) -> list[int]: ...

    def close(self) -> None: ...


def _hid() -> Any:
    """The ``hid`` module of the hidapi wheel, or None. Another package also installs a ``hid``
    module (a ctypes binding with ``hid.Device``): without ``hid.device`` it is not this one."""
    try:
        mod = importlib.import_module("hid")
    except (ImportError, OSError):  # OSError: the compiled module could not load its libraries
        return None
    return mod if hasattr(mod, "device") and hasattr(mod, "enumerate") else None


def available() -> bool:
    """Whether SpaceMice can be listed at all (the hidapi module is there)."""
    return _hid() is not None


def _model(vid: int, pid: int, product: str, multi_axis: bool) -> Model | None:
    known = MODELS.get((vid, pid))
    if known is not None:
        return known
    if vid == CONNEXION and multi_axis and (vid, pid) not in NOT_SPACEMICE:
        # a model newer than the table: 3Dconnexion's own vendor id and a 6-DoF usage
        return Model(product or f"3Dconnexion {pid:04x}")
    return None


def spacemice() -> list[SpaceMouseInfo]:
    """Every 3Dconnexion 6-DoF device attached now; empty without hidapi or when listing fails."""
    hid = _hid()
    if hid is None:
        return []
    try:
        found = list(hid.enumerate())
    except (OSError, RuntimeError, ValueError):
        return []
    out: list[SpaceMouseInfo] = []
    seen: set[tuple[int, int, str]] = set()
    for d in found:
        vid, pid = int(d.get("vendor_id") or 0), int(d.get("product_id") or 0)
        page, usage = int(d.get("usage_page") or 0), int(d.get("usage") or 0)
        if page or usage:  # the backend reads the report descriptor: take the 6-DoF interface
            if (page, usage) != (USAGE_PAGE_DESKTOP, USAGE_MULTI_AXIS):
                continue  # e.g. the CadMouse on a Universal Receiver, a keyboard interface
            multi_axis = True
        else:
            multi_axis = False  # no usage known: only a model of the table, once per device
        product = str(d.get("product_string") or "").strip()
        model = _model(vid, pid, product, multi_axis)
        if model is None:
            continue
        key = (vid, pid, str(d.get("serial_number") or ""))
        if not multi_axis and key in seen:
            continue
        seen.add(key)
        path = d.get("path") or b""
        out.append(
            SpaceMouseInfo(
                name=model.name,
                path=path if isinstance(path, bytes) else str(path).encode(),
                vendor_id=vid,
                product_id=pid,
                model=model,
            )
        )
    return out


def _int16s(data: bytes) -> list[int]:
    return [int.from_bytes(data[k : k + 2], "little", signed=True) for k in range(0, len(data), 2)]


def _shape(value: float, full_scale: float) -> float:
    """An axis reading in -1 … 1 of full scale with the deadzone cut out and the rest rescaled."""
    v = max(-1.0, min(1.0, value / full_scale))
    mag = abs(v)
    if mag <= DEADZONE:
        return 0.0
    return (mag - DEADZONE) / (1.0 - DEADZONE) * (1.0 if v > 0 else -1.0)


class SpaceMouse:
    """An opened SpaceMouse; :meth:`poll` turns its reports into one :class:`Command`."""

    def __init__(
        self, info: SpaceMouseInfo, handle: HidDevice, *, max_linear: float = MAX_LINEAR,
        max_angular: float = MAX_ANGULAR,
    ) -> None:  # fmt: skip
        self.info = info
        self.max_linear, self.max_angular = float(max_linear), float(max_angular)
        self.closed = False  # the gripper as this device's toggle last set it
        self.axes = [0, 0, 0, 0, 0, 0]  # the newest HID counts: x, y, z, rx, ry, rz
        self.buttons = 0  # the newest button mask
        self._handle: HidDevice | None = handle
        self._attached = True

    @classmethod
    def open(
        cls, info: SpaceMouseInfo, *, max_linear: float = MAX_LINEAR,
        max_angular: float = MAX_ANGULAR,
    ) -> SpaceMouse:  # fmt: skip
        """Open ``info`` (from :func:`spacemice`) for non-blocking reads. ``max_*`` are the
        velocities at full deflection: pass the teleop's."""
        hid = _hid()
        if hid is None:
            raise SpaceMouseError("a SpaceMouse needs hidapi: install the `devices` extra")
        handle = hid.device()
        try:
            handle.open_path(info.path)
            handle.set_nonblocking(1)
        except OSError as err:
            raise SpaceMouseError(
                f"SpaceMouse {info.name!r} ({info.path.decode(errors='replace')}) cannot be "
                f"opened: {err} (on Linux its /dev/hidraw node must be readable: a udev rule)"
            ) from err
        return cls(info, handle, max_linear=max_linear, max_angular=max_angular)

    @property
    def attached(self) -> bool:
        """False once the device is unplugged (a read failed) or closed."""
        return self._handle is not None and self._attached

    def poll(self) -> Command:
        """The command the device gives now, in the screen frame. An unplugged or closed device
        gives :data:`~app.devices._gamepad.NEUTRAL` (the arm holds where it is)."""
        handle = self._handle
        if handle is None or not self._attached:
            return NEUTRAL
        presses = 0
        try:
            for _ in range(READS_PER_POLL):
                report = handle.read(REPORT_BYTES)
                if not report:
                    break
                presses += self._take(bytes(report))
        except OSError:  # unplugged: hidapi's read fails from then on
            self._attached = False
            self.close()
            return NEUTRAL
        grip: float | None = None
        if presses % 2:  # two taps within one poll cancel out, as on the gamepad
            self.closed = not self.closed
            grip = 1.0 if self.closed else 0.0
        fs = self.info.model.full_scale
        x, y, z, _rx, _ry, rz = (_shape(float(v), fs) for v in self.axes)
        lin, ang = self.max_linear, self.max_angular
        return Command(
            linear=(x * lin, -y * lin, -z * lin),  # HID's y points at the user, its z down
            angular=(0.0, 0.0, -rz * ang),  # HID's rz turns clockwise seen from above
            grip=grip,
            speed=PRECISION_SPEED if self.buttons >> self.info.model.buttons[1] & 1 else 1.0,
            frame=SCREEN,
        )

    def _take(self, report: bytes) -> int:
        """Keep what one report says; the gripper button's press edges in it."""
        rid, body = report[0], report[1:]
        if rid == 1 and len(body) >= 12:
            self.axes[:] = _int16s(body[:12])
        elif rid == 1 and len(body) >= 6:
            self.axes[0:3] = _int16s(body[:6])
        elif rid == 2 and len(body) >= 6:
            self.axes[3:6] = _int16s(body[:6])
        elif rid == 3:
            mask = int.from_bytes(body, "little")
            grip_bit = self.info.model.buttons[0]
            pressed = mask >> grip_bit & 1 and not self.buttons >> grip_bit & 1
            self.buttons = mask
            return 1 if pressed else 0
        return 0  # other reports (LED, battery level) say nothing about motion

    def close(self) -> None:
        """Release the device (idempotent)."""
        if self._handle is None:
            return
        with contextlib.suppress(OSError):  # already gone with the device
            self._handle.close()
        self._handle = None
