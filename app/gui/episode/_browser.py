"""The project's episodes: filterable by any column's text and sortable (numbers by value); a
double click (or Enter) opens one. Under the list, the selected episode's failure attribution and
note are edited in place and stored as undoable changes of the window's rater, so Edit → Undo
(Ctrl+Z) takes them back; the list re-reads the project whenever stored data changes.

The editor is a small form under the list rather than a dialog: a researcher going down a list of
failed episodes selects one, picks who failed, types why and presses Enter, then the next — no
window to open and close per episode, and the list stays in view while they do it.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from annotation import UserError
from app.gui.common import AnnotateState
from storage import AttributionParty, EpisodeRow, Project, episode_rows

COLUMNS = (
    "episode", "scenario", "persona", "assistant", "arm", "agent", "mode", "status", "success",
    "in time", "recall", "silenced", "ticks", "attributed to", "note",
)  # fmt: skip
HEADER_TIPS = {
    "persona": "The simulated user's persona (interactive episodes)",
    "assistant": "The assistant under test (its label in a batch), for interactive episodes",
    "arm": "The robot arm the episode ran with, when it recorded one",
    "success": "Task goal met at the end",
    "in time": "In-time success: goal met before the deadline from the reference run (IVG §4.1)",
    "recall": "Error-detection recall: scheduled errors the assistant flagged (IVG §4.2)",
    "silenced": "Model replies still invalid after the repair budget (the participant said "
    "nothing), of all its model replies; the tooltip has repairs, tokens and cost",
    "attributed to": "Who the failure is attributed to; (edited) when a person set it",
}
METRICS = ("success", "in_time_success", "detection_recall")
PARTIES: tuple[AttributionParty, ...] = ("assistant", "user", "environment", "none")
_KEY = Qt.ItemDataRole.UserRole


class _Item(QTableWidgetItem):
    """A cell that sorts by a number (blanks first) instead of by its text ("50%" < "100%")."""

    def __init__(self, text: str, key: float | None) -> None:
        super().__init__(text)
        self.key = key

    def __lt__(self, other: QTableWidgetItem) -> bool:
        if isinstance(other, _Item):
            return _order(self.key) < _order(other.key)
        return super().__lt__(other)


def _order(key: float | None) -> tuple[int, float]:
    return (0, 0.0) if key is None else (1, key)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def persona_of(r: EpisodeRow) -> str:
    """The persona's name: the batch's label, else the one the episode recorded ("" if none)."""
    if r.cell is not None and r.cell.persona != "-":  # "-": an agent's cell, no user
        return r.cell.persona
    p = r.episode.config.get("persona")
    return _text(p.get("name")) if isinstance(p, dict) else _text(p)


def assistant_of(r: EpisodeRow) -> str:
    """The batch's label for the participant under test (two labels may share a kind), else the
    assistant kind an interactive episode recorded."""
    if r.cell is not None:
        return r.cell.assistant
    return _text(r.episode.config.get("assistant"))


def _yes_no(value: float | None) -> str:
    return "" if value is None else ("yes" if value == 1.0 else "no")


def _calls_cell(r: EpisodeRow) -> QTableWidgetItem:
    """ "23/24": silenced of all model replies (blank without a model), by fraction; the
    tooltip says the rest (repaired, failed, tokens, cost)."""
    c = r.calls
    if not c.replies:
        return _Item("", None)
    item = _Item(f"{c.silenced}/{c.replies}", c.silenced / c.replies)
    item.setToolTip(
        f"{c.replies} model replies: {c.valid} valid, {c.repaired} repaired (valid after a "
        f"re-ask), {c.silenced} silenced, {c.failed} failed\n{c.tokens_in} tokens in, "
        f"{c.tokens_out} out · US${c.cost_usd:.4f}"
    )
    return item


def row_items(r: EpisodeRow) -> list[QTableWidgetItem]:
    """The cells of one episode's row, in :data:`COLUMNS` order."""
    ep, m, att, note = r.episode, r.metrics, r.attribution, r.note
    recall = m.get("detection_recall")
    attributed = ""
    if att is not None and not (att.party == "none" and att.source == "proposed"):
        attributed = att.party + (" (edited)" if att.source == "edited" else "")
    items: list[QTableWidgetItem] = [
        QTableWidgetItem(ep.id[:8]), QTableWidgetItem(ep.scenario),
        QTableWidgetItem(persona_of(r)), QTableWidgetItem(assistant_of(r)),
        QTableWidgetItem(_text(ep.config.get("arm"))), QTableWidgetItem(ep.agent),
        QTableWidgetItem(ep.mode.value), QTableWidgetItem(ep.status.value),
        _Item(_yes_no(m.get("success")), m.get("success")),
        _Item(_yes_no(m.get("in_time_success")), m.get("in_time_success")),
        _Item("" if recall is None else f"{recall:.0%}", recall), _calls_cell(r),
        _Item(str(ep.ticks), float(ep.ticks)),
        QTableWidgetItem(attributed), QTableWidgetItem("" if note is None else note.note),
    ]  # fmt: skip
    if att is not None:
        items[-2].setToolTip(
            f"{att.party} ({att.source} {att.updated[:16].replace('T', ' ')} UTC)"
            + (f": {att.reason}" if att.reason else "")
        )
    if ep.end_reason:  # why it failed, gave up or was stopped
        items[COLUMNS.index("status")].setToolTip(f"{ep.status.value}: {ep.end_reason}")
    if note is not None:
        items[-1].setToolTip(f"{note.note}\n(written {note.updated[:16].replace('T', ' ')} UTC)")
    for item in items:
        item.setData(_KEY, ep.id)
    return items


