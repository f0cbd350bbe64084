"""The GUI's one error boundary: a user error reaching the event loop shows its message, a bug
shows one line naming the log file its traceback was written to."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from app.gui.common._bridge import Bridge
from app.gui.common._errors import ErrorBoundary
from storage import ProjectError

pytestmark = [pytest.mark.gui, pytest.mark.qt_no_exception_capture]


@pytest.fixture
def boundary(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("WB_LOG_DIR", str(tmp_path / "logs"))
    button = QPushButton("go")
    qtbot.addWidget(button)
    b = ErrorBoundary(button)
    b.install()
    yield b, button
    b.uninstall()
    if b.last_box is not None:
        b.last_box.close()


def test_user_error_in_a_slot_shows_its_message(qtbot: QtBot, boundary, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    b, button = boundary

    def fail() -> None:
        raise ProjectError("/labs/p is not a workbench project (no project.sqlite)")

    button.clicked.connect(fail)
    button.click()
    qtbot.waitUntil(lambda: b.last_box is not None)
    assert b.last_box.icon() == QMessageBox.Icon.Warning
    assert b.last_box.text() == "/labs/p is not a workbench project (no project.sqlite)"
    assert not (tmp_path / "logs").exists()  # a user error is no bug: nothing logged


def test_bug_in_background_work_names_its_log(qtbot: QtBot, boundary, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    b, _ = boundary
    bridge = Bridge()

    def broken() -> None:
        raise KeyError("missing")  # the bug under test

    bridge.submit("work", broken)
    qtbot.waitUntil(lambda: b.last_box is not None)
    bridge.shutdown()
    text = b.last_box.text()
    assert b.last_box.icon() == QMessageBox.Icon.Critical
    assert "this is a bug" in text and "KeyError" in text
    (log,) = (tmp_path / "logs").glob("bug-*.log")
    assert str(log) in text
    assert "Traceback" in log.read_text() and "broken" in log.read_text()
