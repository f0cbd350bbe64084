"""The jobs panel: progress, ETA, failures and cost of background jobs; cancel and retry.

It reads the ``jobs`` table (the stored row is the contract between workers and the GUI) and
never talks to a worker directly. On its own it polls once a second; in the window it follows
the project's :class:`~app.gui.common.ProjectWatch` instead (:meth:`JobsPanel.follow`), so it
re-reads only when a worker, the CLI or another window changed a job, and an idle queue leaves
the table (selection, current row, scroll) alone.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.gui.common import AnnotateState, LocalWorkers, ProjectWatch
from storage import Job, JobStatus

COLUMNS = ("Job", "Kind", "Video", "Status", "Progress", "Tries", "Cost $", "Ran on",
           "Error / note")  # fmt: skip
ERROR_COLUMN = len(COLUMNS) - 1
STATUS_COLOR = {
    JobStatus.QUEUED: "#6d6d6d",
    JobStatus.RUNNING: "#1565c0",
    JobStatus.DONE: "#2e7d32",
    JobStatus.FAILED: "#c62828",
    JobStatus.CANCELLED: "#8d6e63",
}
Index = QModelIndex | QPersistentModelIndex
ROOT = QModelIndex()


def _seconds(a: str | None, b: str | None) -> float | None:
    if not a or not b:
        return None
    return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()


def eta_seconds(jobs: list[Job], workers: int) -> float | None:
    """Remaining work × mean duration of finished jobs ÷ parallelism (None if unknown)."""
    durations = [
        d for j in jobs if j.status is JobStatus.DONE
        if (d := _seconds(j.started_at, j.finished_at)) is not None
    ]  # fmt: skip
    remaining = sum(1 for j in jobs if j.status in (JobStatus.QUEUED, JobStatus.RUNNING))
    if not remaining:
        return 0.0
    if not durations:
        return None
    running = sum(1 for j in jobs if j.status is JobStatus.RUNNING)
    return remaining * (sum(durations) / len(durations)) / max(1, running, workers)


class JobsModel(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self.jobs: list[Job] = []

    def set_jobs(self, jobs: list[Job]) -> None:
        self.beginResetModel()
        self.jobs = jobs
        self.endResetModel()

    def rowCount(self, parent: Index = ROOT) -> int:
        return 0 if parent.isValid() else len(self.jobs)

    def columnCount(self, parent: Index = ROOT) -> int:
        return len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        job = self.jobs[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (
                str(job.id),
                job.kind,
                str(job.payload.get("video_id", "")),
                job.status.value,
                f"{100 * job.progress:.0f}% {job.progress_note or ''}".strip(),
                f"{job.attempts}/{job.max_attempts}",
                f"{job.cost_usd:.4f}",
                job.ran_on or "",  # the worker's host, or the cluster node of its task
                job.error or "",
            )[col]
        if role == Qt.ItemDataRole.ForegroundRole and col == 3:
            return QColor(STATUS_COLOR[job.status])
        if role == Qt.ItemDataRole.ToolTipRole and col == ERROR_COLUMN and job.error:
            return job.error
        return None


class JobsPanel(QWidget):
    """Table of jobs with a summary line and worker / cancel / retry controls."""

    finished = Signal()  # more jobs have ended (done or failed) since the last refresh

    def __init__(self, state: AnnotateState, workers: LocalWorkers, parent: QWidget | None = None):
        super().__init__(parent)
        self.state = state
        self.workers = workers
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        top = QHBoxLayout()
        self.batch = QComboBox(self)
        self.batch.setMinimumWidth(160)
        self.batch.currentIndexChanged.connect(lambda _i: self.refresh())
        top.addWidget(QLabel("Batch"))
        top.addWidget(self.batch)
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)  # wraps instead of widening the window (ETA, cost …)
        top.addWidget(self.summary, 1)
        self.n_workers = QSpinBox(self)
        self.n_workers.setRange(1, 32)
        self.n_workers.setValue(8)
        self.n_workers.setToolTip("Jobs run at once (threads in one local worker process)")
        self.start_button = QPushButton("Start worker", self)
        self.start_button.clicked.connect(self.toggle_workers)
        top.addWidget(QLabel("Concurrency"))
        top.addWidget(self.n_workers)
        top.addWidget(self.start_button)
        lay.addLayout(top)

        self.model = JobsModel()
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        lay.addWidget(self.table, 1)

        bottom = QHBoxLayout()
        for text, slot in (
            ("Cancel selected", self.cancel_selected),
            ("Retry selected", self.retry_selected),
            ("Cancel batch", self.cancel_batch),
            ("Retry failed in batch", self.retry_batch),
        ):
            b = QPushButton(text, self)
            b.clicked.connect(slot)
            bottom.addWidget(b)
        bottom.addStretch(1)
        self.last_log = QLabel(self)
        self.last_log.setStyleSheet("color: palette(mid);")
        self.last_log.setWordWrap(True)
        bottom.addWidget(self.last_log)
        lay.addLayout(bottom)

        self._ended = 0
        self.timer = QTimer(self)
        self.timer.setInterval(1000)
        self.timer.timeout.connect(self.refresh)
        self.timer.start()
        workers.changed.connect(self._workers_changed)
        workers.log_line.connect(self._log)
        state.project_changed.connect(self.refresh)
        self._workers_changed()

    def follow(self, watch: ProjectWatch) -> None:
        """Re-read when ``watch`` says the jobs changed, instead of every second."""
        self.timer.stop()
        watch.changed.connect(lambda areas: self.refresh() if "jobs" in areas else None)

    # ---- data --------------------------------------------------------------------------
    def current_batch(self) -> str | None:
        data = self.batch.currentData()
        return str(data) if data else None

    def refresh(self) -> None:
        project = self.state.project
        if project is None:
            self.model.set_jobs([])
            self.summary.setText("no project")
            return
        batches = project.jobs.batches()
        known = [self.batch.itemData(k) for k in range(self.batch.count())]
        if known != [None, *batches]:
            keep = self.current_batch()
            self.batch.blockSignals(True)
            self.batch.clear()
            self.batch.addItem("All batches", None)
            for b in batches:
                self.batch.addItem(b, b)
            self.batch.setCurrentIndex(max(0, self.batch.findData(keep)) if keep else 0)
            self.batch.blockSignals(False)
        selected = {self.model.jobs[i.row()].id for i in self.table.selectionModel().selectedRows()}
        current = self.table.currentIndex()
        at_job = self.model.jobs[current.row()].id if current.isValid() else None
        at_col = current.column()
        scroll = self.table.verticalScrollBar().value()
        jobs = project.jobs.query(batch=self.current_batch())
        self.model.set_jobs(jobs)
        for row, job in enumerate(jobs):
            if job.id in selected:
                self.table.selectRow(row)
        for row, job in enumerate(jobs):  # the keyboard's place, without changing the selection
            if job.id == at_job:
                self.table.selectionModel().setCurrentIndex(
                    self.model.index(row, at_col),
                    QItemSelectionModel.SelectionFlag.NoUpdate,
                )
        self.table.verticalScrollBar().setValue(scroll)
        counts = {s: sum(1 for j in jobs if j.status is s) for s in JobStatus}
        ended = counts[JobStatus.DONE] + counts[JobStatus.FAILED]
        if ended != self._ended:
            self._ended = ended
            self.finished.emit()
        cost = sum(j.cost_usd for j in jobs)
        eta = eta_seconds(jobs, self.workers.running * self.n_workers.value())
        eta_text = "" if eta in (None, 0.0) else f" · ETA {eta / 60:.1f} min"
        self.summary.setText(
            f"{counts[JobStatus.DONE]} done · {counts[JobStatus.RUNNING]} running · "
            f"{counts[JobStatus.QUEUED]} queued · {counts[JobStatus.FAILED]} failed · "
            f"${cost:.4f}{eta_text}"
        )

    def selected_ids(self) -> list[int]:
        return [self.model.jobs[i.row()].id for i in self.table.selectionModel().selectedRows()]

    # ---- actions -----------------------------------------------------------------------
    def toggle_workers(self) -> None:
        project = self.state.project
        if self.workers.running:
            self.workers.stop()
        elif project is not None:
            self.workers.start(project.root, concurrency=self.n_workers.value())

    def _workers_changed(self) -> None:
        n = self.workers.running
        self.start_button.setText("Stop worker" if n else "Start worker")
        self.start_button.setToolTip(f"{n} local worker process(es) running")

    def cancel_selected(self) -> None:
        if self.state.project is not None:
            self.state.project.jobs.cancel(self.selected_ids())
            self.refresh()

    def retry_selected(self) -> None:
        if self.state.project is not None:
            self.state.project.jobs.retry(self.selected_ids())
            self.refresh()

    def cancel_batch(self) -> None:
        batch = self.current_batch()
        if self.state.project is not None and batch:
            self.state.project.jobs.cancel(batch=batch)
            self.refresh()

    def retry_batch(self) -> None:
        batch = self.current_batch()
        if self.state.project is not None and batch:
            self.state.project.jobs.retry(batch=batch)
            self.refresh()

    def _log(self, record: dict[str, Any]) -> None:
        event = record.get("event", "")
        job = record.get("job")
        self.last_log.setText(f"worker: {event}" + (f" job {job}" if job else ""))
