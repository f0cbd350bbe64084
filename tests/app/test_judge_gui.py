"""Judge runs from the GUI: queue through the dialog, run a local worker process from the jobs
panel against a loopback model server, then read the trace and click evidence to seek."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QTimer, QUrl
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.gui._main_window import MainWindow
from app.gui.judge._dialog import JudgeDialog
from judge import ModelProfile, save_profile
from judge.models.loopback import FakeServer
from judge.video.loopback import wire_responder
from storage import Project


def test_queue_run_and_trace_from_the_gui(
    qtbot: QtBot, project_dir: Path, make_window: Callable[[Path], MainWindow], tmp_path: Path
) -> None:
    with FakeServer(wire_responder()) as srv:
        with Project.open(project_dir) as p:
            save_profile(
                p.profiles,
                ModelProfile(name="loop", base_url=srv.base_url, model="fake-vlm",
                             api_key_env="", price_in_per_mtok=1.0, price_out_per_mtok=4.0),
            )  # fmt: skip
        w = make_window(project_dir)
        video = w.state.video
        assert video is not None

        def accept() -> None:
            dlg = QApplication.activeModalWidget()
            assert isinstance(dlg, JudgeDialog)
            assert dlg.video_ids() == [video.id]  # "this video" is the default scope
            assert dlg.profile.currentText() == "loop"
            assert dlg.continuity.value() == 0 and dlg.config() == {}  # off by default
            dlg.mode.setCurrentIndex(dlg.mode.findData("simple_vqa"))
            assert not dlg.continuity.isEnabled()  # the baseline has no gates to offer them at
            dlg.mode.setCurrentIndex(dlg.mode.findData("gated"))
            dlg.continuity.setValue(2)
            assert dlg.config() == {"continuity_windows": 2}
            dlg.accept()

        QTimer.singleShot(50, accept)
        w.judge_dialog()
        panel = w.jobs_panel
        assert w.docks["Jobs"].isVisible() and panel.model.rowCount() == 1
        judge_jobs = [j for j in panel.model.jobs if j.kind == "judge.video"]
        assert [j.payload["config"] for j in judge_jobs] == [{"continuity_windows": 2}]
        panel.n_workers.setValue(2)
        panel.toggle_workers()
        assert w.workers.running == 1 and panel.start_button.text() == "Stop worker"
        qtbot.waitUntil(lambda: "1 done" in panel.summary.text(), timeout=60_000)
        panel.toggle_workers()
        assert w.workers.running == 0

    # the trace view picked the new run up by itself
    trace_view = w.trace_view
    qtbot.waitUntil(lambda: trace_view.trace is not None, timeout=5000)
    assert trace_view.trace is not None
    html = trace_view.view.toHtml()
    for text in ("Task plan", "Physics windows", "T1", "P4", "Calls", "fake-vlm"):
        assert text in html, text
    frame = trace_view.trace.frame("P05")
    assert frame is not None and frame.frame_index > 0
    trace_view.view.anchorClicked.emit(QUrl("ev:P05"))
    assert w.state.frame == frame.frame_index
    w.set_workspace("judge")
    assert not w.docks["Rubric"].isVisible() and w.docks["Judge trace"].isVisible()
    w.grab().save(str(tmp_path / "judge.png"))
    w.set_workspace("annotate")
    assert w.docks["Rubric"].isVisible() and not w.docks["Jobs"].isVisible()


def test_the_dialog_shows_each_profiles_probe_and_will_not_queue_a_text_only_one(
    qtbot: QtBot, tmp_path: Path
) -> None:
    from judge import Capabilities

    text_only = Capabilities(probed_at="2026-12-06T00:00:00Z", images=False, required_tool=False)
    with Project.create(tmp_path / "p") as p:
        base = {"base_url": "http://127.0.0.1:9/v1", "api_key_env": ""}
        save_profile(p.profiles, ModelProfile(name="vlm", model="big-vlm", **base))
        save_profile(p.profiles, ModelProfile(name="smol", model="smollm2", capabilities=text_only,
                                              **base))  # fmt: skip
        dlg = JudgeDialog(p, None, ["smol", "vlm"])
        qtbot.addWidget(dlg)
        ok = dlg.buttons.button(dlg.buttons.StandardButton.Ok)
        assert dlg.profile.currentText() == "smol"
        assert "takes no images" in dlg.capabilities.text() and not ok.isEnabled()
        dlg.profile.setCurrentText("vlm")
        assert "Not probed yet" in dlg.capabilities.text() and ok.isEnabled()
