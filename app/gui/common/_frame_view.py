"""The video picture: aspect-correct, with evidence boxes and a box you can draw."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

Box = tuple[float, float, float, float]


class FrameView(QWidget):
    """Shows one frame scaled to fit. Drag on the picture to draw an evidence box."""

    box_drawn = Signal(object)  # Box in 0..1 image coordinates, or None when cleared

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(320, 180)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self._image: QImage | None = None
        self._boxes: list[tuple[Box, str]] = []
        self._pending: Box | None = None
        self._drag_from: QPointF | None = None
        self._drag_to: QPointF | None = None
        self._placeholder = "No video open"

    def set_image(self, image: QImage | None) -> None:
        self._image = image
        self.update()

    def set_placeholder(self, text: str) -> None:
        self._placeholder = text
        self.update()

    def set_boxes(self, boxes: list[tuple[Box, str]]) -> None:
        self._boxes = boxes
        self.update()

    def pending_box(self) -> Box | None:
        return self._pending

    def clear_pending_box(self) -> None:
        self._pending = None
        self.update()

    # ---- geometry ----------------------------------------------------------------------
    def image_rect(self) -> QRectF:
        if self._image is None or self._image.isNull():
            return QRectF()
        iw, ih = self._image.width(), self._image.height()
        scale = min(self.width() / iw, self.height() / ih)
        w, h = iw * scale, ih * scale
        return QRectF((self.width() - w) / 2, (self.height() - h) / 2, w, h)

    def _to_image(self, p: QPointF) -> QPointF:
        r = self.image_rect()
        x = min(max((p.x() - r.x()) / max(r.width(), 1), 0.0), 1.0)
        y = min(max((p.y() - r.y()) / max(r.height(), 1), 0.0), 1.0)
        return QPointF(x, y)

    def _to_widget(self, box: Box) -> QRectF:
        r = self.image_rect()
        x, y, w, h = box
        return QRectF(r.x() + x * r.width(), r.y() + y * r.height(), w * r.width(), h * r.height())

    # ---- painting ----------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(18, 18, 20))
        if self._image is None or self._image.isNull():
            p.setPen(QColor(150, 150, 150))
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self._placeholder)
            return
        p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        p.drawImage(self.image_rect(), self._image)
        for box, label in self._boxes:
            rect = self._to_widget(box)
            p.setPen(QPen(QColor(255, 196, 0), 2))
            p.drawRect(rect)
            p.drawText(rect.topLeft() + QPointF(4, 14), label)
        drawing = self._drag_from is not None and self._drag_to is not None
        if self._pending is not None or drawing:
            p.setPen(QPen(QColor(80, 200, 255), 2, Qt.PenStyle.DashLine))
            if drawing:
                assert self._drag_from is not None and self._drag_to is not None
                p.drawRect(QRectF(self._drag_from, self._drag_to).normalized())
            elif self._pending is not None:
                p.drawRect(self._to_widget(self._pending))

    # ---- box drawing -------------------------------------------------------------------
    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self._image is not None:
            self._drag_from = event.position()
            self._drag_to = event.position()
        elif event.button() == Qt.MouseButton.RightButton:
            self.clear_pending_box()
            self.box_drawn.emit(None)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._drag_from is not None:
            self._drag_to = event.position()
            self.update()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._drag_from is None:
            return
        a, b = self._to_image(self._drag_from), self._to_image(event.position())
        self._drag_from = self._drag_to = None
        x, y = min(a.x(), b.x()), min(a.y(), b.y())
        w, h = abs(a.x() - b.x()), abs(a.y() - b.y())
        if w > 0.01 and h > 0.01:
            self._pending = (x, y, w, h)
            self.box_drawn.emit(self._pending)
        self.update()
