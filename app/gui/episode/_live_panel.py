"""Live episodes in the workspace: start one, play / pause / step, and take the user's seat.

The episode runs on its own thread (``sim.review.LiveRun``) and records as it goes; this panel
shows the tick and the measured real-time factor, and reloads the recorded trace into the
workspace a few times a second, so the timeline, transcript and inspector follow the live
episode on the same playhead as a recorded one. In the user's seat, what you say goes to the
assistant and what you do goes to your own action queue.

In a physics episode a person can take the arm over ("Take over"): the agent is held, and keys
pressed on the panel drive the end effector (W/S ±x, A/D ±y, R/F ±z, Q/E yaw, Space opens or
closes the jaws) until "Hand back". While it has the arm the panel keeps those keys to itself
(it accepts their shortcut override), so they never trigger a viewer or window shortcut.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from sim.episode import DEFAULT_ARM, EpisodeRunner, make_world, open_scenario, resolve_arm
from sim.interact import HumanUser, SeatUser, build_interactive
from sim.review import Build, LiveFrames, LiveRun
from sim.scenario import shipped
from sim.users import PROFILES
from storage import Project, load_settings

if TYPE_CHECKING:
    from app.gui.episode._world_view import WorldView

RELOAD_MS = 400
LIVE_FRAME_EVERY = 2  # ticks between the live world's snapshots for the MuJoCo view
LIVE_BATCH = 2  # ticks between writes: the workspace reads what the live episode stored
TAKEOVER_LINEAR = 0.1  # m/s while a direction key is held: slow enough to place by eye
TAKEOVER_ANGULAR = 0.8  # rad/s while Q or E is held
#: key → (axis, sign): axes 0–2 are linear x, y, z; 3 is yaw
TAKEOVER_KEYS = {
    Qt.Key.Key_W: (0, 1.0), Qt.Key.Key_S: (0, -1.0), Qt.Key.Key_A: (1, 1.0),
    Qt.Key.Key_D: (1, -1.0), Qt.Key.Key_R: (2, 1.0), Qt.Key.Key_F: (2, -1.0),
    Qt.Key.Key_Q: (3, 1.0), Qt.Key.Key_E: (3, -1.0),
}  # fmt: skip


class LivePanel(QWidget):
    """Start and drive one live episode; ``updated(episode_id, tick)`` a few times a second."""

    updated = Signal(str, int)
    failed = Signal(object)
    ready = Signal()  # from the live thread: the episode is built

    def __init__(self) -> None:
        super().__init__()
        self.root: Path | None = None
        self.live: LiveRun | None = None
        self._seat_at: int | None = None  # a fork's tick, where the person takes the seat
        self._run_to_at_start: int | None = None
        self._shown: tuple[str, int] | None = None  # what the workspace last re-read
        self.ready.connect(self._started)
        self.failed.connect(self._start_failed)
        self.world_view: WorldView | None = None  # set by the workspace: where live frames go
        self.frames: LiveFrames | None = None
        self.scenario = QComboBox()
        self.scenario.addItems(sorted(shipped()))
        self.scenario.setCurrentText("cook-patty")
        self.mode = QComboBox()
        self.mode.addItems(["symbolic", "physics"])
        self.persona = QComboBox()
        self.persona.addItems(list(PROFILES))
        self.seat = QCheckBox("I am the user")
        self.seat.setToolTip("Take the simulated user's seat: you talk and act; the assistant "
                             "under test answers")  # fmt: skip
        self.start_button = QPushButton("Start live episode")
        self.start_button.clicked.connect(self.start)
        self.play_button = QPushButton("▶ Play")
        self.play_button.clicked.connect(self.toggle)
        self.step_button = QPushButton("Step")
        self.step_button.clicked.connect(self._step)
        self.speed = QDoubleSpinBox()
        self.speed.setRange(0.0, 50.0)
        self.speed.setValue(1.0)
        self.speed.setSuffix("× real time")
        self.speed.setToolTip("0 runs as fast as the machine goes")
        self.run_to = QSpinBox()
        self.run_to.setRange(0, 100_000)
        self.run_to.setPrefix("to tick ")
        self.run_to_button = QPushButton("Run to")
        self.run_to_button.setToolTip("Run the live episode on to this tick, then pause")
        self.run_to_button.clicked.connect(self._run_to)
        self.status = QLabel("no live episode")
        self.say = QLineEdit()
        self.say.setPlaceholderText("Say to the assistant… (Enter)")
        self.say.returnPressed.connect(self._say)
        self.do = QLineEdit()
        self.do.setPlaceholderText("Do… e.g. pick up the patty (Enter)")
        self.do.returnPressed.connect(self._do)
        self.done_button = QPushButton("I'm done")
        self.done_button.clicked.connect(self._done)
        self.who = QLineEdit(load_settings().rater)
        self.who.setPlaceholderText("who takes over")
        self.why = QLineEdit()
        self.why.setPlaceholderText("why (e.g. the agent is stuck)")
        self.take_button = QPushButton("Take over")
        self.take_button.setToolTip("Hold the agent and drive the arm: W/S A/D R/F move, Q/E "
                                    "turn, Space opens or closes the jaws")  # fmt: skip
        self.take_button.clicked.connect(self.toggle_takeover)
        self._held: set[int] = set()  # takeover keys held down
        self._grip: float | None = None  # None: keep the jaws as they are
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        for col, w in enumerate((self.scenario, self.mode, self.persona, self.seat,
                                 self.start_button)):  # fmt: skip
            grid.addWidget(w, 0, col)
        for col, w in enumerate((self.play_button, self.step_button, self.speed, self.run_to,
                                 self.run_to_button)):  # fmt: skip
            grid.addWidget(w, 1, col)
        grid.addWidget(self.status, 1, 5)
        grid.addWidget(self.say, 2, 0, 1, 2)
        grid.addWidget(self.do, 2, 2, 1, 2)
        grid.addWidget(self.done_button, 2, 4)
        grid.addWidget(self.who, 3, 0)
        grid.addWidget(self.why, 3, 1, 1, 2)
        grid.addWidget(self.take_button, 3, 3)
        self.timer = QTimer(self)
        self.timer.setInterval(RELOAD_MS)
        self.timer.timeout.connect(self._tick)
        self._controls(False)

    @property
    def human(self) -> HumanUser | None:
        user = getattr(getattr(self.live, "extra", None), "agent", None)
        user = getattr(user, "user", None)
        if isinstance(user, SeatUser):
            return user.human if user.taken else None
        return user if isinstance(user, HumanUser) else None

    @property
    def seat_user(self) -> SeatUser | None:
        user = getattr(getattr(getattr(self.live, "extra", None), "agent", None), "user", None)
        return user if isinstance(user, SeatUser) else None

    @property
    def episode_id(self) -> str | None:
        sink = getattr(getattr(self.live, "extra", None), "sink", None)
        db = getattr(sink, "db", None)
        return getattr(db, "episode_id", None)

    def _controls(self, live: bool) -> None:
        """Only what applies shows: the transport while live, the seat's row once it is yours."""
        transport: tuple[QWidget, ...] = (self.play_button, self.step_button, self.speed,
                                          self.run_to, self.run_to_button, self.status)  # fmt: skip
        for w in transport:
            w.setVisible(live)
        self.play_button.setEnabled(live)
        self.step_button.setEnabled(live)
        seat = live and self.human is not None
        seat_row: tuple[QWidget, ...] = (self.say, self.do, self.done_button)
        for w in seat_row:
            w.setVisible(seat)
            w.setEnabled(seat)
        runner = self.live.runner if live and self.live is not None else None
        arm = runner is not None and hasattr(runner.world, "set_manual")  # physics only
        for w in (self.who, self.why, self.take_button):
            w.setVisible(arm)

    # ---- lifecycle -------------------------------------------------------------------------
    def start_fork(self, build: Build, tick: int, *, take_seat: bool) -> None:
        """Re-run a recorded episode to ``tick`` as a new, linked one, pause there, and take
        the user's seat if asked (see ``sim.review.fork_build``)."""
        if self.root is None:
            return
        self.stop()
        self._seat_at = tick if take_seat else None
        self._run_to_at_start = tick
        self.live = LiveRun(self.root, build, on_error=self.failed.emit,
                            on_ready=self.ready.emit)  # fmt: skip
        self.status.setText(f"re-running to tick {tick}…")

    def start(self) -> None:
        if self.root is None:
            return
        self.stop()
        bound = open_scenario(self.scenario.currentText())
        mode, persona = self.mode.currentText(), PROFILES[self.persona.currentText()]
        user = "human" if self.seat.isChecked() else "rule"

        def build(project: Project) -> tuple[EpisodeRunner, Any]:
            ep = build_interactive(bound, mode=mode, persona=persona, user=user, project=project,
                                   batch=LIVE_BATCH)  # fmt: skip
            return ep.runner, ep

        self.frames = None
        on_tick = None
        if mode == "physics" and self.world_view is not None:  # watch the arm as it runs
            view = self.world_view
            root = self.root

            def frames_world() -> Any:  # on the frame thread: the live run's own arm
                with Project.open(root) as p:
                    arm = resolve_arm(bound.scenario.arm or DEFAULT_ARM, p)
                return make_world(bound, "physics", arm=arm)

            frames = LiveFrames(frames_world, view.frame_arrived.emit,
                                view.failed.emit, on_ready=view.frames_ready.emit)  # fmt: skip
            self.frames = frames

            def on_tick(runner: EpisodeRunner) -> None:
                if runner.tick % LIVE_FRAME_EVERY == 0:
                    frames.publish(runner.tick, runner.world.snapshot())

        self._run_to_at_start = None
        self.live = LiveRun(self.root, build, on_error=self.failed.emit, on_tick=on_tick,
                            on_ready=self.ready.emit)  # fmt: skip
        if self.frames is not None and self.world_view is not None:
            live, shown = self.live, self.world_view.push_changed

            def pushed(push: object) -> None:  # on the frame thread: straight to the physics
                live.push(push)  # type: ignore[arg-type]
                shown.emit(push)

            self.frames.on_push = pushed
        self.status.setText(f"starting {bound.name}…")

    def _started(self) -> None:
        """The live thread has built the episode (it does that off the GUI thread)."""
        if self.live is None:
            return
        if self._run_to_at_start is not None:  # a fork: re-run to its tick, pause there
            self.live.run_to(self._run_to_at_start)
            self._run_to_at_start = None
        self._controls(True)
        self.timer.start()
        self._tick()

    def _start_failed(self, err: object) -> None:
        self.status.setText(f"could not start: {err}")

    def stop(self) -> None:
        self.timer.stop()
        self._held.clear()
        self.take_button.setText("Take over")
        if self.live is not None:
            self.live.stop()
            self._tick()
            self.live = None
        if self.frames is not None:
            if self.world_view is not None and self.world_view.frames is self.frames:
                self.world_view.frames = None
            self.frames.close()
            self.frames = None
        self._controls(False)

    def toggle(self) -> None:
        if self.live is None:
            return
        if self.live.playing:
            self.live.pause()
            self.play_button.setText("▶ Play")
        else:
            self.live.play(self.speed.value())
            self.play_button.setText("⏸ Pause")

    # ---- the seat --------------------------------------------------------------------------
    def _say(self) -> None:
        if self.human is not None:
            self.human.say(self.say.text())
            self.say.clear()

    def _done(self) -> None:
        if self.human is not None:
            self.human.done()

    def _run_to(self) -> None:
        if self.live is not None:
            self.live.run_to(self.run_to.value())
            self.play_button.setText("▶ Play")

    def _step(self) -> None:
        if self.live is not None:
            self.live.step(1)

    def _do(self) -> None:
        if self.human is not None:
            self.human.do(self.do.text())
            self.do.clear()

    # ---- takeover --------------------------------------------------------------------------
    @property
    def taken_over(self) -> bool:
        return self.live is not None and self.live.taken_over

    def toggle_takeover(self) -> None:
        """Take the arm (the agent is held), or hand it back."""
        live = self.live
        if live is None:
            return
        if live.taken_over:
            live.hand_back()
            self._held.clear()
            self.take_button.setText("Take over")
            return
        live.take_over(self.who.text().strip() or load_settings().rater, self.why.text())
        self._held.clear()
        self._grip = None
        self.take_button.setText("Hand back")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setFocus()  # the keys come here now

    def event(self, e: QEvent) -> bool:
        if (
            e.type() == QEvent.Type.ShortcutOverride
            and self.taken_over
            and isinstance(e, QKeyEvent)
            and (e.key() in TAKEOVER_KEYS or e.key() == Qt.Key.Key_Space)
        ):
            e.accept()  # ours while the person has the arm: no window shortcut fires
            return True
        return super().event(e)

    def keyPressEvent(self, e: QKeyEvent) -> None:
        if not self.taken_over or e.isAutoRepeat():
            if not self.taken_over:
                super().keyPressEvent(e)
            return
        if e.key() == Qt.Key.Key_Space:
            teleop = self.live.teleop if self.live is not None else None
            now = self._grip if self._grip is not None else (teleop.grip if teleop else 0.0)
            self._grip = 0.0 if now > 0.5 else 1.0
        elif e.key() in TAKEOVER_KEYS:
            self._held.add(e.key())
        else:
            super().keyPressEvent(e)
            return
        self._send()

    def keyReleaseEvent(self, e: QKeyEvent) -> None:
        if self.taken_over and not e.isAutoRepeat() and e.key() in TAKEOVER_KEYS:
            self._held.discard(e.key())
            self._send()
            return
        super().keyReleaseEvent(e)

    def _send(self) -> None:
        from sim.teleop import Command  # mujoco-heavy: only once someone drives the arm

        axes = [0.0, 0.0, 0.0, 0.0]
        for key in self._held:
            axis, sign = TAKEOVER_KEYS[Qt.Key(key)]
            axes[axis] += sign
        lin = TAKEOVER_LINEAR
        cmd = Command(linear=(axes[0] * lin, axes[1] * lin, axes[2] * lin),
                      angular=(0.0, 0.0, axes[3] * TAKEOVER_ANGULAR), grip=self._grip)  # fmt: skip
        if self.live is not None:
            self.live.command(cmd)

    # ---- updates ---------------------------------------------------------------------------
    def _tick(self) -> None:
        live = self.live
        if live is None:
            return
        rtf = live.rtf
        state = "finished" if live.finished else ("playing" if live.playing else "paused")
        rtf_text = f" · RTF {rtf:.2f}" if rtf is not None and live.playing else ""
        yours = " · you have the user's seat" if self.human is not None else ""
        if live.teleop is not None:
            yours += " · you have the arm (W/S A/D R/F Q/E, Space)"
        elif live.taken_over:
            yours += " · taking the arm once its action is done"
        self.status.setText(f"live tick {live.tick} · {state}{rtf_text}{yours}")
        if live.finished:
            self.play_button.setText("▶ Play")
            self.play_button.setEnabled(False)
        seat = self.seat_user
        if self._seat_at is not None and seat is not None and live.tick >= self._seat_at:
            seat.take()  # the fork reached its tick, paused: the person has the seat
            self._seat_at = None
            self._controls(True)
            self.status.setText(f"forked at tick {live.tick} · paused · you have the user's seat")
        eid = self.episode_id
        if eid is not None and (eid, live.tick) != self._shown:  # paused: nothing to re-read
            self._shown = (eid, live.tick)
            self.updated.emit(eid, live.tick)
