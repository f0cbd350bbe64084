"""The MuJoCo view of the episode at the playhead, from any of the scene's cameras.

Frames are rendered by MuJoCo's own renderer on a thread with its own offscreen GL context
(``sim.review.FrameThread``; see ``shared/spec/mujoco-in-qt.md``: the design that keeps the GUI
thread near idle under software GL). The widget only paints the newest frame, scaled to fit; a
request made while one renders replaces any that still waits. A symbolic episode has no physics
to render, and says so.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRect, Qt, Signal
from PySide6.QtGui import QImage, QPainter, QPaintEvent
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from sim.review import Frame, FrameThread
from storage import EpisodeRecord

CAMERA = "front"


class _Canvas(QWidget):
    def __init__(self) -> None:
        super().__init__()
        self.image: QImage | None = None
        self.setMinimumSize(240, 180)

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), Qt.GlobalColor.black)
        if self.image is not None:
            size = self.image.size().scaled(self.size(), Qt.AspectRatioMode.KeepAspectRatio)
            x, y = (self.width() - size.width()) // 2, (self.height() - size.height()) // 2
            p.drawImage(QRect(x, y, size.width(), size.height()), self.image)
        p.end()


class WorldView(QWidget):
    """Camera picker, the frame and what it shows; ``show_tick`` asks for a frame."""

    frame_arrived = Signal(object)  # a Frame, from the render thread (queued to this thread)
    failed = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.tick = 0
        self.camera = QComboBox()
        self.camera.setToolTip("The scene camera to look through")
        self.camera.currentTextChanged.connect(lambda _c: self.show_tick(self.tick))
        self.status = QLabel("no episode")
        self.canvas = _Canvas()
        top = QHBoxLayout()
        top.addWidget(QLabel("camera"))
        top.addWidget(self.camera)
        top.addWidget(self.status, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(top)
        lay.addWidget(self.canvas, 1)
        self.frames: FrameThread | None = None
        self.frame: Frame | None = None
        self._array: object = None  # keeps the pixels the QImage wraps alive
        self.frame_arrived.connect(self._show)
        self.failed.connect(self._failed)

    def open(self, root: Path, episode: EpisodeRecord) -> None:
        self.close_episode()
        self.frame = None
        self.canvas.image = None
        self.canvas.update()
        if episode.mode.value != "physics":
            self.status.setText("symbolic episode: no physics to render")
            self.camera.clear()
            return
        self.status.setText("preparing the world…")
        self.frames = FrameThread(root, episode.id, self.frame_arrived.emit, self.failed.emit)
        self.frames.ready.wait(60)
        self.camera.blockSignals(True)
        self.camera.clear()
        self.camera.addItems(self.frames.cameras)
        if CAMERA in self.frames.cameras:
            self.camera.setCurrentText(CAMERA)
        self.camera.blockSignals(False)

    def live(self, episode: EpisodeRecord) -> None:
        """A running episode: its world is on the live thread; shown once it has ended."""
        self.close_episode()
        self.canvas.image = None
        self.canvas.update()
        self.status.setText(f"live {episode.mode.value} episode: the world view opens when it ends")

    def show_tick(self, tick: int) -> None:
        self.tick = tick
        if self.frames is not None and self.camera.currentText():
            self.frames.request(tick, self.camera.currentText())

    def close_episode(self) -> None:
        if self.frames is not None:
            self.frames.close()
            self.frames = None

    def _show(self, frame: Frame) -> None:
        h, w, _ = frame.image.shape
        self._array = frame.image
        self.canvas.image = QImage(frame.image.data, w, h, 3 * w, QImage.Format.Format_RGB888)
        self.frame = frame
        self.status.setText(f"tick {frame.tick} · {frame.camera} · {w}×{h}")
        self.canvas.update()

    def _failed(self, err: BaseException) -> None:
        self.status.setText(f"cannot show the world: {err}")
