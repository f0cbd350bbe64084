"""A scroll area for dock contents that may be taller than a small screen."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget


class VerticalScroll(QScrollArea):
    """``widget`` in a scroll area that scrolls only up and down, so a short screen scrolls the
    gate help instead of pushing the window taller. It is never narrower than the widget needs,
    so the answer buttons on the right are never cut off, even when the widget grows."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__()
        self._inner = widget  # first: setWidget already sends events to the filter below
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWidget(widget)
        widget.installEventFilter(self)

    def minimumSizeHint(self) -> QSize:
        inner = self._inner.minimumSizeHint().width()
        bar = self.verticalScrollBar().sizeHint().width()
        return QSize(inner + bar, super().minimumSizeHint().height())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._inner and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()  # the widget's minimum width may have changed
        return super().eventFilter(watched, event)


__all__ = ["VerticalScroll"]
