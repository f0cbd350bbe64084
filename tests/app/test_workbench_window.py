"""Window-level behaviour: blinding in the list, drag-and-drop import, shortcuts as data,
the help overlay, and a screenshot that shows what an annotator needs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication, QTextBrowser
from pytestqt.qtbot import QtBot

from app.gui._main_window import MainWindow
from app.gui.common._commands import COMMANDS, conflicts, effective_keys
from app.gui.common._help import ShortcutOverlay
from storage import Project
from tests.casefactory import make_case


def test_video_list_shows_only_anonymous_ids(
    project_dir: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    w = make_window(project_dir)
    tree = w.annotate.videos
    shown = []
    for k in range(tree.topLevelItemCount()):
        case = tree.topLevelItem(k)
        shown += [case.child(j).text(0) for j in range(case.childCount())]
    assert shown and all(s.startswith("V-") for s in shown)
    with Project.open(project_dir) as p:
        secrets = {v.model for v in p.videos()} | {v.source_name for v in p.videos()}
    visible = " ".join(shown) + w.annotate.case_panel.title.text() + w.windowTitle()
    assert not any(s and s in visible for s in secrets)


def test_dropping_a_case_folder_imports_it(
    tmp_path: Path, project_dir: Path, make_window: Callable[[Path], MainWindow], qtbot: QtBot
) -> None:
    w = make_window(project_dir)
    folder = make_case(tmp_path / "dropped", "new_case", n_videos=1)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(folder))])
    event = QDropEvent(
        QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )  # fmt: skip
    w.dropEvent(event)
    qtbot.waitUntil(lambda: "1 case(s) added" in w.statusBar().currentMessage())  # in background
    cases = [w.annotate.videos.topLevelItem(k).text(0) for k in range(3)]
    assert "new_case" in cases


def test_bad_drop_changes_nothing_and_says_why(
    tmp_path: Path, project_dir: Path, make_window: Callable[[Path], MainWindow], qtbot: QtBot
) -> None:
    w = make_window(project_dir)
    folder = make_case(tmp_path / "bad", "broken", n_videos=1)
    (folder / "videos" / "gen_0.mp4").write_bytes(b"")
    shown: list[str] = []
    from PySide6.QtWidgets import QMessageBox

    orig = QMessageBox.warning
    QMessageBox.warning = lambda _p, _t, text, *a, **k: shown.append(text)  # type: ignore[assignment,method-assign]
    try:
        w.import_folder(folder)
        qtbot.waitUntil(lambda: bool(shown))  # the import runs in the background
    finally:
        QMessageBox.warning = orig  # type: ignore[method-assign]
    assert shown and "gen_0.mp4" in shown[0] and "empty" in shown[0]
    assert w.annotate.videos.topLevelItemCount() == 2


def test_shortcuts_are_data_and_user_overrides_apply(
    project_dir: Path, make_window: Callable[[Path], MainWindow], tmp_path: Path
) -> None:
    assert conflicts(effective_keys({})) == []
    assert conflicts(effective_keys({"gate.pass": ["N"]}))  # N is already "no"
    w = make_window(project_dir)
    assert w.actions_by_id["gate.pass"].shortcut().toString() == "Y"
    (w.settings.config_dir).mkdir(parents=True, exist_ok=True)
    (w.settings.config_dir / "shortcuts.json").write_text(json.dumps({"gate.pass": ["P"]}))
    w.apply_shortcuts()
    assert w.actions_by_id["gate.pass"].shortcut().toString() == "P"
    (w.settings.config_dir / "shortcuts.json").write_text("{broken")
    w.apply_shortcuts()
    assert w.actions_by_id["gate.pass"].shortcut().toString() == "Y"
    assert "using default shortcuts" in w.statusBar().currentMessage()


def test_help_overlay_lists_every_bound_command(qtbot: QtBot) -> None:
    overlay = ShortcutOverlay(effective_keys({}))
    qtbot.addWidget(overlay)
    view = overlay.findChild(QTextBrowser)
    assert view is not None
    text = view.toPlainText()
    for c in COMMANDS:
        if c.keys:
            assert c.title.replace("&", "").rstrip("…") in text


def test_screenshot_shows_frame_goal_and_gates(
    tmp_path: Path, project_dir: Path, make_window: Callable[[Path], MainWindow], qtbot: QtBot
) -> None:
    w = make_window(project_dir)
    w.resize(1400, 860)
    qtbot.waitUntil(lambda: w.annotate.view._image is not None)
    w.grab().save(str(tmp_path / "annotate.png"))  # kept in pytest's tmp dir for a look
    img = w.annotate.view.grab().toImage()
    arr = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine())
    assert arr.std() > 10, "the video area is blank"
    assert "Put the red block on the blue plate." in w.annotate.case_panel.goal.text()
    assert w.annotate.case_panel.image.pixmap() is not None
    assert not w.annotate.case_panel.image.pixmap().isNull()
    assert "frame" in w.annotate.transport.position.text()
    assert QApplication.activeWindow() is w
