"""The teleop workspace of the window: drive an arm by hand and record demonstrations."""

from __future__ import annotations

from app.gui.teleop._keys import KEY_HELP, KeyboardDevice
from app.gui.teleop._workspace import TeleopWorkspace

__all__ = ["KEY_HELP", "KeyboardDevice", "TeleopWorkspace"]
