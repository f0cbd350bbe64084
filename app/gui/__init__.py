"""The PySide6 workbench window. Import this only when a window is wanted."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from annotation import UserError


class NoDisplayError(UserError):
    """The window was asked for on a machine with no display to show it on."""


def check_display() -> None:
    """Refuse, in words, to open a window where Qt would abort the process without one."""
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith(("xcb", "wayland")):
        return  # offscreen, vnc, eglfs …: the user chose a platform that needs no display
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        raise NoDisplayError(
            "no display: `workbench gui` needs an X11 or Wayland session (DISPLAY is not set); "
            "on a remote machine use `ssh -X`, or `xvfb-run workbench gui` for a virtual one"
        )


def run_gui(project: Path | None = None, *, then: Callable[[Any], None] | None = None) -> int:
    """Open the workbench (on ``project`` if given) and run the event loop; ``then(window)``
    runs once the project is open (``workbench teleop`` picks its workspace with it)."""
    from storage import load_settings

    settings = load_settings()  # a bad WB_ setting is refused before any window appears
    check_display()

    from PySide6.QtWidgets import QApplication

    from app.gui._main_window import MainWindow
    from app.gui.common import ErrorBoundary

    app = QApplication.instance() or QApplication(sys.argv)
    app.setApplicationName("Rollout Workbench")
    app.setOrganizationName("rollout-workbench")
    window = MainWindow(settings)
    boundary = ErrorBoundary(window)
    boundary.install()
    window.show()
    if project is not None:
        window.open_project(Path(project), create=not (Path(project) / "project.sqlite").exists())
    if then is not None:
        then(window)
    try:
        return int(app.exec())
    finally:
        boundary.uninstall()


def screenshot_and_quit(path: Path, settle_ms: int = 1500) -> Callable[[Any], None]:
    """A ``then`` for :func:`run_gui`: say on stderr when the window is first shown (the
    packaging bench times a cold start to that line), let it settle, save it, quit."""

    def then(window: Any) -> None:
        from PySide6.QtCore import QTimer
        from PySide6.QtWidgets import QApplication

        def shown() -> None:
            print(f"window shown: {window.windowTitle()}", file=sys.stderr, flush=True)
            QTimer.singleShot(settle_ms, save)

        def save() -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not window.grab().save(str(path)):
                print(f"error: cannot write {path}", file=sys.stderr)
                QApplication.exit(1)
                return
            QApplication.exit(0)

        QTimer.singleShot(0, shown)  # runs once the event loop has shown the window

    return then


__all__ = ["NoDisplayError", "check_display", "run_gui", "screenshot_and_quit"]
