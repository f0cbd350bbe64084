"""Teleop input devices, with no Qt: gamepads through SDL2 (:mod:`._gamepad`) and 3Dconnexion
SpaceMice through hidapi (:mod:`._spacemouse`), each turned into :class:`sim.teleop.Command` s
in the screen frame (right, forward, up as seen in the picture; ``sim.teleop.to_world``).
A device whose library or hardware is missing is simply not listed."""

from app.devices._gamepad import (
    DEADZONE,
    MAX_ANGULAR,
    MAX_LINEAR,
    NEUTRAL,
    PRECISION_SPEED,
    Gamepad,
    GamepadError,
    GamepadInfo,
    gamepads,
)
from app.devices._gamepad import available as sdl_available
from app.devices._spacemouse import SpaceMouse, SpaceMouseError, SpaceMouseInfo, spacemice
from app.devices._spacemouse import available as hid_available

__all__ = [
    "DEADZONE",
    "MAX_ANGULAR",
    "MAX_LINEAR",
    "NEUTRAL",
    "PRECISION_SPEED",
    "Gamepad",
    "GamepadError",
    "GamepadInfo",
    "SpaceMouse",
    "SpaceMouseError",
    "SpaceMouseInfo",
    "gamepads",
    "hid_available",
    "sdl_available",
    "spacemice",
]
