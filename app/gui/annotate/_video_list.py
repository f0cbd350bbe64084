"""The list of videos to annotate: anonymous ids only, grouped by case, with progress."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QWidget

from app.gui.common import AnnotateState
from storage import Project, Video, bundle_origin

VIDEO_ROLE = Qt.ItemDataRole.UserRole


def _fmt(v: float | None) -> str:
    return "—" if v is None else f"{v:.1f}"


class VideoList(QTreeWidget):
    """Cases and their videos. Shows nothing that could unblind a rater (no model or file)."""

    video_activated = Signal(object)  # Video

    def __init__(self, state: AnnotateState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.st = state
        self._shown: Project | None = None  # the project the list was last read from
        self.setHeaderLabels(["Video", "S"])
        self.setColumnWidth(0, 150)
        self.setRootIsDecorated(True)
        self.setUniformRowHeights(True)
        self.itemActivated.connect(self._activate)
        self.itemClicked.connect(self._activate)
        state.project_changed.connect(self.refresh)
        # Re-scoring every video costs a few queries each: coalesce a burst of edits (one per
        # keypress while answering gates) into one pass instead of one pass per keypress.
        self._rescore = QTimer(self)
        self._rescore.setSingleShot(True)
        self._rescore.setInterval(300)
        self._rescore.timeout.connect(self.refresh_scores)
        state.data_changed.connect(lambda: self._rescore.start())
        state.video_changed.connect(self._select_current)

    def refresh(self) -> None:
        """Re-read cases and videos; on the same project the highlighted video and the scroll
        position stay (videos imported by another process land without moving the user)."""
        st = self.st
        same = st.project is not None and st.project is self._shown
        keep = self._current_id() if same else None
        scroll = self.verticalScrollBar().value()
        self._shown = st.project
        self.clear()
        if st.project is None:
            return
        origin = bundle_origin(st.project)
        if origin is not None:  # a rater's assignment: their own order, no case grouping
            parent = QTreeWidgetItem(self, [f"Assignment ({origin.study_id})", ""])
            parent.setFlags(parent.flags() & ~Qt.ItemFlag.ItemIsSelectable)
            for a in st.project.studies.assignments(origin.study_id, origin.rater_id):
                v = st.project.video(a.video_id)
                label = f"{v.id} (calibration)" if a.calibration else v.id
                QTreeWidgetItem(parent, [label, ""]).setData(0, VIDEO_ROLE, v)
            parent.setExpanded(True)
        else:
            for case in st.project.cases():
                parent = QTreeWidgetItem(self, [case.id, ""])
                parent.setFlags(parent.flags() & ~Qt.ItemFlag.ItemIsSelectable)
                for v in st.project.videos(case.id):
                    QTreeWidgetItem(parent, [v.id, ""]).setData(0, VIDEO_ROLE, v)
                parent.setExpanded(True)
        self.refresh_scores()
        if same:
            for item in self._video_items():
                if item.data(0, VIDEO_ROLE).id == keep:
                    self.setCurrentItem(item)
            self.verticalScrollBar().setValue(scroll)

    def _current_id(self) -> str | None:
        item = self.currentItem()
        v = None if item is None else item.data(0, VIDEO_ROLE)
        return None if v is None else str(v.id)

    def refresh_scores(self) -> None:
        st = self.st
        if st.project is None:
            return
        for item in self._video_items():
            v: Video = item.data(0, VIDEO_ROLE)
            live = st.project.annotations.live_score(v.id, v.case_id, st.rater)
            text = _fmt(live.score.s) if live.n_complete else ""
            item.setText(1, text + ("*" if live.provisional and live.n_complete else ""))

    def videos(self) -> list[Video]:
        return [i.data(0, VIDEO_ROLE) for i in self._video_items()]

    def _video_items(self) -> list[QTreeWidgetItem]:
        out: list[QTreeWidgetItem] = []
        for k in range(self.topLevelItemCount()):
            parent = self.topLevelItem(k)
            if parent is not None:
                children = (parent.child(j) for j in range(parent.childCount()))
                out.extend(c for c in children if c is not None)
        return out

    def _activate(self, item: QTreeWidgetItem) -> None:
        v = item.data(0, VIDEO_ROLE)
        if v is not None and (self.st.video is None or v.id != self.st.video.id):
            self.video_activated.emit(v)

    def _select_current(self) -> None:
        cur = self.st.video
        for item in self._video_items():
            if cur is not None and item.data(0, VIDEO_ROLE).id == cur.id:
                self.setCurrentItem(item)
