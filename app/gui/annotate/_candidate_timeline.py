"""The annotate timeline with the continuity scan's candidate windows as a lane of suggestions.

The candidates get their own thin lane under the evidence lanes, in a muted violet with a
dashed outline, so they never pass for evidence a rater marked; a faint band over the whole
height shows where the playhead stands relative to them. Hover shows score and reason; a click
on one seeks to its start. Nothing here records anything: they stay suggestions.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QRectF, Qt
from PySide6.QtGui import QColor, QHelpEvent, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QToolTip, QWidget

from app.gui.annotate._candidates import Candidate
from app.gui.common import AnnotateState, Timeline

CANDIDATE_FILL = QColor(149, 117, 205, 150)  # muted violet: not one of the gate colours
CANDIDATE_EDGE = QColor(94, 53, 177)
CANDIDATE_BAND = QColor(149, 117, 205, 28)


class CandidateTimeline(Timeline):
    """:class:`Timeline` plus a lane of candidate windows (see the module docstring)."""

    CAND_LANE = 13

    def __init__(self, state: AnnotateState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self.candidates: list[Candidate] = []
        self.setMinimumHeight(self.minimumHeight() + self.CAND_LANE + 2)

    def set_candidates(self, candidates: list[Candidate]) -> None:
        self.candidates = candidates
        self.update()

    def candidate_rects(self) -> list[tuple[Candidate, QRectF]]:
        y = self.RULER + 4 + 3 * self.LANE + 1
        out = []
        for c in self.candidates:
            x0 = self._x(c.start_frame)
            x1 = max(self._x(c.end_frame), x0 + 4)  # a one-frame window stays visible
            out.append((c, QRectF(x0, y, x1 - x0, self.CAND_LANE - 2)))
        return out

    def candidate_at(self, x: float, y: float) -> Candidate | None:
        for c, rect in self.candidate_rects():
            if rect.adjusted(-2, -2, 2, 2).contains(x, y):
                return c
        return None

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self.index is None or self.state.frame_count == 0 or not self.candidates:
            return
        p = QPainter(self)
        small = p.font()
        small.setPointSizeF(max(6.0, small.pointSizeF() - 2))
        p.setFont(small)
        for c, rect in self.candidate_rects():
            p.fillRect(QRectF(rect.x(), 0, rect.width(), self.height()), CANDIDATE_BAND)
            p.fillRect(rect, CANDIDATE_FILL)
            p.setPen(QPen(CANDIDATE_EDGE, 1, Qt.PenStyle.DashLine))
            p.drawRect(rect)
            if rect.width() > 26:
                p.setPen(QColor("white"))
                p.drawText(rect.adjusted(3, 0, 0, 0), Qt.AlignmentFlag.AlignVCenter, f"?{c.number}")
        # the lane says what it is where no candidate covers its start
        first = self.candidate_rects()[0][1]
        if first.x() > 80:
            p.setPen(self.palette().placeholderText().color())
            p.drawText(QRectF(10, first.y(), 120, first.height()),
                       Qt.AlignmentFlag.AlignVCenter, "suggestions")  # fmt: skip

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip and isinstance(e, QHelpEvent):
            c = self.candidate_at(e.pos().x(), e.pos().y())
            if c is None:
                QToolTip.hideText()
                e.ignore()
            else:
                QToolTip.showText(e.globalPos(), c.tooltip(len(self.candidates)), self)
            return True
        return super().event(e)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        pos = event.position()
        c = self.candidate_at(pos.x(), pos.y())
        if event.button() == Qt.MouseButton.LeftButton and c is not None:
            self.state.seek(c.start_frame)
            return
        super().mousePressEvent(event)


__all__ = ["CandidateTimeline"]
