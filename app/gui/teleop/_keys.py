"""The keyboard as a teleoperation device: held keys become a :class:`~sim.teleop.Command`.

A robosuite-like map (:data:`KEY_HELP`), relative to the picture: W/S forward/back (away from
the camera and toward it, along the table), A/D left/right as seen in the view, R/F up/down,
Q/E yaw (Q counter-clockwise seen from above), Space toggles the gripper, Shift held =
precision speed, Ctrl held = clutch released (the arm holds whatever else is pressed), Enter =
next demonstration, Backspace = re-record, Esc = stop recording. The command is in the screen
frame (``sim.teleop.SCREEN``: right, forward, up), the one a gamepad's sticks and a SpaceMouse's
cap give too; the session turns it into world axes through the camera being looked at, so D
moves the arm right in the picture whichever camera that is.

The keys are read by an event filter on the teleop view only, so they are live only while that
view has the focus: there they are taken before the window's shortcuts see them (a key press
is first offered to shortcuts as a ``ShortcutOverride``; accepting it makes Qt deliver the key to
the view instead), so Ctrl+Q with the clutch released never quits and W never reaches a viewer
action; everywhere else every shortcut works as before. Losing the focus releases every key, so
the arm never keeps moving on a key whose release went to another window.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent

from sim.teleop import SCREEN, Command

K = Qt.Key
FAST, SLOW = 1.0, 0.2  # speed scales: a key held, and with Shift (precision)
#: key -> (component, sign) of the screen-frame command: 0 right, 1 forward, 2 up (linear),
#: 5 about up (yaw)
MOTION: dict[Qt.Key, tuple[int, float]] = {
    K.Key_D: (0, 1.0), K.Key_A: (0, -1.0), K.Key_W: (1, 1.0), K.Key_S: (1, -1.0),
    K.Key_R: (2, 1.0), K.Key_F: (2, -1.0), K.Key_Q: (5, 1.0), K.Key_E: (5, -1.0),
}  # fmt: skip
DECISIONS: dict[Qt.Key, str] = {
    K.Key_Return: "next", K.Key_Enter: "next", K.Key_Backspace: "rerecord",
    K.Key_Escape: "stop",
}  # fmt: skip
TEACHING = (*MOTION, *DECISIONS, K.Key_Space, K.Key_Shift, K.Key_Control)

KEY_HELP = (
    "Click the view, then, as seen in the picture: W/S forward/back · A/D left/right · "
    "R/F up/down · Q/E yaw · Space gripper open/close · "
    "hold Shift: precision speed · hold Ctrl: clutch released (the arm holds) · "
    "Enter: next demonstration · Backspace: re-record · Esc: stop recording"
)


class KeyboardDevice(QObject):
    """Install on the view (:meth:`attach`); ``changed(command)`` on every change of the keys,
    ``decided(action)`` for Enter / Backspace / Esc."""

    def __init__(
        self,
        changed: Callable[[Command], None],
        decided: Callable[[str], None],
    ) -> None:
        super().__init__()
        self.changed, self.decided = changed, decided
        self.max_linear, self.max_angular = 0.25, 1.5  # the session's, once it is ready
        self.held: set[Qt.Key] = set()
        self.shift = False
        self.ctrl = False
        self.grip = 0.0  # 0 open, 1 closed: Space toggles it
        self.grip_known = False  # until the first Space, the grip is left as the arm has it

    def attach(self, widget: QObject) -> None:
        widget.installEventFilter(self)

    def command(self) -> Command:
        v = [0.0] * 6
        for key in self.held:
            i, sign = MOTION[key]
            v[i] += sign * (self.max_angular if i >= 3 else self.max_linear)
        return Command(
            linear=(v[0], v[1], v[2]),
            angular=(v[3], v[4], v[5]),
            grip=self.grip if self.grip_known else None,
            speed=SLOW if self.shift else FAST,
            clutch=not self.ctrl,
            frame=SCREEN,
        )

    def release_all(self) -> None:
        if self.held or self.shift or self.ctrl:
            self.held.clear()
            self.shift = self.ctrl = False
            self.changed(self.command())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.FocusOut:
            self.release_all()
            return False
        if kind not in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease,
                        QEvent.Type.ShortcutOverride):  # fmt: skip
            return False
        assert isinstance(event, QKeyEvent)
        key = Qt.Key(event.key())
        if key not in TEACHING:
            return False  # not a teleop key: shortcuts and the view's own keys work as ever
        if kind == QEvent.Type.ShortcutOverride:
            event.accept()  # the key comes to the view as a key press, not to a shortcut
            return True
        mods = event.modifiers()
        shift = bool(mods & Qt.KeyboardModifier.ShiftModifier)
        ctrl = bool(mods & Qt.KeyboardModifier.ControlModifier)
        press = kind == QEvent.Type.KeyPress
        # the modifier keys' own events carry the state from before them: take them literally
        self.shift = press if key == K.Key_Shift else shift
        self.ctrl = press if key == K.Key_Control else ctrl
        if event.isAutoRepeat():
            return True
        if key in MOTION:
            if press:
                self.held.add(key)
            else:
                self.held.discard(key)
        elif key == K.Key_Space and press:
            self.grip, self.grip_known = (0.0 if self.grip >= 0.5 else 1.0), True
        elif key in DECISIONS and press:
            self.decided(DECISIONS[key])
        self.changed(self.command())
        return True
