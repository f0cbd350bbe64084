"""The MuJoCo view of the episode at the playhead, from any of the scene's cameras.

Frames are rendered by MuJoCo's own renderer on a thread with its own offscreen GL context
(``sim.review.FrameThread``; see ``shared/spec/mujoco-in-qt.md``: the design that keeps the GUI
thread near idle under software GL). The widget only paints the newest frame, scaled to fit; a
request made while one renders replaces any that still waits. A symbolic episode has no physics
to render, and says so.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, QPointF, QRect, Qt, Signal
from PySide6.QtGui import QImage, QMouseEvent, QPainter, QPaintEvent, QWheelEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from sim.episode import perturbed_at
from sim.review import Frame, FrameThread, FreeCamera, LiveFrames, VideoFrames
from storage import EpisodeRecord

CAMERA = "front"
FREE = "free (drag)"


class _Canvas(QWidget):
    """Paints the frame; drags orbit (left) or pan (right) the free camera, the wheel zooms."""

    dragged = Signal(float, float, bool)  # dx, dy in pixels; True when panning
    zoomed = Signal(float)  # a factor on the distance
    clicked = Signal(float, float)  # where, as a fraction of the picture (MuJoCo's: from bottom)
    # Ctrl+drag pushes a body (live runs): where it was grabbed, each motion, the release
    grabbed = Signal(float, float)
    pushed = Signal(float, float, bool)  # dx, dy in picture pixels; True (Shift): table plane
    released = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.image: QImage | None = None
        self.setMinimumSize(240, 180)
        self._last: QPoint | None = None
        self._moved = 0
        self._pushing = False
        self.setToolTip(
            "Drag to orbit (right-drag to pan), wheel to zoom: the free camera. In a live "
            "physics run, Ctrl+drag pushes the body under the mouse (Ctrl+Shift: along the table)"
        )

    def _rel(self, p: QPointF) -> tuple[float, float] | None:
        r = self.picture_rect()
        if not r.contains(p.toPoint()):
            return None
        return (p.x() - r.x()) / r.width(), 1.0 - (p.y() - r.y()) / r.height()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._last = event.position().toPoint()
        self._moved = 0
        ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        rel = self._rel(event.position()) if self.image is not None else None
        self._pushing = ctrl and rel is not None
        if self._pushing and rel is not None:
            self.grabbed.emit(*rel)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._last is None:
            return
        pos = event.position().toPoint()
        d = pos - self._last
        self._last = pos
        self._moved += abs(d.x()) + abs(d.y())
        if self._pushing:  # picture pixels: the frame is scaled to fit the widget
            k = self.image.height() / max(1, self.picture_rect().height()) if self.image else 1.0
            shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            self.pushed.emit(d.x() * k, d.y() * k, shift)
            return
        pan = bool(event.buttons() & (Qt.MouseButton.RightButton | Qt.MouseButton.MiddleButton))
        self.dragged.emit(float(d.x()), float(d.y()), pan)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._pushing:
            self._pushing = False
            self.released.emit()
        elif self._last is not None and self._moved < 3 and self.image is not None:
            rel = self._rel(event.position())
            if rel is not None:
                self.clicked.emit(*rel)
        self._last = None

    def picture_rect(self) -> QRect:
        """Where the frame is drawn (scaled to fit, centred)."""
        if self.image is None:
            return QRect()
        size = self.image.size().scaled(self.size(), Qt.AspectRatioMode.KeepAspectRatio)
        x, y = (self.width() - size.width()) // 2, (self.height() - size.height()) // 2
        return QRect(x, y, size.width(), size.height())

    def wheelEvent(self, event: QWheelEvent) -> None:
        self.zoomed.emit(0.9 if event.angleDelta().y() > 0 else 1.1)

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), Qt.GlobalColor.black)
        if self.image is not None:
            p.drawImage(self.picture_rect(), self.image)
        p.end()


class WorldView(QWidget):
    """Camera picker, the frame and what it shows; ``show_tick`` asks for a frame."""

    frame_arrived = Signal(object)  # a Frame, from the render thread (queued to this thread)
    failed = Signal(object)
    picked = Signal(object)  # the object id clicked in the picture, or None
    frames_ready = Signal()  # from a frame thread: its cameras are known
    push_changed = Signal(object)  # from the live frame thread: the Push now held, or None

    def __init__(self) -> None:
        super().__init__()
        self.tick = 0
        self.camera = QComboBox()
        self.camera.setToolTip("The scene camera to look through")
        self.camera.currentTextChanged.connect(lambda _c: self.show_tick(self.tick))
        self.status = QLabel("no episode")
        # a long status must not widen the window: it is clipped instead
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.contacts = QCheckBox("contacts")
        self.contacts.setToolTip("Contact points and forces (costly under software GL)")
        self.labels = QCheckBox("labels")
        self.shadows = QCheckBox("shadows")
        self.shadows.setChecked(True)
        self.shadows.setToolTip("Shadows show contact and height, but cost most of a frame under "
                                "software GL (48 → 18 ms at 640×480)")  # fmt: skip
        self.smooth = QCheckBox("smooth")
        self.smooth.setChecked(True)
        self.smooth.setToolTip("Smooth edges (4× multisampling): about half of a shadowless "
                               "frame under software GL (17 → 8 ms at 640×480)")  # fmt: skip
        for box in (self.contacts, self.labels, self.shadows, self.smooth):
            box.toggled.connect(lambda _on: self.show_tick(self.tick))
        self.free = FreeCamera()
        self.canvas = _Canvas()
        self.canvas.dragged.connect(self._drag)
        self.canvas.zoomed.connect(self._zoom)
        self.canvas.clicked.connect(self._click)
        self.canvas.grabbed.connect(self._grab)
        self.canvas.pushed.connect(self._push)
        self.canvas.released.connect(self._release)
        self.push_changed.connect(self._push_shown)
        self.selected: str | None = None
        #: a live run's view shows the running world (True) or the playhead's tick (False)
        self.following = True
        self.perturbed_at: int | None = None  # a person acted on the world from this tick on
        self.picked.connect(self._picked)
        top = QHBoxLayout()
        top.addWidget(QLabel("camera"))
        top.addWidget(self.camera)
        top.addWidget(self.contacts)
        top.addWidget(self.labels)
        top.addWidget(self.shadows)
        top.addWidget(self.smooth)
        top.addWidget(self.status, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(top)
        lay.addWidget(self.canvas, 1)
        self.frames: FrameThread | LiveFrames | VideoFrames | None = None
        self.frame: Frame | None = None
        self._array: object = None  # keeps the pixels the QImage wraps alive
        self.frame_arrived.connect(self._show)
        self.frames_ready.connect(self._adopt)
        self.failed.connect(self._failed)

    def open(self, root: Path, episode: EpisodeRecord, *, has_video: bool = False) -> None:
        """Start the episode's frame thread; the cameras arrive when it is ready (the world is
        built off the GUI thread)."""
        self.close_episode()
        self.perturbed_at = perturbed_at(episode)  # pushed or taken over from here
        self.frame = None
        self.canvas.image = None
        self.canvas.update()
        self.camera.clear()
        if episode.mode.value != "physics" and not has_video:
            self.status.setText("symbolic episode: no physics to render")
            return
        self.status.setText("preparing the world…")
        if episode.mode.value != "physics":  # an imported episode's own videos
            self.frames = VideoFrames(root, episode.id, self.frame_arrived.emit, self.failed.emit,
                                      on_ready=self.frames_ready.emit)  # fmt: skip
        else:
            self.frames = FrameThread(root, episode.id, self.frame_arrived.emit, self.failed.emit,
                                      on_ready=self.frames_ready.emit,
                                      on_pick=self.picked.emit)  # fmt: skip
        self._adopt()

    def live(self, episode: EpisodeRecord, frames: LiveFrames | None) -> None:
        """A running episode: frames of the live world (published by its thread), if any."""
        if frames is not None and self.frames is frames:
            return
        self.close_episode()
        self.camera.clear()
        if frames is None:
            self.status.setText(f"live {episode.mode.value} episode: nothing to render")
            return
        self.frames = frames
        self._adopt()

    def _adopt(self) -> None:
        """The frame source is ready (now, or when its thread says so): offer its cameras."""
        frames = self.frames
        if frames is None or not frames.ready.is_set() or self.camera.count():
            return
        self.camera.blockSignals(True)
        video = isinstance(frames, VideoFrames)
        self.camera.addItems(frames.cameras if video else [*frames.cameras, FREE])
        if CAMERA in frames.cameras:
            self.camera.setCurrentText(CAMERA)
        self.camera.blockSignals(False)
        live = isinstance(frames, LiveFrames)
        self.status.setText("recorded video at the playhead" if video else
                            "live: the newest frame of the running world" if live else
                            "the world at the playhead")  # fmt: skip
        self.show_tick(self.tick)

    def show_tick(self, tick: int) -> None:
        self.tick = tick
        camera = self.camera.currentText()
        if self.frames is None or not camera:
            return
        options: dict[str, object] = {"contacts": self.contacts.isChecked(),
                                      "labels": self.labels.isChecked(),
                                      "shadows": self.shadows.isChecked(),
                                      "antialias": self.smooth.isChecked()}  # fmt: skip
        if camera == FREE:
            options["free"] = self.free
        if isinstance(self.frames, LiveFrames):
            self.frames.request(None if self.following else tick, camera, **options)
        else:
            self.frames.request(tick, camera, **options)

    def _drag(self, dx: float, dy: float, pan: bool) -> None:
        if self.camera.currentText() != FREE:
            self.camera.setCurrentText(FREE)  # dragging takes the free camera
        self.free = (
            self.free.pan(-dx * 0.002, dy * 0.002) if pan else self.free.orbit(-dx * 0.4, -dy * 0.4)
        )
        self.show_tick(self.tick)

    def _click(self, relx: float, rely: float) -> None:
        frames = self.frames
        if isinstance(frames, FrameThread) and self.camera.currentText():
            options: dict[str, object] = {}
            if self.camera.currentText() == FREE:
                options["free"] = self.free
            frames.pick(self.tick, self.camera.currentText(), relx, rely, **options)

    # ---- pushing a body by hand (live physics runs only) ---------------------------------
    def _options(self) -> dict[str, object]:
        return {"free": self.free} if self.camera.currentText() == FREE else {}

    def _grab(self, relx: float, rely: float) -> None:
        if isinstance(self.frames, LiveFrames) and self.camera.currentText():
            self.frames.grab(self.camera.currentText(), relx, rely, **self._options())
        else:
            self.status.setText("Ctrl+drag pushes a body in a live physics run only")

    def _push(self, dx: float, dy: float, horizontal: bool) -> None:
        if isinstance(self.frames, LiveFrames) and self.camera.currentText():
            self.frames.drag(self.camera.currentText(), dx, dy, horizontal, **self._options())

    def _release(self) -> None:
        if isinstance(self.frames, LiveFrames):
            self.frames.release()

    def _push_shown(self, push: object) -> None:
        obj = getattr(push, "obj", None)
        self.status.setText(
            f"pushing {obj} by hand (Shift: along the table); the episode is marked as "
            "perturbed: it will not replay"
            if obj
            else "let go"
        )

    def _picked(self, obj: str | None) -> None:
        self.selected = obj
        self.status.setText(f"selected: {obj}" if obj else "nothing selectable there")

    def _zoom(self, factor: float) -> None:
        if self.camera.currentText() == FREE:
            self.free = self.free.zoom(factor)
            self.show_tick(self.tick)

    def close_episode(self) -> None:
        """Stop the frame source; the picture goes with it (a stale frame would claim to be the
        world of whatever is shown next)."""
        if self.frames is not None:
            self.frames.close()
            self.frames = None
        self.frame = None
        self.canvas.image = None
        self.canvas.update()

    def _show(self, frame: Frame) -> None:
        h, w, _ = frame.image.shape
        self._array = frame.image
        self.canvas.image = QImage(frame.image.data, w, h, 3 * w, QImage.Format.Format_RGB888)
        self.frame = frame
        live = "live · " if isinstance(self.frames, LiveFrames) else ""
        pushed = self.perturbed_at
        approx = (f" · approximate: a person acted at t{pushed}"
                  if pushed is not None and frame.tick > pushed and not live else "")  # fmt: skip
        if live and not self.following and frame.tick != self.tick:
            approx = f" · the nearest kept tick before t{self.tick}"
        self.status.setText(f"{live}tick {frame.tick} · {frame.camera} · {w}×{h}{approx}")
        self.canvas.update()

    def _failed(self, err: BaseException) -> None:
        self.status.setText(f"cannot show the world: {err}")
