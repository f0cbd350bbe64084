"""Playback: play/pause, step, hop, slow motion, loop a range. Follows source time.

Playback advances by *source* time (wall time × speed) and shows the frame on screen at that
time, so variable-frame-rate clips play at their true pace and every label stays in source time
whatever the speed. Frames that decode too slowly are skipped rather than queued.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QStyle, QToolButton, QWidget

from app.gui.common import AnnotateState
from storage.media import VideoIndex

SPEEDS = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)


class PlayerController(QObject):
    """Drives the playhead in :class:`AnnotateState` from a timer."""

    playing_changed = Signal(bool)
    speed_changed = Signal(float)
    loop_changed = Signal(bool)

    def __init__(self, state: AnnotateState, hop: int = 10) -> None:
        super().__init__()
        self.state = state
        self.hop = hop
        self.index: VideoIndex | None = None
        self.speed = 1.0
        self.loop = False
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self._tick)
        self._t0_wall = 0.0
        self._t0_src = 0.0

    @property
    def playing(self) -> bool:
        return self._timer.isActive()

    def set_index(self, index: VideoIndex | None) -> None:
        self.pause()
        self.index = index

    # ---- transport ---------------------------------------------------------------------
    def toggle(self) -> None:
        self.pause() if self.playing else self.play()

    def play(self) -> None:
        if self.index is None or self.index.frame_count == 0:
            return
        lo, hi = self._bounds()
        if self.state.frame >= hi:
            self.state.seek(lo)
        self._restart_clock()
        self._timer.start(max(5, int(1000 / max(self.index.fps, 1) / 2)))
        self.playing_changed.emit(True)

    def pause(self) -> None:
        if self._timer.isActive():
            self._timer.stop()
            self.playing_changed.emit(False)

    def step(self, n: int) -> None:
        self.pause()
        self.state.seek(self.state.frame + n)

    def first(self) -> None:
        self.pause()
        self.state.seek(0)

    def last(self) -> None:
        self.pause()
        self.state.seek(self.state.frame_count - 1)

    def set_speed(self, speed: float) -> None:
        self.speed = min(max(speed, SPEEDS[0]), SPEEDS[-1])
        self._restart_clock()
        self.speed_changed.emit(self.speed)

    def faster(self) -> None:
        self.set_speed(next((s for s in SPEEDS if s > self.speed + 1e-9), SPEEDS[-1]))

    def slower(self) -> None:
        self.set_speed(next((s for s in reversed(SPEEDS) if s < self.speed - 1e-9), SPEEDS[0]))

    def set_loop(self, on: bool) -> None:
        self.loop = on
        self.loop_changed.emit(on)

    def mark_in(self) -> None:
        rng = self.state.range
        end = rng[1] if rng and rng[1] >= self.state.frame else self.state.frame
        self.state.set_range((self.state.frame, end))

    def mark_out(self) -> None:
        rng = self.state.range
        start = rng[0] if rng and rng[0] <= self.state.frame else self.state.frame
        self.state.set_range((start, self.state.frame))

    # ---- clock -------------------------------------------------------------------------
    def _bounds(self) -> tuple[int, int]:
        if self.loop and self.state.range:
            return self.state.range
        return 0, max(0, self.state.frame_count - 1)

    def _restart_clock(self) -> None:
        if self.index is not None:
            self._t0_wall = time.perf_counter()
            self._t0_src = self.index.time_of(self.state.frame)

    def _tick(self) -> None:
        ix = self.index
        if ix is None:
            return
        lo, hi = self._bounds()
        t = self._t0_src + (time.perf_counter() - self._t0_wall) * self.speed
        frame = ix.index_at(t)
        if frame > hi:
            if self.loop:
                self.state.seek(lo)
                self._restart_clock()
                return
            self.state.seek(hi)
            self.pause()
            return
        self.state.seek(frame)


class TransportBar(QWidget):
    """Buttons, speed and the always-visible frame index and source time."""

    def __init__(self, player: PlayerController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.player = player
        state = player.state
        lay = QHBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)

        style = self.style()
        icons = {
            "first": QStyle.StandardPixmap.SP_MediaSkipBackward,
            "hop_back": QStyle.StandardPixmap.SP_MediaSeekBackward,
            "play": QStyle.StandardPixmap.SP_MediaPlay,
            "hop_fwd": QStyle.StandardPixmap.SP_MediaSeekForward,
            "last": QStyle.StandardPixmap.SP_MediaSkipForward,
            "loop": QStyle.StandardPixmap.SP_BrowserReload,
        }
        self._play_icon = style.standardIcon(QStyle.StandardPixmap.SP_MediaPlay)
        self._pause_icon = style.standardIcon(QStyle.StandardPixmap.SP_MediaPause)

        def button(text: str, tip: str, slot: object) -> QToolButton:
            b = QToolButton(self)
            if text in icons:
                b.setIcon(style.standardIcon(icons[text]))
            else:
                b.setText(text)
            b.setToolTip(tip)
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            b.clicked.connect(slot)
            lay.addWidget(b)
            return b

        button("first", "First frame (Home)", player.first)
        button("hop_back", "Hop back (Shift+Left)", lambda: player.step(-player.hop))
        button("−1", "Previous frame (Left)", lambda: player.step(-1))
        self.play_button = button("play", "Play / pause (Space)", player.toggle)
        button("+1", "Next frame (Right)", lambda: player.step(1))
        button("hop_fwd", "Hop forward (Shift+Right)", lambda: player.step(player.hop))
        button("last", "Last frame (End)", player.last)
        self.loop_button = button(
            "loop", "Loop the range (L)", lambda: player.set_loop(not player.loop)
        )
        self.loop_button.setCheckable(True)
        self.speed = QComboBox(self)
        self.speed.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        for s in SPEEDS:
            self.speed.addItem(f"{s:g}×", s)
        self.speed.setCurrentIndex(SPEEDS.index(1.0))
        self.speed.setToolTip("Playback speed (- / =); times stay in source time")
        self.speed.currentIndexChanged.connect(lambda i: player.set_speed(SPEEDS[i]))
        lay.addWidget(self.speed)
        lay.addStretch(1)
        self.position = QLabel(self)
        self.position.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        f = self.position.font()
        f.setFamily("DejaVu Sans Mono")
        f.setPointSize(f.pointSize() + 1)
        self.position.setFont(f)
        lay.addWidget(self.position)

        player.playing_changed.connect(
            lambda on: self.play_button.setIcon(self._pause_icon if on else self._play_icon)
        )
        player.loop_changed.connect(self.loop_button.setChecked)
        player.speed_changed.connect(self._on_speed)
        state.frame_changed.connect(lambda _f: self.refresh())
        state.range_changed.connect(self.refresh)
        state.video_changed.connect(self.refresh)
        self.refresh()

    def _on_speed(self, speed: float) -> None:
        self.speed.blockSignals(True)
        self.speed.setCurrentIndex(SPEEDS.index(speed) if speed in SPEEDS else SPEEDS.index(1.0))
        self.speed.blockSignals(False)

    def refresh(self) -> None:
        st = self.player.state
        ix = self.player.index
        if ix is None or st.frame_count == 0:
            self.position.setText("no video")
            return
        text = f"frame {st.frame:>5} / {st.frame_count - 1}   {ix.time_of(st.frame):8.3f} s"
        if st.range:
            a, b = st.range
            # frames a..b inclusive last from a's start to the start of b+1, in source time:
            # the interval-measure tool for "was it gone longer than 0.5 s?"
            end = ix.time_of(b + 1) if b + 1 < ix.frame_count else ix.duration_s
            text += f"   range {a}–{b} = {end - ix.time_of(a):.3f} s"
        self.position.setText(text)
