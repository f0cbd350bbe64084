"""The PySide6 workbench window. Import this only when a window is wanted."""

from __future__ import annotations

from pathlib import Path


def run_gui(project: Path | None = None) -> int:
    """Open the workbench (on ``project`` if given) and run the event loop."""
    import sys

    from PySide6.QtWidgets import QApplication

    from app.gui._main_window import MainWindow
    from storage import load_settings

    app = QApplication.instance() or QApplication(sys.argv)
    app.setApplicationName("Rollout Workbench")
    app.setOrganizationName("rollout-workbench")
    window = MainWindow(load_settings())
    window.show()
    if project is not None:
        window.open_project(Path(project), create=not (Path(project) / "project.sqlite").exists())
    return int(app.exec())


__all__ = ["run_gui"]
