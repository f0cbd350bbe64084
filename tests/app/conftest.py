"""GUI fixtures: a project with imported cases and a workbench window on it (real X server)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.gui._main_window import MainWindow
from storage import Project, import_cases, load_settings

pytestmark = pytest.mark.gui


@pytest.fixture
def project_dir(tmp_path: Path, cases_dir: Path) -> Path:
    with Project.create(tmp_path / "project") as p:
        import_cases(p, cases_dir)
    return tmp_path / "project"


@pytest.fixture
def make_window(qtbot: QtBot) -> Iterator[Callable[[Path], MainWindow]]:
    """Open a window on a project, shown and active, ready for keyboard input."""
    opened: list[MainWindow] = []

    def make(project: Path) -> MainWindow:
        w = MainWindow(load_settings())
        # a run left live would ask before the window closes: stopped (and stored) first
        qtbot.addWidget(w, before_close_func=lambda w: w.episode.live.stop(quiet=True))
        w.show()
        qtbot.waitExposed(w)
        w.activateWindow()
        qtbot.waitUntil(lambda: QApplication.activeWindow() is w)
        assert w.open_project(project)
        opened.append(w)
        return w

    yield make
    for w in opened:
        w.episode.live.stop(quiet=True)
        w.close()
