"""The episode's timeline (pyqtgraph): one row per track, ticks along x, one playhead.

Items are drawn in bulk — one bar item per kind of span, one scatter per kind of mark, one
line item for all reply arrows — so a trace of 100,000 items stays a handful of graphics
objects. A click anywhere on a row picks the item under it (or the nearest on that row within a
few pixels) and seeks every view; dragging the playhead seeks too. Replies that went stale
(the world changed between generation and delivery) are drawn in red.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QLineF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QGraphicsItem

from sim.review import Item

# pyqtgraph's TextItem (and the InfLineLabel of the divergence line) can be asked to update its
# transform by a linked view's range change before its __init__ has set these: defaults on the
# class make that first call a plain update instead of an AttributeError in a Qt slot.
pg.TextItem._lastTransform = None
pg.TextItem._lastScene = None

ROW_H = 0.6
COLORS = {
    "user": "#3b7dd8", "harness": "#d8833b", "agent": "#5aa05a", "scripted": "#5aa05a",
    "failed": "#b03030", "rejected": "#c0392b", "flag": "#c0392b",
    "fresh": "#7f8c8d", "stale": "#e74c3c", "trigger": "#8e44ad", "commit": "#c0392b",
    "resolve": "#27ae60", "hold": "#e8d5f0", "request": "#d6eaf8", "true": "#27ae60",
    "assistant": "#2d8a4e", "anomalies": "#e67e22", "wrong": "#c0392b", "right": "#27ae60",
    "false": "#c0392b", "pass": "#27ae60", "fail": "#c0392b", "na": "#95a5a6",
    "unresolved": "#e67e22", "evidence": "#16a085", "perturbed": "#6c3483",
    "takeover": "#1f618d",
}  # fmt: skip
DEFAULT = "#555555"


class _Spans(pg.GraphicsObject):  # type: ignore[misc]
    """Bars of one colour that draws only those in the visible range (pyqtgraph's
    BarGraphItem hands Qt every bar on every frame: with 100,000 items, panning stutters)."""

    def __init__(self, x0: np.ndarray, x1: np.ndarray, y: np.ndarray, colour: str) -> None:
        super().__init__()
        order = np.argsort(x0, kind="stable")
        self._x0, self._x1, self._y = x0[order], x1[order], y[order]
        self._widest = float((self._x1 - self._x0).max()) if len(order) else 0.0
        self._brush = pg.mkBrush(colour)
        self._shown: tuple[float, float] | None = None
        self._rects: list[QRectF] = []
        lo, hi = float(self._x0.min()), float(self._x1.max())
        ylo, yhi = float(self._y.min()) - ROW_H / 2, float(self._y.max()) + ROW_H / 2
        self._bounds = QRectF(lo, ylo, hi - lo, yhi - ylo)

    def boundingRect(self) -> QRectF:
        return self._bounds

    def visible(self, xmin: float, xmax: float) -> list[QRectF]:
        if self._shown != (xmin, xmax):
            a = int(np.searchsorted(self._x0, xmin - self._widest, "left"))
            b = int(np.searchsorted(self._x0, xmax, "right"))
            keep = np.nonzero(self._x1[a:b] >= xmin)[0] + a
            x0, x1, y = self._x0[keep].tolist(), self._x1[keep].tolist(), self._y[keep].tolist()
            h = ROW_H
            self._rects = [
                QRectF(s, r - h / 2, e - s, h) for s, e, r in zip(x0, x1, y, strict=True)
            ]
            self._shown = (xmin, xmax)
        return self._rects

    def paint(self, p: QPainter, *_args: object) -> None:
        vb = self.getViewBox()
        if vb is None:
            return
        (xmin, xmax), _ = vb.viewRange()
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(self._brush)
        p.drawRects(self.visible(xmin, xmax))


class _Grid(pg.GraphicsObject):  # type: ignore[misc]
    """Vertical lines at round ticks, one opaque hairline each: pyqtgraph's own axis grid
    repaints as a picture over the whole plot and cost half of each frame under software GL."""

    def __init__(self) -> None:
        super().__init__()
        self.setZValue(-100)  # behind every track
        self._pen = pg.mkPen("#ececec", width=0)  # width 0: a cosmetic hairline
        self._rect = QRectF()

    def boundingRect(self) -> QRectF:
        vb = self.getViewBox()
        rect = vb.viewRect() if vb is not None else QRectF()
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = QRectF(rect)
        return self._rect

    def paint(self, p: QPainter, *_args: object) -> None:
        r = self.boundingRect()
        span = r.width()
        if span <= 0:
            return
        mag = 10.0 ** np.floor(np.log10(span / 8))
        step = next(m * mag for m in (1, 2, 5, 10) if span / (m * mag) <= 12)
        xs = np.arange(np.ceil(r.left() / step) * step, r.right(), step)
        p.setPen(self._pen)
        p.drawLines([QLineF(x, r.top(), x, r.bottom()) for x in xs.tolist()])


class TimelineView(pg.PlotWidget):  # type: ignore[misc]
    """Tracks of one episode; ``seek(tick)`` when the user clicks or drags the playhead."""

    seek = Signal(int)
    picked = Signal(object)  # the Item clicked

    def __init__(self) -> None:
        super().__init__(background="w")
        self.setMouseEnabled(x=True, y=False)
        self.setMenuEnabled(False)
        self.hideButtons()
        self.getPlotItem().setLabel("bottom", "tick")
        self.tracks: tuple[str, ...] = ()
        self.items_: list[Item] = []
        self.playhead = pg.InfiniteLine(0, angle=90, movable=True,
                                        pen=pg.mkPen("#d35400", width=2))  # fmt: skip
        self.playhead.sigPositionChangeFinished.connect(
            lambda line: self.seek.emit(round(line.value()))
        )
        self.scene().sigMouseClicked.connect(self._clicked)
        # the track names never change while panning: paint them once, not every frame
        self.getPlotItem().getAxis("left").setCacheMode(
            QGraphicsItem.CacheMode.DeviceCoordinateCache
        )

    # ---- content ---------------------------------------------------------------------------
    def show_items(self, tracks: tuple[str, ...], items: list[Item], ticks: int) -> None:
        plot = self.getPlotItem()
        plot.clear()
        self.tracks = tuple(t for t in tracks if any(i.track == t for i in items)) or tracks
        self.items_ = [i for i in items if i.track in self.tracks]
        row = {t: len(self.tracks) - 1 - k for k, t in enumerate(self.tracks)}
        spans: dict[str, list[Item]] = {}
        marks: dict[str, list[Item]] = {}
        arrows: dict[str, list[Item]] = {}
        for it in self.items_:
            group = arrows if it.track == "replies" else (spans if it.end > it.start else marks)
            group.setdefault(it.kind, []).append(it)
        for kind, its in spans.items():
            x0 = np.array([i.start for i in its], float)
            w = np.array([i.end - i.start for i in its], float)
            y = np.array([row[i.track] for i in its], float)
            plot.addItem(_Spans(x0, x0 + w, y, COLORS.get(kind, DEFAULT)))
        for kind, its in marks.items():
            track_colour = COLORS.get(its[0].track, DEFAULT)
            plot.addItem(pg.ScatterPlotItem(
                x=[i.start for i in its], y=[row[i.track] for i in its], size=9,
                symbol="t" if kind in ("flag", "rejected") else ("s" if kind == "wrong" else "o"),
                brush=COLORS.get(kind, track_colour), pen=None, data=[i.label for i in its],
                hoverable=True, tip=lambda x, y, data: f"t{int(x)}: {data}",
            ))  # fmt: skip
        for kind, its in arrows.items():
            xs = np.array([[i.start, i.end] for i in its], float).ravel()
            ys = np.array([[row[i.track] - 0.25, row[i.track] + 0.25] for i in its]).ravel()
            pen = pg.mkPen(COLORS.get(kind, DEFAULT), width=2 if kind == "stale" else 1)
            plot.addItem(pg.PlotCurveItem(xs, ys, connect="pairs", pen=pen))
            plot.addItem(pg.ScatterPlotItem(x=[i.end for i in its], y=[row[i.track] + 0.25
                                            for i in its], symbol="t1", size=7,
                                            brush=COLORS.get(kind, DEFAULT), pen=None))  # fmt: skip
        plot.addItem(self.playhead)
        plot.addItem(_Grid(), ignoreBounds=True)
        left = plot.getAxis("left")
        left.setTicks([[(row[t], t) for t in self.tracks]])
        plot.setYRange(-0.6, len(self.tracks) - 0.4, padding=0)
        # limits first: the last episode's limits would clamp this one's range
        plot.setLimits(xMin=-10, xMax=max(ticks, 1) + 10)
        plot.setXRange(0, max(ticks, 1), padding=0.01)

    def mark_divergence(self, tick: int | None) -> None:
        """A dashed red line where a fork and its parent stop being the same world."""
        plot = self.getPlotItem()
        old = getattr(self, "_divergence", None)
        if old is not None:
            plot.removeItem(old)
            self._divergence = None
        if tick is not None:
            line = pg.InfiniteLine(
                tick,
                angle=90,
                movable=False,
                label=f"diverges t{tick}",
                labelOpts={"position": 0.95, "color": "#c0392b"},
                pen=pg.mkPen("#c0392b", width=2, style=Qt.PenStyle.DashLine),
            )
            plot.addItem(line)
            self._divergence = line

    def set_playhead(self, tick: int) -> None:
        self.playhead.blockSignals(True)
        self.playhead.setValue(tick)
        self.playhead.blockSignals(False)

    # ---- picking ---------------------------------------------------------------------------
    def item_at(self, x: float, y: float, px_tolerance: float = 6.0) -> Item | None:
        """The item under (x ticks, y rows), or the nearest on that row within a few pixels."""
        if not self.tracks:
            return None
        k = len(self.tracks) - 1 - round(y)
        if not 0 <= k < len(self.tracks) or abs(y - round(y)) > ROW_H:
            return None
        track = self.tracks[k]
        per_px = self.getPlotItem().vb.viewPixelSize()[0]
        tol = px_tolerance * per_px
        best, dist = None, float("inf")
        for it in self.items_:
            if it.track != track:
                continue
            d = 0.0 if it.start <= x <= it.end else min(abs(x - it.start), abs(x - it.end))
            if d <= tol and d < dist:
                best, dist = it, d
        return best

    def row_y(self, track: str) -> float:
        return float(len(self.tracks) - 1 - self.tracks.index(track))

    def _clicked(self, ev: object) -> None:
        if getattr(ev, "button", lambda: None)() != Qt.MouseButton.LeftButton:
            return
        pos = self.getPlotItem().vb.mapSceneToView(ev.scenePos())  # type: ignore[attr-defined]
        it = self.item_at(pos.x(), pos.y())
        if it is not None:
            self.picked.emit(it)
            self.seek.emit(it.start)
        elif pos.x() >= 0:
            self.seek.emit(round(pos.x()))


def color(kind: str) -> QColor:
    return QColor(COLORS.get(kind, DEFAULT))
