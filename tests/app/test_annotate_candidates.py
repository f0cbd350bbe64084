"""Continuity candidates in the annotate workspace: drawn on the timeline, walked with ] and [,
suggestions only (no answer or evidence is written), and "not scanned" said where there is no
scan. Clips are demo recordings edited by the corruption generator (teleport, swap)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QHelpEvent
from PySide6.QtWidgets import QApplication, QToolTip
from pytestqt.qtbot import QtBot

from app.gui._main_window import MainWindow
from app.gui.annotate._candidates import NOT_SCANNED
from storage import Project, Video, import_cases
from storage._db import write
from storage.media.continuity import scan_video
from tests.continuity_case import Truth, write_corrupted_case

pytestmark = pytest.mark.gui

SHOT = Path("/tmp/q_annotate.png")


@pytest.fixture(scope="module")
def corrupted_case(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Truth]:
    return write_corrupted_case(tmp_path_factory.mktemp("corrupt"))


@pytest.fixture
def project(tmp_path: Path, corrupted_case: tuple[Path, Truth]) -> Path:
    case, _ = corrupted_case
    with Project.create(tmp_path / "p") as p:
        import_cases(p, case)
        for v in p.videos():
            if v.source_name == "clean.mp4":  # stays unscanned, whatever the import did
                with write(p.db):
                    p.db.execute("DELETE FROM continuity_scans WHERE sha256 = ?", [v.media])
            else:
                p.continuity.save(v.media, scan_video(p.media_path(v.media)))
    return tmp_path / "p"


def _video(w: MainWindow, name: str) -> Video:
    assert w.state.project is not None
    (v,) = [v for v in w.state.project.videos() if v.source_name.endswith(name)]
    return v


def _press(qtbot: QtBot, key: Qt.Key) -> None:
    target = QApplication.focusWidget() or QApplication.activeWindow()
    assert target is not None
    qtbot.keyClick(target, key)


def test_teleport_window_is_drawn_and_next_candidate_lands_in_it(
    qtbot: QtBot, project: Path, make_window: Callable[[Path], MainWindow],
    corrupted_case: tuple[Path, Truth],
) -> None:  # fmt: skip
    w = make_window(project)
    ws, tl = w.annotate, w.annotate.timeline
    ws.open_video(_video(w, "teleport.mp4"))
    cut = corrupted_case[1]["teleport.mp4"]["start_s"]  # the instant 1.5 s were deleted
    (c,) = tl.candidates
    assert c.window.start_s <= cut <= c.window.end_s
    # drawn: the candidate lane is violet at the window's place
    w.resize(1300, 820)
    qtbot.waitUntil(lambda: ws.view._image is not None)
    ((_, rect),) = tl.candidate_rects()
    img = tl.grab().toImage()
    dpr = img.devicePixelRatio()
    px = QColor(img.pixel(int(rect.center().x() * dpr), int(rect.center().y() * dpr)))
    assert px.blue() > px.red() > px.green() and px.blue() - px.green() > 40, px.name()
    # hovering it names score and reason, as a suggestion
    centre = rect.center().toPoint()
    QApplication.sendEvent(tl, QHelpEvent(QEvent.Type.ToolTip, centre, tl.mapToGlobal(centre)))
    assert "Suggested candidate 1/1" in QToolTip.text() and c.window.reason in QToolTip.text()
    # ] moves the playhead to the window's start frame, and the status bar says which and why
    assert w.state.frame == 0
    _press(qtbot, Qt.Key.Key_BracketRight)
    index = ws.player.index
    assert index is not None
    assert w.state.frame == c.start_frame
    assert c.window.start_s - 1 / index.fps <= index.time_of(w.state.frame) <= c.window.end_s
    assert w.statusBar().currentMessage().startswith(f"candidate 1/1: {c.window.reason}")
    # suggestions decide nothing: no answer, no evidence was written
    assert w.state.project is not None and w.state.video is not None
    assert w.state.project.annotations.evidence(w.state.video.id, w.state.rater) == []
    assert w.state.project.annotations.answers(w.state.video.id, w.state.rater) == {}


def test_candidates_are_walked_in_time_order_and_absent_where_not_scanned(
    qtbot: QtBot, project: Path, make_window: Callable[[Path], MainWindow],
    corrupted_case: tuple[Path, Truth],
) -> None:  # fmt: skip
    w = make_window(project)
    ws, tl = w.annotate, w.annotate.timeline
    ws.open_video(_video(w, "swap.mp4"))
    swap = corrupted_case[1]["swap.mp4"]
    assert len(tl.candidates) >= 2
    starts = [c.start_frame for c in tl.candidates]
    assert starts == sorted(starts)
    # every window is one of the swap's cuts (the edited 3 s, a frame either side)
    assert all(swap["start_s"] - 0.2 <= c.window.start_s <= swap["end_s"] + 0.2
               for c in tl.candidates)  # fmt: skip
    visited = []
    for _ in tl.candidates:
        _press(qtbot, Qt.Key.Key_BracketRight)
        visited.append(w.state.frame)
    assert visited == starts
    _press(qtbot, Qt.Key.Key_BracketLeft)
    assert w.state.frame == starts[-2]
    n = len(starts)
    assert w.statusBar().currentMessage().startswith(f"candidate {n - 1}/{n}: ")
    w.resize(1300, 820)
    qtbot.waitUntil(lambda: ws.view._image is not None and w.state.frame == starts[-2])
    qtbot.wait(200)
    w.grab().save(str(SHOT))  # looked at by hand: candidate lane under the evidence lanes
    # the clean clip has no scan: nothing drawn, and the action says so
    ws.open_video(_video(w, "clean.mp4"))
    assert tl.candidates == [] and not ws.scanned
    _press(qtbot, Qt.Key.Key_BracketRight)
    assert w.state.frame == 0 and w.statusBar().currentMessage() == NOT_SCANNED
    # a scan stored while the video is open (at import, by a job) is picked up by the action
    assert w.state.project is not None and w.state.video is not None
    sha = w.state.video.media
    w.state.project.continuity.save(sha, scan_video(w.state.project.media_path(sha)))
    _press(qtbot, Qt.Key.Key_BracketRight)
    assert ws.scanned and w.state.frame == 0
    assert w.statusBar().currentMessage().startswith("no candidate windows: the continuity")
