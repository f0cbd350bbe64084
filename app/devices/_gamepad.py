"""Gamepads through SDL2 (PySDL2 with the SDL2 build of pysdl2-dll), as teleop :class:`Command` s.

No Qt here: the teleop workspace polls :meth:`Gamepad.poll` once per control step, on the
thread it created the pad on (SDL's joystick calls are not meant to be spread over threads).

SDL is imported lazily and only its joystick and game-controller subsystems are started (no
video, so it works headless and needs no window focus; background events are allowed for the
same reason). Without PySDL2 (the ``devices`` extra), or when SDL cannot start, no gamepad is
listed and nothing fails: a missing device is simply not offered.

The map (SDL GameController names; SDL normalises every pad it has a mapping for to them), in
the screen frame (``sim.teleop.SCREEN``: as seen in the picture, the keys' frame too; the
session turns it into world axes through the camera being looked at):

=====================  =========================================================
left stick x / y       right / forward (stick right = right in the picture, stick
                       up = away from the camera, along the table)
right stick y          up (stick up = up)
right stick x          yaw (stick right = clockwise seen from above, -z rotation)
A (south button)       toggles the gripper on the press edge: closes, then opens
right bumper (held)    precision: speed :data:`PRECISION_SPEED`
left bumper (held)     clutch released: the arm holds, every input is ignored
=====================  =========================================================

A joystick SDL has no mapping for is read raw: axes 0 / 1 the left stick, 2 / 3 the right
stick x / y, button 0 the gripper, 4 the clutch, 5 precision (the generic HID order most
unmapped pads report). Each stick axis has a deadzone of :data:`DEADZONE` of its travel and is
rescaled past it, so the output rises from 0 at the deadzone's edge to the maximum at full
deflection. Presses are taken from SDL's event queue, so a tap shorter than a poll period still
toggles the gripper. This module owns SDL's event queue in the process: each poll drains it.

SpaceMouse: SDL does not list 3Dconnexion devices (their HID usage is "multi-axis controller",
neither joystick nor gamepad), so :mod:`app.gui.teleop._spacemouse` reads them as raw HID
reports through the ``hidapi`` wheel (hidapi compiled in: no system library), with this
module's deadzone, precision speed and maxima.
"""

from __future__ import annotations

import ctypes
import warnings
from dataclasses import dataclass
from typing import Any

from annotation import UserError
from sim.teleop import SCREEN, Command

DEADZONE = 0.15  # of an axis' travel: a resting stick reads up to ~0.1 on worn pads
PRECISION_SPEED = 0.2  # speed scale with the precision button held
AXIS_FULL = 32767.0  # SDL axis range is -32768 … 32767
MAX_LINEAR = 0.25  # m/s at full deflection (the teleop core's default maximum)
MAX_ANGULAR = 1.5  # rad/s
_EVENTS_PER_READ = 64
NEUTRAL = Command(frame=SCREEN)  # what a pad at rest, unplugged or closed gives: the arm holds

# raw joystick layout: axes (lx, ly, rx, ry) and buttons (grip, clutch, precision)
_RAW_AXES = (0, 1, 2, 3)
_RAW_GRIP, _RAW_CLUTCH, _RAW_PRECISION = 0, 4, 5


class GamepadError(UserError):
    """A gamepad that cannot be used: no SDL, no device at that index, or it cannot open."""


@dataclass(frozen=True)
class GamepadInfo:
    """One attached device: ``index`` is what :meth:`Gamepad.open` takes (it changes as devices
    come and go), ``instance_id`` stays the device's while it is attached, ``guid`` names the
    model (SDL's 32 hex digits), ``mapped`` says SDL has a game-controller mapping for it."""

    name: str
    index: int
    instance_id: int
    guid: str
    mapped: bool