#: what an empty list says: where episodes come from
EMPTY = ("No episodes yet: press Start live episode (top of the workspace), import another "
         "harness's recording with Import bundle…, or run one from the command line: "
         "workbench sim run SCENARIO --project DIR.")  # fmt: skip


class EpisodeBrowser(QWidget):
    open_episode = Signal(str)
    import_requested = Signal()
    compare_requested = Signal(str)  # the selected episode, to show under the open one

    def __init__(self) -> None:
        super().__init__()
        self.project: Project | None = None
        self.state: AnnotateState | None = None  # the window's: its rater owns the edits
        self.rows: dict[str, EpisodeRow] = {}
        self.ids: list[str] = []
        self._stale = False
        self._sized = False
        self._haystack: dict[str, str] = {}  # each row's text, lower-cased, for the filter
        lay = QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText(
            "Filter: scenario, persona, assistant, arm, status, attribution, note…"
        )
        self.filter.textChanged.connect(self._apply_filter)
        self.table = QTableWidget(0, len(COLUMNS))
        for c, name in enumerate(COLUMNS):
            head = QTableWidgetItem(name)
            head.setToolTip(HEADER_TIPS.get(name, ""))
            self.table.setHorizontalHeaderItem(c, head)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        # sized to the contents once per refresh (not on every cell change, which costs a
        # refresh of 1,000 episodes more than everything else), then the user's to drag
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setMaximumSectionSize(260)  # a long note or reason is elided; its tooltip is whole
        # no column sorted until the user clicks one: the list starts newest first, as stored
        header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.table.itemActivated.connect(self._activated)
        self.table.itemDoubleClicked.connect(self._activated)
        self.table.itemSelectionChanged.connect(self._selection_changed)
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
        lay.addWidget(self._editor())
        self._enable_editor()

    def _editor(self) -> QWidget:
        box = QWidget()
        grid = QGridLayout(box)
        grid.setContentsMargins(0, 2, 0, 0)
        self.editing = QLabel("Select an episode to attribute its failure or write a note.")
        self.editing.setWordWrap(True)
        self.party = QComboBox()
        self.party.addItems(PARTIES)
        self.party.setPlaceholderText("who failed?")
        self.party.setToolTip("Who the failure is attributed to (none: it did not fail)")
        self.reason = QLineEdit()
        self.reason.setPlaceholderText("why (Enter saves)")
        self.reason.returnPressed.connect(self.commit_attribution)
        self.attribute_button = QPushButton("Attribute")
        self.attribute_button.setToolTip("Store this attribution (Edit → Undo takes it back)")
        self.attribute_button.clicked.connect(self.commit_attribution)
        self.note = QLineEdit()
        self.note.setPlaceholderText("note (Enter saves; empty clears)")
        self.note.returnPressed.connect(self.commit_note)
        self.note_button = QPushButton("Save note")
        self.note_button.clicked.connect(self.commit_note)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        grid.addWidget(self.editing, 0, 0, 1, 3)
        grid.addWidget(QLabel("failure"), 1, 0)
        grid.addWidget(self.party, 1, 1, 1, 2)
        grid.addWidget(QLabel("why"), 2, 0)
        grid.addWidget(self.reason, 2, 1)
        grid.addWidget(self.attribute_button, 2, 2)
        grid.addWidget(QLabel("note"), 3, 0)
        grid.addWidget(self.note, 3, 1)
        grid.addWidget(self.note_button, 3, 2)
        grid.addWidget(self.message, 4, 0, 1, 3)
        grid.setColumnStretch(1, 1)
        return box

    # ---- the window's state ----------------------------------------------------------------
    def bind(self, state: AnnotateState) -> None:
        """Edit as the window's rater, and re-read the list after any edit, undo or redo."""
        self.state = state
        state.data_changed.connect(self._data_changed)
        self._enable_editor()

    def _data_changed(self) -> None:
        self.outdated()

    def outdated(self) -> None:
        """The stored episodes changed (an edit here, a live run, a worker, the CLI): re-read
        now if the list is on screen, else when it is next shown, not once per change."""
        if self.isVisible():
            self.refresh()
        else:
            self._stale = True

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()

    # ---- the list --------------------------------------------------------------------------
    def show_project(self, project: Project | None) -> None:
        same = project is self.project
        keep = self.selected_id() if same else None
        before = self.rows
        place = self._place() if same else None
        if not same:
            self._sized = False  # another project's columns: fit them to it
        self.project = project
        self._stale = False
        # quiet while rebuilding: clearing the rows would "deselect" and blank the editor
        self.table.blockSignals(True)
        self.table.setSortingEnabled(False)
        self.table.setRowCount(0)
        self.ids = []
        self.rows = {}
        self._haystack = {}
        if project is not None:
            rows = episode_rows(project, METRICS)
            self.table.setRowCount(len(rows))
            for r, row in enumerate(rows):
                items = row_items(row)
                for c, item in enumerate(items):
                    self.table.setItem(r, c, item)
                eid = row.episode.id
                self.ids.append(eid)
                self.rows[eid] = row
                self._haystack[eid] = " ".join(i.text() for i in items).lower()
        self.table.setSortingEnabled(True)  # sorts by the column the user chose, if any
        if not self._sized and self.rows:
            self.table.resizeColumnsToContents()
            self._sized = True  # later refreshes keep the widths the user may have dragged
        self._apply_filter(self.filter.text())
        self.message.setText(EMPTY if project is not None and not self.rows else "")
        if keep is not None and keep in self.rows:
            self.select(keep)
        if place is not None:
            self._restore(place)
        self.table.blockSignals(False)
        if keep is not None and keep in self.rows:
            self._fill(self.rows[keep], before.get(keep))
        else:
            self._fill(None, None)

    def refresh(self) -> None:
        """Re-read the project's episodes, keeping the selection, filter, sort, scroll position
        and what is being typed."""
        self.show_project(self.project)

    def _place(self) -> tuple[str | None, int, int]:
        """Where the user is looking: the episode in the top row shown (None at the very top,
        where a new episode should come into view) and both scroll bars."""
        v, h = self.table.verticalScrollBar(), self.table.horizontalScrollBar()
        top = self.table.item(self.table.rowAt(0), 0) if v.value() > v.minimum() else None
        return (None if top is None else str(top.data(_KEY)), v.value(), h.value())

    def _restore(self, place: tuple[str | None, int, int]) -> None:
        """Put the same episode back at the top (rows landing above it do not push it away)."""
        top, v, h = place
        row = None if top is None else self.row_of(top)
        item = None if row is None else self.table.item(row, 0)
        if item is not None:
            self.table.scrollToItem(item, QAbstractItemView.ScrollHint.PositionAtTop)
        else:
            self.table.verticalScrollBar().setValue(v)
        self.table.horizontalScrollBar().setValue(h)

    def row_of(self, episode_id: str) -> int | None:
        for r in range(self.table.rowCount()):
            item = self.table.item(r, 0)
            if item is not None and item.data(_KEY) == episode_id:
                return r
        return None

    def select(self, episode_id: str) -> None:
        row = self.row_of(episode_id)
        if row is not None:
            self.table.setCurrentCell(row, 0)

    def selected_id(self) -> str | None:
        items = self.table.selectedItems()
        return None if not items else str(items[0].data(_KEY))

    def _apply_filter(self, text: str) -> None:
        """Show the rows whose cells contain every word typed (in any column, any case)."""
        words = text.lower().split()
        for r in range(self.table.rowCount()):
            item = self.table.item(r, 0)
            row = "" if item is None else self._haystack.get(str(item.data(_KEY)), "")
            self.table.setRowHidden(r, not all(w in row for w in words))

    # ---- the editor ------------------------------------------------------------------------
    def _selection_changed(self) -> None:
        eid = self.selected_id()
        self.message.setText("")
        self._fill(None if eid is None else self.rows.get(eid), None)

    def _fill(self, row: EpisodeRow | None, before: EpisodeRow | None) -> None:
        """Show ``row``'s stored attribution and note; after a refresh (``before``: the same
        episode as it was) only the fields whose stored value changed, so text being typed in
        the other field survives saving this one."""
        if row is None:
            self.editing.setText("Select an episode to attribute its failure or write a note.")
            self.party.setCurrentIndex(-1)
            self.reason.clear()
            self.note.clear()
        else:
            ep = row.episode
            self.editing.setText(f"Episode <b>{ep.id[:8]}</b> · {ep.scenario} · {ep.status.value}")
            att, was = row.attribution, None if before is None else before.attribution
            # a field still showing what was stored follows the store; one the user has typed
            # into (unsaved) keeps their text, whoever changed the stored value meanwhile
            typed = (self.party.currentText(), self.reason.text()) != (
                ("", "") if was is None else (was.party, was.reason)
            )
            if before is None or (was != att and not typed):
                self.party.setCurrentIndex(-1 if att is None else self.party.findText(att.party))
                self.reason.setText("" if att is None else att.reason)
            typed_note = before is not None and self.note.text() != (
                "" if before.note is None else before.note.note
            )
            if before is None or (before.note != row.note and not typed_note):
                self.note.setText("" if row.note is None else row.note.note)
        self._enable_editor()

    def _enable_editor(self) -> None:
        on = self.state is not None and self.selected_id() is not None
        for w in (self.party, self.reason, self.attribute_button, self.note, self.note_button):
            w.setEnabled(on)

    def commit_attribution(self) -> None:
        """Store the selected episode's attribution as the rater's undoable change."""
        eid, project, state = self.selected_id(), self.project, self.state
        if eid is None or project is None or state is None:
            return
        k = self.party.currentIndex()
        if k < 0:
            self._say("choose who the failure is attributed to (none: it did not fail)", True)
            return
        party = PARTIES[k]
        try:
            project.batches.edit_attribution(eid, party, self.reason.text(), scope=state.rater)
        except UserError as err:
            self._say(str(err), True)
            return
        self._stored(state, f"attributed {eid[:8]} to {party}")

    def commit_note(self) -> None:
        """Store the selected episode's note (empty: cleared) as the rater's undoable change."""
        eid, project, state = self.selected_id(), self.project, self.state
        if eid is None or project is None or state is None:
            return
        text = self.note.text()
        try:
            project.notes.set_note(eid, text, scope=state.rater)
        except UserError as err:
            self._say(str(err), True)
            return
        self._stored(state, f"note {'saved' if text.strip() else 'cleared'} on {eid[:8]}")

    def _stored(self, state: AnnotateState, what: str) -> None:
        state.data_changed.emit()  # this list, the Edit menu's undo text, any other view
        if not self.isVisible():
            self.refresh()
        self._say(f"{what} as {state.rater} · Ctrl+Z undoes", False)
        self.table.setFocus()  # so Ctrl+Z reaches the window, not the line edit's own undo

    def _say(self, text: str, error: bool) -> None:
        self.message.setStyleSheet("color: #b00020;" if error else "")
        self.message.setText(text)

    def _compare(self) -> None:
        item = self.table.currentItem()
        if item is not None:
            self.compare_requested.emit(str(item.data(_KEY)))

    def _activated(self, item: QTableWidgetItem) -> None:
        self.open_episode.emit(str(item.data(_KEY)))
