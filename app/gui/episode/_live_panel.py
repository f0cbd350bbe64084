"""Live episodes in the workspace: start one, play / pause / step, and take the user's seat.

The episode runs on its own thread (``sim.review.LiveRun``) and records as it goes; this panel
shows the tick and the measured real-time factor, and reloads the recorded trace into the
workspace a few times a second, so the timeline, transcript and inspector follow the live
episode on the same playhead as a recorded one. In the user's seat, what you say goes to the
assistant and what you do goes to your own action queue.

In a physics episode a person can take the arm over ("Take over"): the agent is held, and keys
pressed on the panel or the MuJoCo view drive the end effector (``_takeover.py``) until "Hand
back"; a paused run starts playing, since a person cannot drive a world that does not move.

Nothing a person made is dropped without asking: starting another run, forking, opening another
episode or closing the window while a run is live asks first (:meth:`LivePanel.ask_to_leave`),
and a run stopped there is stored with everything it had. When a run ends, ``ended`` tells the
workspace, which opens it as a recorded episode (every tick replayable).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QStyle,
    QWidget,
)

from app.gui.episode._takeover import TakeoverKeys
from sim.episode import DEFAULT_ARM, EpisodeRunner, open_scenario, resolve_arm
from sim.episode import make_world as make_world_of
from sim.interact import HumanUser, SeatUser, build_interactive
from sim.review import Build, LiveFrames, LiveRun
from sim.scenario import shipped
from sim.users import PROFILES
from storage import Project, load_settings

if TYPE_CHECKING:
    from app.gui.episode._world_view import WorldView

RELOAD_MS = 400
LIVE_BATCH = 2  # ticks between writes: the workspace reads what the live episode stored


class LivePanel(QWidget):
    """Start and drive one live episode; ``updated(episode_id, tick)`` a few times a second."""

    updated = Signal(str, int)
    ended = Signal(str, int)  # a run finished or was stopped: (episode id, its last tick)
    failed = Signal(object)
    ready = Signal()  # from the live thread: the episode is built

    def __init__(self) -> None:
        super().__init__()
        self.root: Path | None = None
        self.live: LiveRun | None = None
        self._seat_at: int | None = None  # a fork's tick, where the person takes the seat
        self._run_to_at_start: int | None = None
        self._shown: tuple[str, int] | None = None  # what the workspace last re-read
        self._finished: str | None = None  # the run whose end was told
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
        self.play_button = QPushButton()
        self.play_button.clicked.connect(self.toggle)
        # as wide as its widest text, so a click never lands on the neighbour after a toggle
        fm = self.play_button.fontMetrics()
        self.play_button.setMinimumWidth(max(fm.horizontalAdvance(t) for t in ("Play", "Pause"))
                                         + 48)  # fmt: skip
        self._show_playing(False)
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
        # a growing status must neither move the buttons nor widen the window: it is clipped
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.status.setMinimumWidth(120)
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
        self.take_button.setMinimumWidth(self.take_button.fontMetrics().horizontalAdvance(
            "Hand back") + 24)  # fmt: skip
        self.keys = TakeoverKeys(lambda: self.live, self._view)
        self.keys.watch(self)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        for col, w in enumerate((self.scenario, self.mode, self.persona, self.seat,
                                 self.start_button)):  # fmt: skip
            grid.addWidget(w, 0, col)
        for col, w in enumerate((self.play_button, self.step_button, self.speed, self.run_to,
                                 self.run_to_button)):  # fmt: skip
            grid.addWidget(w, 1, col)
        grid.addWidget(self.status, 1, 5)
        grid.setColumnStretch(5, 1)
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
    def start_fork(self, build: Build, tick: int, *, take_seat: bool,
                   make_world: Callable[[], Any] | None = None) -> None:  # fmt: skip
        """Re-run a recorded episode to ``tick`` as a new, linked one, pause there, and take
        the user's seat if asked (see ``sim.review.fork_build``); ``make_world`` makes the
        MuJoCo view's world (``sim.review.fork_world``), None for a symbolic episode."""
        if self.root is None or not self.ask_to_leave("Forking starts a new live run"):
            return
        self._seat_at = tick if take_seat else None
        self._begin(build, make_world, run_to=tick)
        self.status.setText(f"re-running to tick {tick}…")

    def start(self) -> None:
        if self.root is None or not self.ask_to_leave("Starting another live run"):
            return
        bound = open_scenario(self.scenario.currentText())
        mode, persona = self.mode.currentText(), PROFILES[self.persona.currentText()]
        user = "human" if self.seat.isChecked() else "rule"

        def build(project: Project) -> tuple[EpisodeRunner, Any]:
            ep = build_interactive(bound, mode=mode, persona=persona, user=user, project=project,
                                   batch=LIVE_BATCH)  # fmt: skip
            return ep.runner, ep

        make_world = None
        if mode == "physics":  # watch the arm as it runs
            root = self.root

            def make_world() -> Any:  # on the frame thread: the live run's own arm
                with Project.open(root) as p:
                    arm = resolve_arm(bound.scenario.arm or DEFAULT_ARM, p)
                return make_world_of(bound, "physics", arm=arm)

        self._seat_at = None
        self._begin(build, make_world)
        self.status.setText(f"starting {bound.name}…")

    def _begin(self, build: Build, make_world: Callable[[], Any] | None,
               run_to: int | None = None) -> None:  # fmt: skip
        """Start the live thread (and, in physics, the frame thread that keeps every tick's
        world for the MuJoCo view: the picture follows the playhead, back into the past)."""
        assert self.root is not None
        self.stop()
        self.frames = None
        on_tick = None
        view = self.world_view
        if make_world is not None and view is not None:
            frames = LiveFrames(make_world, view.frame_arrived.emit, view.failed.emit,
                                on_ready=view.frames_ready.emit)  # fmt: skip
            self.frames = frames

            def on_tick(runner: EpisodeRunner) -> None:  # every tick: cheap (arrays copied)
                frames.publish(runner.tick, runner.world.snapshot())

        self._run_to_at_start = run_to
        self.live = LiveRun(self.root, build, on_error=self.failed.emit, on_tick=on_tick,
                            on_ready=self.ready.emit)  # fmt: skip
        if self.frames is not None and view is not None:
            live, shown = self.live, view.push_changed

            def pushed(push: object) -> None:  # on the frame thread: straight to the physics
                live.push(push)  # type: ignore[arg-type]
                shown.emit(push)

            self.frames.on_push = pushed

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

    def ask_to_leave(self, doing: str, *, can_keep: bool = False) -> bool:
        """Whether the caller may go on: True when no run is live (or it has finished), or the
        person chose to stop and store it, or (``can_keep``) to keep it paused in the
        background; False when they cancel. Asked as ELAN asks before closing unsaved work."""
        live = self.live
        if live is None or live.finished or self.episode_id is None:
            return True
        box = QMessageBox(QMessageBox.Icon.Question, "A live episode is running",
                          f"Episode {self.episode_id[:8]} is live at tick {live.tick}. "
                          f"{doing}: what should happen to it?", parent=self)  # fmt: skip
        box.setObjectName("ask-to-leave")
        stop = box.addButton("Stop and store it", QMessageBox.ButtonRole.DestructiveRole)
        stop.setToolTip("End it here; it is stored as cancelled, with every tick it had")
        keep = (box.addButton("Keep it paused", QMessageBox.ButtonRole.AcceptRole)
                if can_keep else None)  # fmt: skip
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.setEscapeButton(cancel)
        box.exec()
        chosen = box.clickedButton()
        if chosen is stop:
            self.stop()
            return True
        if keep is not None and chosen is keep:
            self.pause()
            self.status.setText(f"paused in the background at tick {live.tick} · Play or "
                                "Step brings it back")  # fmt: skip
            return True
        return False

    def stop(self, *, quiet: bool = False) -> None:
        """End the live run (stored as cancelled if not finished); ``ended`` says so unless
        ``quiet`` (the project is going away)."""
        self.timer.stop()
        self.keys.reset()
        self.take_button.setText("Take over")
        ended: tuple[str, int] | None = None
        if self.live is not None:
            eid, live = self.episode_id, self.live
            live.stop()
            self.live = None
            what = "stopped" if eid is None else f"episode {eid[:8]} stored, stopped"
            self.status.setText(f"{what} at tick {live.tick}")
            if eid is not None and self._finished != eid:  # not told yet
                self._finished = eid
                ended = (eid, live.tick)
        if self.frames is not None:
            if self.world_view is not None and self.world_view.frames is self.frames:
                self.world_view.close_episode()
            self.frames.close()
            self.frames = None
        self._controls(False)
        self._shown = None
        if ended is not None and not quiet:
            self.ended.emit(*ended)

    def pause(self) -> None:
        if self.live is not None:
            self.live.pause()
            self._show_playing(False)

    def toggle(self) -> None:
        if self.live is None:
            return
        if self.live.playing:
            self.pause()
        else:
            self.live.play(self.speed.value())
            self._show_playing(True)

    def _show_playing(self, playing: bool) -> None:
        icon = (
            QStyle.StandardPixmap.SP_MediaPause if playing else QStyle.StandardPixmap.SP_MediaPlay
        )
        self.play_button.setIcon(self.style().standardIcon(icon))
        self.play_button.setText("Pause" if playing else "Play")

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
            self._show_playing(False)

    def _step(self) -> None:
        if self.live is not None:
            self.live.step(1)
            self._show_playing(False)

    def _do(self) -> None:
        if self.human is not None:
            self.human.do(self.do.text())
            self.do.clear()

    # ---- takeover --------------------------------------------------------------------------
    @property
    def taken_over(self) -> bool:
        return self.live is not None and self.live.taken_over

    def toggle_takeover(self) -> None:
        """Take the arm (the agent is held), or hand it back. A paused run starts playing at
        the chosen speed: the arm moves only while the world does."""
        live = self.live
        if live is None:
            return
        self.keys.reset()
        if live.taken_over:
            live.hand_back()
            self.take_button.setText("Take over")
            return
        live.take_over(self.who.text().strip() or load_settings().rater, self.why.text())
        self.take_button.setText("Hand back")
        if not live.playing and not live.finished:
            live.play(self.speed.value() or 1.0)
            self._show_playing(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setFocus()  # the keys come here (and work on the MuJoCo view too)

    def _view(self) -> tuple[str, Any]:
        """The camera the person looks through: keys move the arm as seen there."""
        from app.gui.episode._world_view import FREE

        view = self.world_view
        camera = view.camera.currentText() if view is not None else ""
        if view is not None and camera == FREE:
            return camera, view.free
        return camera or "front", None

    # ---- updates ---------------------------------------------------------------------------
    def reread(self) -> None:
        """Have the workspace read the trace again on the next update, even if paused."""
        self._shown = None

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
            self._show_playing(False)
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
        if live.finished and eid is not None and self._finished != eid:
            self._finished = eid
            self.timer.stop()
            self.ended.emit(eid, live.tick)