class _SDL:
    """SDL started once per process; also the button presses read from its queue, per device
    (one queue serves every open pad, so each poll takes its own and keeps the others')."""

    def __init__(self, sdl2: Any) -> None:
        self.sdl2 = sdl2
        self.presses: dict[int, list[int]] = {}
        self._events = (sdl2.SDL_Event * _EVENTS_PER_READ)()

    def read_events(self) -> None:
        s = self.sdl2
        s.SDL_JoystickUpdate()  # also updates game controllers; no video, so no PumpEvents
        s.SDL_PumpEvents()
        while True:
            n = int(s.SDL_PeepEvents(self._events, _EVENTS_PER_READ, s.SDL_GETEVENT,
                                     s.SDL_FIRSTEVENT, s.SDL_LASTEVENT))  # fmt: skip
            for ev in self._events[: max(n, 0)]:
                if ev.type == s.SDL_CONTROLLERBUTTONDOWN:
                    self.presses.setdefault(int(ev.cbutton.which), []).append(
                        _controller_key(int(ev.cbutton.button))
                    )
                elif ev.type == s.SDL_JOYBUTTONDOWN:
                    self.presses.setdefault(int(ev.jbutton.which), []).append(
                        int(ev.jbutton.button)
                    )
            if n < _EVENTS_PER_READ:
                return

    def take(self, instance_id: int) -> list[int]:
        return self.presses.pop(instance_id, [])


def _controller_key(button: int) -> int:
    """Controller buttons are stored offset so they never collide with raw joystick ones
    (a mapped pad reports both kinds of event for one press)."""
    return 1000 + button


_state: _SDL | None = None
_tried = False


def _sdl() -> _SDL | None:
    """SDL, started on first use; None when PySDL2 or its library is missing or SDL fails."""
    global _state, _tried
    if _tried:
        return _state
    _tried = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pysdl2 announces which SDL binary it found
            import sdl2
    except (ImportError, RuntimeError, OSError):  # RuntimeError: PySDL2 found no SDL2 library
        return None
    sdl2.SDL_SetHint(sdl2.SDL_HINT_JOYSTICK_ALLOW_BACKGROUND_EVENTS, b"1")
    # SDL would otherwise turn SIGINT/SIGTERM into SDL_QUIT events, and Ctrl-C in the
    # terminal that started the workbench would stop working
    sdl2.SDL_SetHint(sdl2.SDL_HINT_NO_SIGNAL_HANDLERS, b"1")
    if sdl2.SDL_InitSubSystem(sdl2.SDL_INIT_JOYSTICK | sdl2.SDL_INIT_GAMECONTROLLER) != 0:
        return None
    _state = _SDL(sdl2)
    return _state


def available() -> bool:
    """Whether SDL could be started (gamepads can be listed at all)."""
    return _sdl() is not None


def gamepads() -> list[GamepadInfo]:
    """Every joystick or game controller attached now; empty without SDL."""
    sdl = _sdl()
    if sdl is None:
        return []
    s = sdl.sdl2
    s.SDL_JoystickUpdate()  # notices devices added or removed since the last call
    out = []
    for k in range(int(s.SDL_NumJoysticks())):
        buf = ctypes.create_string_buffer(33)
        s.SDL_JoystickGetGUIDString(s.SDL_JoystickGetDeviceGUID(k), buf, 33)
        name = s.SDL_JoystickNameForIndex(k)
        out.append(
            GamepadInfo(
                name=name.decode("utf-8", "replace") if name else f"joystick {k}",
                index=k,
                instance_id=int(s.SDL_JoystickGetDeviceInstanceID(k)),
                guid=buf.value.decode("ascii"),
                mapped=bool(s.SDL_IsGameController(k)),
            )
        )
    return out


def _shape(value: float) -> float:
    """An axis reading in -1 … 1 with the deadzone cut out and the rest rescaled."""
    v = max(-1.0, min(1.0, value / AXIS_FULL))
    mag = abs(v)
    if mag <= DEADZONE:
        return 0.0
    return (mag - DEADZONE) / (1.0 - DEADZONE) * (1.0 if v > 0 else -1.0)


