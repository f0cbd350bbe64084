"""The jobs panel shows the stored job rows and cancels/retries through the queue."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.gui._main_window import MainWindow
from app.gui.judge._jobs_panel import eta_seconds
from judge import ModelProfile, queue_judge, save_profile
from storage import Job, JobStatus


def test_panel_lists_jobs_and_cancels_and_retries(
    qtbot: QtBot, project_dir: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    w = make_window(project_dir)
    project = w.state.project
    assert project is not None
    save_profile(project.profiles, ModelProfile(name="local", base_url="http://x/v1", model="m"))
    batch, ids = queue_judge(project, [v.id for v in project.videos()], profile="local")
    w.show_jobs()
    panel = w.jobs_panel
    assert w.docks["Jobs"].isVisible()
    assert panel.model.rowCount() == len(ids) == 3
    assert "3 queued" in panel.summary.text() and panel.current_batch() is None
    panel.table.selectRow(0)
    panel.cancel_selected()
    assert project.jobs.get(ids[0]).status is JobStatus.CANCELLED
    assert panel.model.data(panel.model.index(0, 3)) == "cancelled"
    panel.table.selectRow(0)
    panel.retry_selected()
    assert project.jobs.get(ids[0]).status is JobStatus.QUEUED
    panel.batch.setCurrentIndex(panel.batch.findData(batch))
    panel.cancel_batch()
    assert project.jobs.counts(batch=batch)["cancelled"] == 3
    assert "0 queued" in panel.summary.text()


def _job(status: JobStatus, start: str | None = None, end: str | None = None) -> Job:
    return Job(1, None, "k", {}, status, None, None, 1, 3, 0.0, None, None, None, 0.0, None,
               start, end)  # fmt: skip


def test_eta_from_finished_job_durations() -> None:
    done = _job(JobStatus.DONE, "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:10+00:00")
    queued = [_job(JobStatus.QUEUED) for _ in range(4)]
    assert eta_seconds([done, *queued], workers=2) == 20.0
    assert eta_seconds(queued, workers=2) is None  # nothing finished yet: unknown, not zero
    assert eta_seconds([done], workers=1) == 0.0
