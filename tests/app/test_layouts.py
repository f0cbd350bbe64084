"""Dock layouts per workspace: the arrangement you leave a workspace in comes back with it,
survives closing the window, and travels in a file; a bad file is refused by name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from app.gui._main_window import MainWindow
from app.gui.common import LayoutError, read_layouts, write_layouts
from storage import load_settings

pytestmark = pytest.mark.gui


def test_each_workspace_keeps_its_arrangement(
    make_window: Callable[[Path], MainWindow], project_dir: Path, qtbot: QtBot,
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    w = make_window(project_dir)
    w.set_workspace("judge")
    w.docks["Jobs"].hide()  # the person closes the jobs dock in the judge workspace
    w.set_workspace("annotate")
    assert w.docks["Evidence"].isVisible()
    w.set_workspace("judge")
    assert w.docks["Judge trace"].isVisible() and not w.docks["Jobs"].isVisible()
    # to a file and back: another window takes the arrangement
    out = tmp_path / "lab-layout.json"
    w.layouts.keep(w.workspace, w.saveState(1).data())
    w.layouts.save(out)
    assert set(read_layouts(out)) >= {"annotate", "judge"}
    w.close()  # and the settings folder keeps it for next time
    again = MainWindow(load_settings())
    qtbot.addWidget(again)
    again.show()
    assert again.layouts.get("judge") is not None
    again.set_workspace("judge")
    assert not again.docks["Jobs"].isVisible()
    bad = tmp_path / "bad.json"
    write_layouts(bad, {})
    bad.write_text(bad.read_text().replace('"version": 1', '"version": 99'))
    with pytest.raises(LayoutError, match=r"bad.json: written for another arrangement"):
        read_layouts(bad)
    warned: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a: warned.append(str(a[2])))
    again.load_layout(bad)
    assert warned and "bad.json" in warned[0]
    again.load_layout(out)
    assert not again.docks["Jobs"].isVisible()