class Gamepad:
    """An opened gamepad; :meth:`poll` turns its state into one :class:`Command`."""

    def __init__(
        self, sdl: _SDL, info: GamepadInfo, handle: Any, *, max_linear: float, max_angular: float
    ) -> None:
        self.info = info
        self.max_linear, self.max_angular = float(max_linear), float(max_angular)
        self.closed = False  # the gripper as this pad's toggle last set it
        self._sdl, self._handle = sdl, handle

    @classmethod
    def open(
        cls, index: int, *, max_linear: float = MAX_LINEAR, max_angular: float = MAX_ANGULAR
    ) -> Gamepad:
        """Open the device at ``index`` of :func:`gamepads` as a game controller when SDL has a
        mapping for it, else as a raw joystick. ``max_*`` are the velocities at full stick:
        pass the teleop's, so full deflection is its maximum."""
        sdl = _sdl()
        if sdl is None:
            raise GamepadError("gamepads need SDL2: install the `devices` extra (PySDL2)")
        found = [g for g in gamepads() if g.index == index]
        if not found:
            raise GamepadError(f"no gamepad at index {index} ({len(gamepads())} attached)")
        info = found[0]
        s = sdl.sdl2
        handle = s.SDL_GameControllerOpen(index) if info.mapped else s.SDL_JoystickOpen(index)
        if not handle:
            raise GamepadError(f"gamepad {info.name!r} cannot be opened: {s.SDL_GetError()!r}")
        sdl.take(info.instance_id)  # presses from before it was opened are not commands
        return cls(sdl, info, handle, max_linear=max_linear, max_angular=max_angular)

    @property
    def attached(self) -> bool:
        """False once the device is unplugged (or the pad closed)."""
        if self._handle is None:
            return False
        s = self._sdl.sdl2
        if self.info.mapped:
            return bool(s.SDL_GameControllerGetAttached(self._handle))
        return bool(s.SDL_JoystickGetAttached(self._handle))

    def poll(self) -> Command:
        """The command the pad gives now, in the screen frame. An unplugged or closed pad gives
        :data:`NEUTRAL` (the arm holds where it is)."""
        if self._handle is None:
            return NEUTRAL
        self._sdl.read_events()
        presses = self._sdl.take(self.info.instance_id)
        if not self.attached:
            return NEUTRAL
        if self.info.mapped:
            lx, ly, rx, ry, clutch_held, precise, grip_key = self._mapped()
        else:
            lx, ly, rx, ry, clutch_held, precise, grip_key = self._raw()
        if clutch_held:  # a grip press now is dropped, not kept for later
            return Command(clutch=False, frame=SCREEN)
        grip: float | None = None
        if presses.count(grip_key) % 2:  # two taps within one poll cancel out
            self.closed = not self.closed
            grip = 1.0 if self.closed else 0.0
        lin, ang = self.max_linear, self.max_angular
        return Command(
            linear=(lx * lin, -ly * lin, -ry * lin),  # SDL's y axes grow downwards
            angular=(0.0, 0.0, -rx * ang),
            grip=grip,
            speed=PRECISION_SPEED if precise else 1.0,
            frame=SCREEN,
        )

    def _mapped(self) -> tuple[float, float, float, float, bool, bool, int]:
        s, h = self._sdl.sdl2, self._handle
        ax = [_shape(float(s.SDL_GameControllerGetAxis(h, a))) for a in range(4)]
        lb = bool(s.SDL_GameControllerGetButton(h, s.SDL_CONTROLLER_BUTTON_LEFTSHOULDER))
        rb = bool(s.SDL_GameControllerGetButton(h, s.SDL_CONTROLLER_BUTTON_RIGHTSHOULDER))
        return ax[0], ax[1], ax[2], ax[3], lb, rb, _controller_key(s.SDL_CONTROLLER_BUTTON_A)

    def _raw(self) -> tuple[float, float, float, float, bool, bool, int]:
        s, h = self._sdl.sdl2, self._handle
        n_axes, n_buttons = int(s.SDL_JoystickNumAxes(h)), int(s.SDL_JoystickNumButtons(h))
        ax = [_shape(float(s.SDL_JoystickGetAxis(h, a))) if a < n_axes else 0.0
              for a in _RAW_AXES]  # fmt: skip

        def held(b: int) -> bool:
            return b < n_buttons and bool(s.SDL_JoystickGetButton(h, b))

        return ax[0], ax[1], ax[2], ax[3], held(_RAW_CLUTCH), held(_RAW_PRECISION), _RAW_GRIP

    def close(self) -> None:
        """Release the device (idempotent)."""
        if self._handle is None:
            return
        s = self._sdl.sdl2
        if self.info.mapped:
            s.SDL_GameControllerClose(self._handle)
        else:
            s.SDL_JoystickClose(self._handle)
        self._handle = None
