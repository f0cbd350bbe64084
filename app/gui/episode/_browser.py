"""The project's episodes, filterable by any column's text and sortable; a double click (or
Enter) opens one. Failure attributions from batches show beside each episode."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from storage import Project

COLUMNS = ("episode", "scenario", "agent", "mode", "status", "success", "ticks", "attributed to")


class EpisodeBrowser(QWidget):
    open_episode = Signal(str)
    import_requested = Signal()
    compare_requested = Signal(str)  # the selected episode, to show under the open one

    def __init__(self) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter: scenario, agent, status, attribution…")
        self.filter.textChanged.connect(self._apply_filter)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemActivated.connect(self._activated)
        self.table.itemDoubleClicked.connect(self._activated)
        self.import_button = QPushButton("Import bundle…")
        self.import_button.setToolTip(
            "An episode recorded by another harness (workbench-episode-bundle/1, see "
            "docs/episode-bundle.md)"
        )
        self.import_button.clicked.connect(self.import_requested.emit)
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip(
            "Show the selected episode under the open one, on the same playhead, with the first "
            "tick their worlds differ"
        )
        self.compare_button.clicked.connect(self._compare)
        top = QHBoxLayout()
        top.addWidget(self.filter, 1)
        top.addWidget(self.compare_button)
        top.addWidget(self.import_button)
        lay.addLayout(top)
        lay.addWidget(self.table, 1)
        self.ids: list[str] = []

    def show_project(self, project: Project | None) -> None:
        self.table.setSortingEnabled(False)
        self.table.setRowCount(0)
        self.ids = []
        if project is None:
            return
        for ep in project.episodes.list():
            metrics = project.episodes.metrics(ep.id)
            success = metrics.get("success")
            att = project.batches.attribution(ep.id)
            values = (
                ep.id[:8], ep.scenario, ep.agent, ep.mode.value, ep.status.value,
                "" if success is None else ("yes" if success == 1.0 else "no"), str(ep.ticks),
                "" if att is None or att.party == "none" else att.party,
            )  # fmt: skip
            r = self.table.rowCount()
            self.table.insertRow(r)
            for c, v in enumerate(values):
                item = QTableWidgetItem(v)
                item.setData(Qt.ItemDataRole.UserRole, ep.id)
                if c == 6:
                    item.setData(Qt.ItemDataRole.DisplayRole, ep.ticks)
                self.table.setItem(r, c, item)
            self.ids.append(ep.id)
        self.table.setSortingEnabled(True)
        self._apply_filter(self.filter.text())

    def _apply_filter(self, text: str) -> None:
        words = text.lower().split()
        for r in range(self.table.rowCount()):
            cells = (self.table.item(r, c) for c in range(len(COLUMNS)))
            row = " ".join(c.text().lower() for c in cells if c is not None)
            self.table.setRowHidden(r, not all(w in row for w in words))

    def _compare(self) -> None:
        item = self.table.currentItem()
        if item is not None:
            self.compare_requested.emit(str(item.data(Qt.ItemDataRole.UserRole)))

    def _activated(self, item: QTableWidgetItem) -> None:
        self.open_episode.emit(str(item.data(Qt.ItemDataRole.UserRole)))
