"""Importing cases runs on the app-wide executor: the window keeps handling events while the
videos are indexed, file counts arrive on the GUI thread, and a bad folder is refused in a box
that says nothing was changed."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from app.gui._main_window import MainWindow
from storage import ImportReport, Project, import_cases
from tests.casefactory import make_case

pytestmark = pytest.mark.gui


@pytest.fixture
def boxes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    shown: list[tuple[str, str]] = []

    def warning(_parent: object, title: str, text: str, *_a: Any, **_k: Any) -> None:
        shown.append((title, text))

    monkeypatch.setattr(QMessageBox, "warning", warning)
    return shown


def test_import_runs_off_the_gui_thread_with_progress(
    qtbot: QtBot,
    tmp_path: Path,
    project_dir: Path,
    make_window: Callable[[Path], MainWindow],
    monkeypatch: pytest.MonkeyPatch,
    boxes: list[tuple[str, str]],
) -> None:
    folder = tmp_path / "new"
    make_case(folder, "pour_water", n_videos=2)
    make_case(folder, "open_drawer", n_videos=1)
    w = make_window(project_dir)
    real = import_cases
    release = threading.Event()
    threads: list[threading.Thread] = []

    def held_import(*args: Any, **kwargs: Any) -> ImportReport:
        threads.append(threading.current_thread())
        if threading.current_thread() is not threading.main_thread():
            release.wait(60)  # hold the import until the GUI has shown it is still alive
        return real(*args, **kwargs)

    monkeypatch.setattr("app.gui.common._importer.import_cases", held_import)
    counts: list[tuple[int, int, bool]] = []
    w.importer.progress.connect(
        lambda _f, done, total: counts.append(
            (done, total, threading.current_thread() is threading.main_thread())
        )
    )
    ticks: list[int] = []
    timer = QTimer(w)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(10)

    w.import_folder(folder)  # returns at once
    qtbot.waitUntil(lambda: bool(threads))
    assert threads[0] is not threading.main_thread()  # off the GUI thread
    assert w.import_bar.isVisible() and "Importing new" in w.statusBar().currentMessage()
    qtbot.waitUntil(lambda: len(ticks) >= 3)  # the event loop runs while the import waits
    release.set()
    qtbot.waitUntil(lambda: "Imported new" in w.statusBar().currentMessage(), timeout=30_000)
    timer.stop()
    assert boxes == []
    # 3 case files' worth: 2 images + 3 videos, each checked and then copied in
    assert counts[0][:2] == (0, 10) and counts[-1][:2] == (10, 10)
    assert [c[0] for c in counts] == sorted(c[0] for c in counts)
    assert all(on_gui for *_, on_gui in counts)
    assert not w.import_bar.isVisible()
    tree = w.annotate.videos
    cases = {tree.topLevelItem(k).text(0) for k in range(tree.topLevelItemCount())}  # type: ignore[union-attr]
    assert {"pour_water", "open_drawer"} <= cases  # the video list re-read the project
    assert "2 case(s) added" in w.statusBar().currentMessage()


def test_a_bad_folder_shows_why_and_changes_nothing(
    qtbot: QtBot,
    tmp_path: Path,
    project_dir: Path,
    make_window: Callable[[Path], MainWindow],
    boxes: list[tuple[str, str]],
) -> None:
    w = make_window(project_dir)
    good = make_case(tmp_path / "mixed", "fine_case", n_videos=1)
    bad = make_case(tmp_path / "mixed", "broken", n_videos=1)
    (bad / "videos" / "gen_0.mp4").write_bytes(b"")
    w.import_folder(good.parent)
    qtbot.waitUntil(lambda: bool(boxes), timeout=30_000)
    ((title, text),) = boxes
    assert title == "Import failed — nothing was changed"
    assert "gen_0.mp4" in text and "empty" in text
    assert not w.import_bar.isVisible()
    assert "Importing" not in w.statusBar().currentMessage()
    with Project.open(project_dir) as p:
        assert {c.id for c in p.cases()} == {"stack_blocks", "tidy_cups"}
    # the window is still usable: the next import goes through
    w.import_folder(good)
    qtbot.waitUntil(lambda: "Imported fine_case" in w.statusBar().currentMessage())
