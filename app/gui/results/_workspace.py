"""The results workspace: leaderboard with CIs, agreement table, judge-vs-human scatter, and a
disagreement queue. What is shown is computed by the core (:func:`storage.agreement_report`, the
same call ``workbench agreement`` makes) on the app-wide executor, so the window stays responsive
while 1,000 bootstrap resamples compute; every table exports as CSV, the scatter as PNG/SVG.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import pyqtgraph as pg
from pyqtgraph.exporters import ImageExporter
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPainter, QShowEvent
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from annotation import Leaderboard, UserError
from app.gui.common import AnnotateState, Bridge
from app.gui.results._empty import (
    BLIND,
    COMPUTING,
    NOT_COMPUTED,
    Placeheld,
    agreement_note,
    board_note,
    failed,
    queue_note,
    scatter_note,
)
from storage import AgreementReport, agreement_report

AXES = ("task", "physics", "final")
VIEWS = ("board", "agreement", "scatter", "queue")
WHY_WIDTH = 300  # px: the agreement table's "Why empty" column wraps at this width


def compute(project_root: Path, human_success: str, seed: int, n_boot: int) -> AgreementReport:
    """Everything the workspace shows (runs on a worker thread, with its own connection)."""
    from storage import Project

    hs: Literal["max", "rated"] = "max" if human_success == "max" else "rated"
    with Project.open(project_root) as project:
        return agreement_report(project, human_success=hs, n_boot=n_boot, seed=seed)


def _fmt(est: float, lo: float, hi: float) -> str:
    if math.isnan(est):
        return "—"
    if math.isnan(lo):
        return f"{est:.2f}"
    return f"{est:.2f} [{lo:.2f}, {hi:.2f}]"


def _fill(table: QTableWidget, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    table.clear()
    table.setColumnCount(len(header))
    table.setRowCount(len(rows))
    table.setHorizontalHeaderLabels(list(header))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            item = QTableWidgetItem(text)
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
            table.setItem(r, c, item)
    table.resizeColumnsToContents()


def _text(item: QTableWidgetItem | None) -> str:
    return "" if item is None else item.text()


def table_to_csv(table: QTableWidget, path: Path) -> None:
    """Write a table exactly as shown (header + cells)."""
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(
            [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]  # type: ignore[union-attr]
        )
        for r in range(table.rowCount()):
            w.writerow(
                [
                    (table.item(r, c) or QTableWidgetItem("")).text()
                    for c in range(table.columnCount())
                ]
            )


class ResultsPanel(QWidget):
    """Four tabs over one computation; ``open_video`` asks the window to show a video.

    A view with nothing to show says why and what to do next (``_empty.py``); in a rater's
    view of a blind project (:meth:`set_blind`) it holds and computes nothing at all.
    """

    open_video = Signal(str)

    def __init__(self, state: AnnotateState, bridge: Bridge, parent: QWidget | None = None):
        super().__init__(parent)
        self.state = state
        self.bridge = bridge
        self.results: AgreementReport | None = None
        self.blind = False  # a rater's view of a blind project: nothing kept, nothing computed
        self._stale = False  # ratings changed while hidden: recompute when shown
        self._computing = False
        self._again = False  # changed while computing: once more after it
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        top = QHBoxLayout()
        top.addWidget(QLabel("Human (+) recordings"))
        self.human_success = QComboBox(self)
        self.human_success.addItem("set to the maximum (Table 2)", "max")
        self.human_success.addItem("as rated", "rated")
        top.addWidget(self.human_success)
        self.compute_button = QPushButton("Compute (1,000 resamples)", self)
        self.compute_button.clicked.connect(self.refresh)
        top.addWidget(self.compute_button)
        top.addStretch(1)
        lay.addLayout(top)
        # Status and exports on a second row, the status wrapping: one long row set the dock's
        # minimum width past a laptop screen, and the main window grew to fit it.
        second = QHBoxLayout()
        self.status = QLabel("", self)
        self.status.setWordWrap(True)
        second.addWidget(self.status, 1)
        self.export_button = QPushButton("Export CSV…", self)
        self.export_button.clicked.connect(self.export_csv)
        self.figure_button = QPushButton("Export figure…", self)
        self.figure_button.clicked.connect(self.export_figure)
        second.addWidget(self.export_button)
        second.addWidget(self.figure_button)
        lay.addLayout(second)

        self.tabs = QTabWidget(self)
        self.board = QTableWidget(self)
        self.agreement = QTableWidget(self)
        self.queue = QTableWidget(self)
        self.queue.cellDoubleClicked.connect(
            lambda r, _c: self.open_video.emit(self.queue.item(r, 0).text())  # type: ignore[union-attr]
        )
        scatter_tab = QWidget(self)
        sl = QVBoxLayout(scatter_tab)
        pick = QHBoxLayout()
        self.evaluator = QComboBox(self)
        self.axis = QComboBox(self)
        self.axis.addItems(AXES)
        for box in (self.evaluator, self.axis):
            box.currentIndexChanged.connect(lambda _i: self.draw_scatter())
        pick.addWidget(QLabel("Judge"))
        pick.addWidget(self.evaluator, 1)
        pick.addWidget(QLabel("Axis"))
        pick.addWidget(self.axis)
        sl.addLayout(pick)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setLabel("bottom", "Human consensus (0–100)")
        self.plot.setLabel("left", "Judge (0–100)")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.plot.setAspectLocked(True)
        self.plot.setRange(xRange=(0, 100), yRange=(0, 100))
        self.points = pg.ScatterPlotItem(
            size=9, pen=pg.mkPen("#1565c0"), brush=pg.mkBrush(21, 101, 192, 120)
        )
        self.points.sigClicked.connect(self._clicked)
        self.plot.addItem(self.points)
        self.plot.addItem(
            pg.PlotDataItem([0, 100], [0, 100], pen=pg.mkPen("#9e9e9e", style=Qt.PenStyle.DashLine))
        )
        # an empty chart says why, in its middle
        self.plot_note = pg.TextItem(
            "", color="#424242", anchor=(0.5, 0.5), fill=pg.mkBrush(255, 255, 255, 235),
            border=pg.mkPen("#bdbdbd"),
        )  # fmt: skip
        self.plot_note.setTextWidth(300)
        self.plot_note.setPos(50, 50)
        self.plot_note.setZValue(10)
        self.plot.addItem(self.plot_note)
        sl.addWidget(self.plot, 1)
        self.verdicts = QLabel("Click a point to open that video with both verdicts.", self)
        self.verdicts.setWordWrap(True)
        self.verdicts.setTextFormat(Qt.TextFormat.RichText)
        sl.addWidget(self.verdicts)
        self.views = {
            "board": Placeheld(self.board, self),
            "agreement": Placeheld(self.agreement, self),
            "queue": Placeheld(self.queue, self),
        }
        self.tabs.addTab(self.views["board"], "Leaderboard")
        self.tabs.addTab(self.views["agreement"], "Agreement")
        self.tabs.addTab(scatter_tab, "Judge vs human")
        self.tabs.addTab(self.views["queue"], "Disagreements")
        lay.addWidget(self.tabs, 1)
        for t in (self.board, self.agreement, self.queue):
            t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
            t.setSortingEnabled(False)
        # the reasons of empty rows are sentences: wrapped in a column of their own width
        self.agreement.setWordWrap(True)
        self.agreement.horizontalHeader().setStretchLastSection(True)
        self._notes(dict.fromkeys(VIEWS, NOT_COMPUTED))

    # ---- empty states and blind mode -------------------------------------------------------
    def _notes(self, notes: dict[str, str | None]) -> None:
        """Show each view, or the sentence saying why it is empty (None: the view)."""
        for key, text in notes.items():
            if key == "scatter":
                self.plot_note.setText(text or "")
                self.plot_note.setVisible(text is not None)
            else:
                self.views[key].show_note(text)

    def note(self, key: str) -> str | None:
        """The sentence shown in place of view ``key`` (board, agreement, scatter, queue)."""
        if key == "scatter":
            return self.plot_note.toPlainText() if self.plot_note.isVisible() else None
        view = self.views[key]
        return view.note.text() if view.currentWidget() is view.note else None

    def set_blind(self, blind: bool) -> None:
        """Rater view of a blind project: drop every figure and compute none until unlocked."""
        if blind == self.blind:
            return
        self.blind = blind
        for button in (self.compute_button, self.export_button, self.figure_button):
            button.setEnabled(not blind)
        self.status.setText("")
        if not blind:
            self._notes(dict.fromkeys(VIEWS, NOT_COMPUTED))
            return
        self.results = None
        for table in (self.board, self.agreement, self.queue):
            table.clear()
            table.setRowCount(0)
            table.setColumnCount(0)
        self.points.setData([])
        self.evaluator.clear()
        self.verdicts.setText("")
        self._notes(dict.fromkeys(VIEWS, BLIND))

    # ---- computation -------------------------------------------------------------------
    def outdated(self) -> None:
        """Ratings or verdicts changed (a judge worker, a merged rater, the CLI). The bootstrap
        is expensive: recompute only while the panel is on screen, after the one running, and
        otherwise when it is next shown."""
        if not self.isVisible():  # nothing computed yet: the first show computes anyway
            self._stale = self.results is not None
        elif self._computing:
            self._again = True
        else:
            self.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self._stale = False
            self._again = self._computing  # the one running may have started before the change
            if not self._computing:
                self.refresh()

    def _settled(self) -> None:
        self._computing = False
        if self._again:
            self._again = False
            self.refresh()

    def refresh(self, n_boot: int = 1000) -> None:
        project = self.state.project
        if project is None or self.blind:
            return
        if self.results is None:
            self._notes(dict.fromkeys(VIEWS, COMPUTING))
        self._stale = False
        self._computing = True
        self.compute_button.setEnabled(False)
        self.status.setText(f"computing {n_boot:,} case-bootstrap resamples…")
        self.bridge.submit(
            "results", compute, project.root, str(self.human_success.currentData()), 0, n_boot,
            on_done=self.show_results, on_error=self._failed,
        )  # fmt: skip

    def _failed(self, err: BaseException) -> None:
        self.compute_button.setEnabled(not self.blind)
        if self.blind and isinstance(err, UserError):
            pass  # locked while it computed: the views keep saying so
        elif isinstance(err, UserError):  # no ratings yet, an unknown study: say it in place
            self.status.setText(f"could not compute: {err}")
            self.results = None
            self._notes(dict(failed(str(err))))
        else:  # a bug: the error boundary reports it with its traceback
            self.status.setText("could not compute (a bug: see the report)")
            self.bridge.fail("results", err)
        self._settled()

    def show_results(self, res: AgreementReport) -> None:
        if self.blind:  # locked while it computed: nothing of it is kept
            self.compute_button.setEnabled(False)
            self._settled()
            return
        self.results = res
        self.compute_button.setEnabled(True)
        self.status.setText(" · ".join(res.describe()))
        self._fill_board(res.leaderboard)
        _fill(
            self.agreement,
            ("Group", "Evaluator", "Axis", "Metric", "Estimate [95% CI]", "n", "Why empty"),
            [
                (
                    r.group,
                    r.evaluator,
                    r.axis,
                    r.metric,
                    _fmt(r.estimate, r.ci_low, r.ci_high),
                    str(r.n),
                    r.why_empty() or "",
                )
                for r in res.agreement.rows
            ],
        )
        self._wrap_reasons()
        self._notes({"board": board_note(res), "agreement": agreement_note(res)})
        self.evaluator.blockSignals(True)
        self.evaluator.clear()
        self.evaluator.addItems([e.name for e in res.data.evaluators])
        self.evaluator.blockSignals(False)
        self.draw_scatter()
        self._fill_queue()
        self._settled()

    def _fill_board(self, board: Leaderboard) -> None:
        cell = {(r.model, r.evaluator, r.metric): r for r in board.rows}
        header = ["Model"]
        for ev in board.evaluators:
            header += [f"{ev} T", f"{ev} P", f"{ev} Agg"]
        rows = []
        for model in board.models:
            row = [model]
            for ev in board.evaluators:
                for metric in ("T", "P", "Agg"):
                    c = cell.get((model, ev, metric))
                    row.append("—" if c is None else _fmt(c.estimate, c.ci_low, c.ci_high))
            rows.append(row)
        _fill(self.board, header, rows)

    def _wrap_reasons(self) -> None:
        """The "Why empty" sentences are read in full: wrapped in a column of bounded width,
        the rows as tall as they need, and each one's whole text as its tooltip and as the
        tooltip of the row's "—" (the column may be scrolled out of a narrow dock)."""
        table, why = self.agreement, self.agreement.columnCount() - 1
        if why < 0:
            return
        for r in range(table.rowCount()):
            item, estimate = table.item(r, why), table.item(r, 4)
            if item is not None and item.text():
                item.setToolTip(item.text())
                if estimate is not None:
                    estimate.setToolTip(f"empty: {item.text()}")
        table.setColumnWidth(why, min(max(table.columnWidth(why), 80), WHY_WIDTH))
        table.resizeRowsToContents()

    # ---- scatter and queue -------------------------------------------------------------
    def _pair(self) -> tuple[np.ndarray, np.ndarray] | None:
        res = self.results
        if res is None or not res.data.evaluators:
            return None
        ev = res.data.evaluators[max(0, self.evaluator.currentIndex())]
        axis = self.axis.currentText() or "final"
        return res.consensus[axis], ev.axis(axis)

    def draw_scatter(self) -> None:
        pair = self._pair()
        res = self.results
        if pair is None or res is None:
            self.points.setData([])
            if res is not None:  # computed, but no judge to plot
                self._notes({"scatter": scatter_note(res, None, self.axis.currentText(), 0)})
            return
        human, judge = pair
        ok = np.isfinite(human) & np.isfinite(judge)
        ids = [vid for vid, keep in zip(res.data.panel.video_ids, ok, strict=True) if keep]
        self.points.setData(x=human[ok], y=judge[ok], data=ids)
        name = self.evaluator.currentText() or None
        self._notes({"scatter": scatter_note(res, name, self.axis.currentText(), len(ids))})

    def _clicked(self, _item: object, points: Sequence[pg.SpotItem], *_a: object) -> None:
        if points:
            video_id = str(points[0].data())
            self.show_verdicts(video_id)
            self.open_video.emit(video_id)

    def show_verdicts(self, video_id: str) -> None:
        res = self.results
        if res is None:
            return
        panel = res.data.panel
        i = panel.video_ids.index(video_id)

        def f(v: float) -> str:
            return "—" if not math.isfinite(v) else f"{v:.1f}"

        raters = ", ".join(
            f"{name}: T {f(panel.task[i, j])} P {f(panel.physics[i, j])}"
            for j, name in enumerate(res.data.raters[i])
        )
        judges = "<br>".join(
            f"<b>{e.name}</b>: T {f(e.task[i])} · P {f(e.physics[i])} · S {f(e.final[i])}"
            for e in res.data.evaluators
        )
        c = res.consensus
        self.verdicts.setText(
            f"<table width='100%'><tr><td valign='top'><b>Human consensus</b> ({video_id}): "
            f"T {f(c['task'][i])} · P {f(c['physics'][i])} · S {f(c['final'][i])}<br>"
            f"<span style='color:gray'>{raters or 'no ratings'}</span></td>"
            f"<td valign='top'>{judges or 'no judge run'}</td></tr></table>"
        )

    def _fill_queue(self) -> None:
        res = self.results
        if res is None:
            return
        queue = res.disagreements()  # the core's queue, against the first judge

        def f(v: float) -> str:
            return "—" if not math.isfinite(v) else f"{v:.1f}"

        _fill(
            self.queue,
            ("Video", "|judge − consensus| (S)", "Rater spread (T)", "Consensus S", "Judge S"),
            [(r.video_id, f(r.gap), f(r.spread), f(r.consensus), f(r.judge)) for r in queue.rows],
        )
        self._notes({"queue": queue_note(res, len(queue.rows))})

    # ---- export ------------------------------------------------------------------------
    def export_csv(self) -> None:
        table = {0: self.board, 1: self.agreement, 3: self.queue}.get(self.tabs.currentIndex())
        if table is None:
            table = self.agreement
        path, _ = QFileDialog.getSaveFileName(self, "Export table", "results.csv", "CSV (*.csv)")
        if path:
            table_to_csv(table, Path(path))

    def export_figure(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Export scatter", "judge-vs-human.png", "PNG (*.png);;SVG (*.svg)"
        )
        if path:
            self.save_figure(Path(path))

    def save_figure(self, path: Path) -> None:
        """PNG through pyqtgraph's exporter; SVG through Qt's own generator (pyqtgraph's SVG
        exporter cannot parse the path syntax Qt 6.11 writes)."""
        if path.suffix.lower() != ".svg":
            ImageExporter(self.plot.plotItem).export(str(path))
            return
        gen = QSvgGenerator()
        gen.setFileName(str(path))
        gen.setSize(self.plot.size())
        gen.setViewBox(self.plot.rect())
        gen.setTitle("Judge vs human")
        painter = QPainter(gen)
        try:
            self.plot.render(painter)
        finally:
            painter.end()
