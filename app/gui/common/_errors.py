"""The GUI's one error boundary.

Installed as ``sys.excepthook`` by :func:`app.gui.run_gui`: PySide6 hands every exception that
escapes a slot, a virtual override or a background result (the bridge's default failure path)
to it. A :class:`annotation.UserError` is shown as a warning with its message (it names the file,
field or id); anything else is a bug: its traceback goes to a log file and the box names it.
The box opens without a nested event loop, so the window keeps drawing behind it.
"""

from __future__ import annotations

import sys
from types import TracebackType

from PySide6.QtWidgets import QMessageBox, QWidget

from annotation import UserError
from app._bug_report import bug_message, write_bug_report


class ErrorBoundary:
    """Shows the user errors and the bugs that reach the event loop; one per application."""

    def __init__(self, window: QWidget | None = None) -> None:
        self.window = window
        self.last_box: QMessageBox | None = None
        self._previous = sys.excepthook  # install() takes the hook in force then

    def install(self) -> None:
        self._previous = sys.excepthook
        sys.excepthook = self.excepthook

    def uninstall(self) -> None:
        sys.excepthook = self._previous

    def excepthook(
        self,
        etype: type[BaseException],
        exc: BaseException,
        tb: TracebackType | None,
    ) -> None:
        if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: not ours to show
            self._previous(etype, exc, tb)
            return
        self.show(exc)

    def show(self, exc: BaseException) -> QMessageBox:
        if isinstance(exc, UserError):
            box = QMessageBox(QMessageBox.Icon.Warning, "Cannot do that", str(exc))
        else:
            path = write_bug_report(exc, where="the workbench window")
            box = QMessageBox(
                QMessageBox.Icon.Critical, "A bug in the workbench", bug_message(exc, path)
            )
        if self.window is not None:
            box.setParent(self.window, box.windowFlags())
        box.open()
        self.last_box = box
        return box
