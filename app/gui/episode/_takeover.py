"""The keys that drive the arm while a person has taken it over in a live physics episode.

As in the Teleop workspace, as seen in the picture of the camera shown (``sim.teleop``'s screen
frame): A/D left/right, W/S away/toward, R/F up/down, Q/E yaw, Space opens or closes the jaws.
The keys work wherever the
person is looking: on the live panel and on the MuJoCo view (its picture, its camera list, its
check boxes), which is where the eyes are while driving. :class:`TakeoverKeys` filters those
widgets' key events; while the arm is taken it keeps the keys to itself (it accepts their
shortcut override, so no window shortcut — Space for play, the arrows for the playhead — fires),
and otherwise lets every key through untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from sim.review import LiveRun

TAKEOVER_LINEAR = 0.1  # m/s while a direction key is held: slow enough to place by eye
TAKEOVER_ANGULAR = 0.8  # rad/s while Q or E is held
#: key → (axis, sign): axes 0–2 are the screen's right, forward (away), up; 3 is yaw
TAKEOVER_KEYS = {
    Qt.Key.Key_D: (0, 1.0), Qt.Key.Key_A: (0, -1.0), Qt.Key.Key_W: (1, 1.0),
    Qt.Key.Key_S: (1, -1.0), Qt.Key.Key_R: (2, 1.0), Qt.Key.Key_F: (2, -1.0),
    Qt.Key.Key_Q: (3, 1.0), Qt.Key.Key_E: (3, -1.0),
}  # fmt: skip


class TakeoverKeys(QObject):
    """Turns held keys into the person's :class:`~sim.teleop.Command` for the live run."""

    def __init__(self, live: Callable[[], LiveRun | None],
                 view: Callable[[], tuple[str, Any]] | None = None) -> None:  # fmt: skip
        """``view()``: the camera shown and the free camera (or None), for screen motion."""
        super().__init__()
        self._live = live
        self._view = view
        self.held: set[int] = set()
        self.grip: float | None = None  # None: keep the jaws as they are

    def watch(self, widget: QWidget) -> None:
        """Drive from ``widget`` and everything in it."""
        widget.installEventFilter(self)
        for child in widget.findChildren(QWidget):
            child.installEventFilter(self)

    def reset(self) -> None:
        self.held.clear()
        self.grip = None

    @property
    def active(self) -> bool:
        live = self._live()
        return live is not None and live.taken_over

    def eventFilter(self, obj: QObject, e: QEvent) -> bool:
        if not isinstance(e, QKeyEvent) or not self.active:
            return False
        ours = e.key() in TAKEOVER_KEYS or e.key() == Qt.Key.Key_Space
        if not ours or e.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            return False
        if e.type() == QEvent.Type.ShortcutOverride:
            e.accept()  # ours while the person has the arm: no window shortcut fires
            return True
        if e.type() == QEvent.Type.KeyPress:
            if not e.isAutoRepeat():
                self._press(e.key())
            return True
        if e.type() == QEvent.Type.KeyRelease:
            if not e.isAutoRepeat() and e.key() in TAKEOVER_KEYS:
                self.held.discard(e.key())
                self.send()
            return True
        return False

    def _press(self, key: int) -> None:
        if key == Qt.Key.Key_Space:
            live = self._live()
            teleop = live.teleop if live is not None else None
            now = self.grip if self.grip is not None else (teleop.grip if teleop else 0.0)
            self.grip = 0.0 if now > 0.5 else 1.0
        else:
            self.held.add(key)
        self.send()

    def send(self) -> None:
        from sim.teleop import SCREEN, Command  # mujoco-heavy: only once someone drives

        axes = [0.0, 0.0, 0.0, 0.0]
        for key in self.held:
            axis, sign = TAKEOVER_KEYS[Qt.Key(key)]
            axes[axis] += sign
        lin = TAKEOVER_LINEAR
        cmd = Command(linear=(axes[0] * lin, axes[1] * lin, axes[2] * lin),
                      angular=(0.0, 0.0, axes[3] * TAKEOVER_ANGULAR), grip=self.grip,
                      frame=SCREEN)  # fmt: skip
        live = self._live()
        if live is not None:
            if self._view is not None:
                live.set_view(*self._view())
            live.command(cmd)
