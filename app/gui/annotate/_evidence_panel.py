"""Evidence marks of the current video: click one to seek the player to it."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from app.gui.common import AnnotateState
from storage import EvidenceMark


class EvidencePanel(QListWidget):
    """One row per mark: subgoal, gate, frames, source times, note."""

    delete_requested = Signal(int)
    note_requested = Signal(int)

    def __init__(self, state: AnnotateState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.st = state
        self.marks: list[EvidenceMark] = []
        self.itemClicked.connect(self._seek)
        self.itemActivated.connect(self._seek)
        self.itemDoubleClicked.connect(self._note)
        self.setToolTip("Click to seek; double-click to write a note; Delete removes the mark")
        state.video_changed.connect(self.refresh)
        state.data_changed.connect(self.refresh)

    def refresh(self, times: object = None) -> None:
        self.clear()
        st = self.st
        if st.project is None or st.video is None:
            self.marks = []
            return
        labels = {s.id: s.label for s in st.plan()}
        self.marks = st.project.annotations.evidence(st.video.id, st.rater)
        for m in self.marks:
            sg = labels.get(m.subgoal_id, "video") if m.subgoal_id else "video"
            box = " ▣" if m.box else ""
            note = f" — {m.note}" if m.note else ""
            item = QListWidgetItem(
                f"{sg} {m.gate or ''}  frames {m.start_frame}–{m.end_frame}{box}{note}"
            )
            item.setData(Qt.ItemDataRole.UserRole, m.id)
            self.addItem(item)

    def _note(self, item: QListWidgetItem) -> None:
        mid = int(item.data(Qt.ItemDataRole.UserRole))
        # Edit after this event returns: saving the note rebuilds this list, which must not
        # happen inside the list's own mouse handler (Qt still uses the item afterwards).
        QTimer.singleShot(0, lambda: self.note_requested.emit(mid))

    def _seek(self, item: QListWidgetItem | None) -> None:
        if item is None:
            return
        mid = item.data(Qt.ItemDataRole.UserRole)
        for m in self.marks:
            if m.id == mid:
                self.st.seek(m.start_frame)
                self.st.set_range((m.start_frame, m.end_frame))

    def keyPressEvent(self, event: object) -> None:  # Delete removes the selected mark
        from PySide6.QtGui import QKeyEvent

        assert isinstance(event, QKeyEvent)
        item = self.currentItem()
        if event.key() in (Qt.Key.Key_Delete,) and item is not None:
            self.delete_requested.emit(int(item.data(Qt.ItemDataRole.UserRole)))
            return
        super().keyPressEvent(event)
