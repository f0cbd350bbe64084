"""The GUI's one error boundary.

Installed as ``sys.excepthook`` by :func:`app.gui.run_gui`: PySide6 hands every exception that
escapes a slot, a virtual override or a background result (the bridge's default failure path)
to it. A :class:`annotation.UserError` is shown as a warning with its message (it names the file,
field or id); so is a full disk, however deep it was raised (the user frees space and tries
again); anything else is a bug: its traceback goes to a log file and the box names it.
The box opens without a nested event loop, so the window keeps drawing behind it.

Every text the boundary shows, and the bug report it writes, goes through
:func:`annotation.redact`, and :meth:`ErrorBoundary.install` puts the same redaction on the log
records the GUI's threads write: an endpoint's error may quote the API key it refused.
"""

from __future__ import annotations

import sys
from types import TracebackType

from PySide6.QtWidgets import QMessageBox, QWidget

from annotation import UserError, disk_full, redact, redact_logging
from app._bug_report import bug_message, disk_full_message, write_bug_report


def error_text(exc: BaseException) -> tuple[str, str, bool]:
    """What the boundary shows for ``exc``: a title, the text, and whether it is a bug (then
    its traceback was written to a bug report, which the text names)."""
    if isinstance(exc, UserError):
        return "Cannot do that", redact(str(exc)), False
    if disk_full(exc):
        return "The disk is full", disk_full_message(exc), False
    path = write_bug_report(exc, where="the workbench window")
    return "A bug in the workbench", bug_message(exc, path), True


class ErrorBoundary:
    """Shows the user errors and the bugs that reach the event loop; one per application."""

    def __init__(self, window: QWidget | None = None) -> None:
        self.window = window
        self.last_box: QMessageBox | None = None
        self._previous = sys.excepthook  # install() takes the hook in force then

    def install(self) -> None:
        self._previous = sys.excepthook
        sys.excepthook = self.excepthook
        redact_logging()

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
        title, text, bug = error_text(exc)
        icon = QMessageBox.Icon.Critical if bug else QMessageBox.Icon.Warning
        box = QMessageBox(icon, title, text)
        if self.window is not None:
            box.setParent(self.window, box.windowFlags())
        box.open()
        self.last_box = box
        return box
