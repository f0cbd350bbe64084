"""The judge trace lists the continuity windows a run offered (with the inspections that looked
at them, each a link to its start), and nothing of the kind for a run without the option."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from pytestqt.qtbot import QtBot

from app.gui._main_window import MainWindow
from judge import ModelProfile, queue_judge, save_profile
from judge.models.loopback import FakeServer
from judge.video.loopback import wire_responder
from storage import Project, import_cases, run_worker
from storage.media.continuity import scan_video
from tests.continuity_case import inspecting_judge, write_corrupted_case

pytestmark = pytest.mark.gui

SHOT = Path("/tmp/q_trace.png")


def test_trace_shows_the_windows_offered(
    qtbot: QtBot, tmp_path: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    case, truth = write_corrupted_case(tmp_path / "clips")
    root = tmp_path / "p"
    with Project.create(root) as p:
        import_cases(p, case)
        (video,) = [v for v in p.videos() if v.source_name == "teleport.mp4"]
        scan = scan_video(p.media_path(video.media))
        p.continuity.save(video.media, scan)
    with FakeServer(wire_responder(inspecting_judge())) as srv:
        with Project.open(root) as p:
            save_profile(p.profiles, ModelProfile(name="loop", base_url=srv.base_url,
                                                  model="fake-vlm", api_key_env=""))  # fmt: skip
            queue_judge(p, [video.id], profile="loop", batch="off")
            queue_judge(p, [video.id], profile="loop", batch="on",
                        config={"continuity_windows": 2})  # fmt: skip
        stats = run_worker(root, drain=True, kinds=["judge.video"], log=lambda _r: None)
    assert stats.done == 2
    w = make_window(root)
    w.annotate.open_video(w.state.project.video(video.id))  # type: ignore[union-attr]
    tv = w.trace_view
    qtbot.waitUntil(lambda: tv.runs.count() == 2)
    # newest first: the run with the option
    tv.runs.setCurrentIndex(0)
    text = tv.view.toPlainText()
    n = len(scan.windows)
    assert "Continuity windows offered" in text
    assert f"{min(n, 2)} of the scan's {n} window(s), the strongest up to 2" in text
    w0 = max(scan.windows, key=lambda x: x.score)
    assert f"C1 {w0.start_s:.2f}–{w0.end_s:.2f} s" in text and w0.reason in text
    assert "inspected #1" in text  # the judge looked at it, at P1
    assert w0.start_s <= truth["teleport.mp4"]["start_s"] <= w0.end_s
    # a window is a link to its start on the player
    tv.view.anchorClicked.emit(QUrl(f"t:{w0.start_s}"))
    index = w.annotate.player.index
    assert index is not None and w.state.frame == index.index_at(w0.start_s) > 0
    w.set_workspace("judge")
    w.resize(1300, 820)
    tv.view.scrollToAnchor("")
    qtbot.wait(200)
    w.grab().save(str(SHOT))  # looked at by hand
    # the run without the option shows no such section
    tv.runs.setCurrentIndex(1)
    assert "Continuity windows" not in tv.view.toPlainText()
    assert "Task plan" in tv.view.toPlainText()
