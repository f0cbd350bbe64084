"""The timeline under the video: seconds ruler, evidence marks, range and playhead.

Click to seek, drag to select a range, click a mark to seek to it and select its range.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from app.gui.common._state import AnnotateState
from storage.media import VideoIndex

GATE_COLORS = {
    "T1": "#4e79a7",
    "T2": "#59a14f",
    "T3": "#76b7b2",
    "P1": "#e15759",
    "P2": "#f28e2b",
    "P3": "#edc948",
    "P4": "#b07aa1",
    None: "#9c9c9c",
}


@dataclass(frozen=True)
class Mark:
    id: int
    start: int
    end: int
    gate: str | None
    label: str


class Timeline(QWidget):
    """Paints the timeline and turns clicks into seeks and drags into a range."""

    RULER = 18
    LANE = 14

    def __init__(self, state: AnnotateState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.index: VideoIndex | None = None
        self.marks: list[Mark] = []
        self.setMinimumHeight(self.RULER + 3 * self.LANE + 10)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)
        self._press_frame: int | None = None
        state.frame_changed.connect(lambda _f: self.update())
        state.range_changed.connect(lambda: self.update())
        state.video_changed.connect(lambda: self.update())

    def set_index(self, index: VideoIndex | None) -> None:
        self.index = index
        self.update()

    def set_marks(self, marks: list[Mark]) -> None:
        self.marks = marks
        self.update()

    # ---- geometry ----------------------------------------------------------------------
    def _x(self, frame: float) -> float:
        n = max(1, self.state.frame_count - 1)
        return 8 + (self.width() - 16) * frame / n

    def frame_at(self, x: float) -> int:
        n = max(1, self.state.frame_count - 1)
        return round(min(max((x - 8) / max(1, self.width() - 16), 0.0), 1.0) * n)

    def _lanes(self) -> list[tuple[Mark, QRectF]]:
        out: list[tuple[Mark, QRectF]] = []
        lane_end: list[float] = []
        for m in sorted(self.marks, key=lambda m: (m.start, m.end)):
            x0, x1 = self._x(m.start), max(self._x(m.end), self._x(m.start) + 4)
            lane = next((k for k, end in enumerate(lane_end) if end < x0), len(lane_end))
            if lane == len(lane_end):
                lane_end.append(x1)
            lane_end[lane] = x1
            y = self.RULER + 4 + (lane % 3) * self.LANE
            out.append((m, QRectF(x0, y, x1 - x0, self.LANE - 3)))
        return out

    # ---- painting ----------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        pal = self.palette()
        p.fillRect(self.rect(), pal.base())
        if self.index is None or self.state.frame_count == 0:
            return
        ix = self.index
        # ruler: a tick per second, a label every few seconds
        p.setPen(pal.text().color())
        duration = ix.duration_s
        step = 1 if duration <= 20 else 5 if duration <= 120 else 30
        sec = 0.0
        while sec <= duration:
            x = self._x(ix.index_at(sec))
            p.drawLine(int(x), 0, int(x), 5)
            if int(sec) % (step * 2) == 0:
                p.drawText(int(x) + 2, 14, f"{sec:g}s")
            sec += step
        if self.state.range:
            a, b = self.state.range
            p.fillRect(
                QRectF(self._x(a), 0, max(2, self._x(b) - self._x(a)), self.height()),
                QColor(80, 200, 255, 60),
            )
        for m, rect in self._lanes():
            p.fillRect(rect, QColor(GATE_COLORS.get(m.gate, GATE_COLORS[None])))
            if rect.width() > 30:
                p.setPen(QColor("white"))
                p.drawText(rect.adjusted(2, -1, 0, 0), Qt.AlignmentFlag.AlignVCenter, m.label)
        x = self._x(self.state.frame)
        p.setPen(QPen(QColor(230, 40, 40), 2))
        p.drawLine(int(x), 0, int(x), self.height())

    # ---- mouse -------------------------------------------------------------------------
    def mark_at(self, x: float, y: float) -> Mark | None:
        for m, rect in self._lanes():
            if rect.adjusted(-2, -2, 2, 2).contains(x, y):
                return m
        return None

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self.state.frame_count == 0:
            return
        pos = event.position()
        mark = self.mark_at(pos.x(), pos.y())
        if mark is not None:
            self.state.seek(mark.start)
            self.state.set_range((mark.start, mark.end))
            self._press_frame = None
            return
        self._press_frame = self.frame_at(pos.x())
        self.state.seek(self._press_frame)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._press_frame is None or not (event.buttons() & Qt.MouseButton.LeftButton):
            return
        f = self.frame_at(event.position().x())
        self.state.seek(f)
        if f != self._press_frame:
            self.state.set_range((self._press_frame, f))

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        self._press_frame = None
