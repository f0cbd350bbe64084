"""The teleoperation loop on a thread of its own, paced to wall-clock.

A person's device (keys, a gamepad) sets the current :class:`Command` from the GUI thread with
:meth:`TeleopSession.set_command`; the session thread reads it at every control step
(:data:`TELEOP_DELTA`, 20 ms: a key press shows within a step and a frame), turns a
screen-frame command into world axes through the camera the person looks through
(:meth:`TeleopSession.set_view`, :func:`sim.teleop.to_world`, read every step so the wrist
camera stays right as it moves), runs one step through its :class:`Recorder` (recorded while
recording, else it just moves the arm), and tells what changed. Recording decisions (record,
next, re-record, stop) are queued and carried out between ticks; a demonstration that ends is
stored in the project at once, so a crash loses at most the one in progress. The recorder, its
world and the project connection all live on this thread (SQLite connections stay on their
thread); nothing here imports Qt.

Nothing is said while nothing changes: the world's snapshot is published (for a frame thread to
render) only when some position moved by more than :data:`STILL` since the last one published
or a heater turned on or off, and a :class:`SessionStatus` only when what it shows changed, or
every :data:`HEARTBEAT` seconds. An idle workspace used to render and repaint fifty frames a
second of a world at rest (94 % of a core under software GL, measured). And while the world is
at rest, nothing is recorded and nobody drives it, the loop ticks only every
:data:`REST_TICK` seconds (see :meth:`TeleopSession._resting`): stepping a world at rest
changes nothing, and a command wakes it at once.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sim._worker import Worker
from sim.contracts import evaluate
from sim.episode import open_scenario
from sim.mujoco import jaw_yaw
from sim.teleop._control import Command
from sim.teleop._record import TELEOP_DELTA, Recorder
from sim.teleop._store import store_demonstration
from sim.teleop._view import Orbiting, world_command
from sim.world import SceneGraph
from storage import Project

ACTIONS = ("record", "next", "rerecord", "stop")
BEHIND = 0.5  # s: a loop this far behind its schedule starts a new one instead of racing
DEFAULT_CAMERA = "front"  # the view the workspace opens on (app.gui.episode.WorldView's)
STILL = 1e-5  # m or rad: a position that moved less than this since the last frame is still
HEARTBEAT = 0.25  # s: a status this often even when nothing changed (the tick goes on)
STEPS_EVERY = 0.1  # s: while recording at rest, the step count is said this often
REST_SPEED = 1e-4  # m/s or rad/s: every joint slower than this, the world is at rest
REST_TICK = 0.25  # s between ticks while the world rests and nobody drives it


@dataclass(frozen=True)
class SessionStatus:
    """What the session looked like after one tick (handed to the GUI thread as a value)."""

    tick: int  # ticks run since the session started
    recording: bool
    steps: int  # steps recorded in the demonstration in progress
    stored: tuple[str, ...]  # episode ids of the demonstrations stored by this session
    ee: tuple[float, float, float]  # end-effector site position, metres
    yaw: float  # jaw yaw about z, radians
    grip: float  # the grip setting in force, 0 open … 1 closed
    speed: float
    clutch: bool
    limits: tuple[str, ...]  # what held the arm during the tick
    success: bool  # the task contract holds now
    graph: SceneGraph


class TeleopSession(Worker):
    """Drive ``scenario`` on ``arm`` (shipped or a profile of the project at ``root``).

    :meth:`close` ends the loop (a demonstration in progress is discarded) and frees the world.
    """

    def __init__(
        self,
        root: Path,
        scenario: str,
        arm: str,
        *,
        on_status: Callable[[SessionStatus], None] | None = None,
        on_snapshot: Callable[[int, dict[str, Any]], None] | None = None,
        on_stored: Callable[[str], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        on_ready: Callable[[], None] | None = None,
        speed: float = 1.0,
    ) -> None:
        """``speed`` × real time (0: as fast as it goes). Callbacks run on the session thread."""
        super().__init__("wb-teleop", on_error, on_ready)
        self.root, self.scenario, self.arm = root, scenario, arm
        self.on_status, self.on_snapshot, self.on_stored = on_status, on_snapshot, on_stored
        self.speed = max(0.0, float(speed))
        self.recorder: Recorder | None = None  # touch it only from the session thread
        self.max_linear = 0.0  # known once ready
        self.max_angular = 0.0
        self.tick = 0
        self.stored: list[str] = []
        self._cmd = Command()
        self._view: tuple[str, Orbiting | None] = (DEFAULT_CAMERA, None)
        self._actions: list[str] = []
        self.published = 0  # snapshots handed to on_snapshot (each one is a frame to render)
        self._shown: tuple[np.ndarray, frozenset[str]] | None = None  # the last published
        self._said: tuple[object, ...] | None = None  # what the last status showed
        self._said_at = 0.0
        self._start()

    # ---- any thread --------------------------------------------------------------------
    def set_command(self, cmd: Command) -> None:
        """The command every tick uses from now on (until the next call); a screen-frame one
        is taken as seen through the view of :meth:`set_view`. A resting loop wakes at once."""
        with self._cv:
            self._cmd = cmd
            self._cv.notify()

    def set_view(self, camera: str, free: Orbiting | None = None) -> None:
        """The camera the person looks through: a scene camera's name, or ``free`` (the orbit
        camera; only its azimuth matters). Screen-frame commands move along its axes."""
        with self._cv:
            self._view = (camera, free)

    def record(self) -> None:
        self._queue("record")

    def next(self) -> None:
        self._queue("next")

    def rerecord(self) -> None:
        self._queue("rerecord")

    def stop_recording(self) -> None:
        self._queue("stop")

    def _queue(self, action: str) -> None:
        with self._cv:
            self._actions.append(action)
            self._cv.notify()

    # ---- the session thread ------------------------------------------------------------
    def _serve(self) -> None:
        with Project.open(self.root) as project:
            bound = open_scenario(self.scenario)
            rec = Recorder(bound, self.arm, project=project, delta=TELEOP_DELTA)
            try:
                self.recorder = rec
                self.max_linear = rec.teleop.max_linear
                self.max_angular = rec.teleop.max_angular
                self._started()
                self._loop(project, rec)
            finally:
                rec.close()

    def _loop(self, project: Project, rec: Recorder) -> None:
        delta = rec.world.delta
        anchor, at = time.monotonic(), 0  # the schedule: tick ``at + n`` is due at anchor + n·Δ
        while True:
            with self._cv:
                if self._stop:
                    return
                actions, self._actions = self._actions, []
                cmd, (camera, free) = self._cmd, self._view
            for action in actions:  # between ticks: a decision is committed when it is made
                self._act(project, rec, action)
            report = rec.step(self._world_command(rec, cmd, camera, free))
            self.tick += 1
            moved = self._publish(rec)
            if self.on_status is not None:
                status = self._status(rec, cmd, report.limits)
                if self._news(status, moved):
                    self.on_status(status)
            if self.speed <= 0:
                continue
            if self._resting(rec, cmd):
                with self._cv:  # until the person does something, or the next slow tick
                    self._cv.wait_for(functools.partial(self._woken, cmd), REST_TICK)
                anchor, at = time.monotonic(), self.tick  # from here on, real time again
                continue
            now = time.monotonic()
            due = anchor + (self.tick - at) * delta / self.speed
            if now - due > BEHIND:  # a slow tick or a paused machine: no racing to catch up
                anchor, at, due = now, self.tick, now
            with self._cv:  # a wait, not a sleep: close() and decisions need not wait a tick
                while not self._stop and not self._actions and time.monotonic() < due:
                    self._cv.wait(max(0.0, due - time.monotonic()))

    @staticmethod
    def _world_command(rec: Recorder, cmd: Command, camera: str, free: Orbiting | None) -> Command:
        """``cmd`` in world axes, through the camera's axes as they are now."""
        return world_command(rec.world, cmd, camera, free)

    def _woken(self, cmd: Command) -> bool:
        """(Under the lock) whether a resting loop must tick now: closed, a decision, or a
        command other than ``cmd`` (a pad polled with the same neutral one does not count)."""
        return self._stop or bool(self._actions) or self._cmd != cmd

    def _resting(self, rec: Recorder, cmd: Command) -> bool:
        """Whether ticking on would change nothing: not recording, nothing commanded, nothing
        moving (every joint slower than :data:`REST_SPEED`) and no heater on (cooking goes on
        in time). Then the loop ticks only every :data:`REST_TICK` seconds until a command or a
        decision comes: nobody can tell, and an idle workspace costs next to nothing."""
        if rec.recording or self._actions:
            return False
        if cmd.clutch and (any(cmd.linear) or any(cmd.angular)):
            return False
        if self._shown is None or self._shown[1]:  # nothing shown yet, or a heater is on
            return False
        qvel = rec.world.data.qvel
        return float(np.max(np.abs(qvel), initial=0.0)) < REST_SPEED

    def _publish(self, rec: Recorder) -> bool:
        """Hand the world's snapshot on if it looks different from the last one handed on."""
        w = rec.world
        qpos = np.array(w.data.qpos, dtype=np.float64)
        lit = frozenset(o for o, n in w.graph.nodes.items() if n.attrs.get("on"))
        last = self._shown
        if last is not None and last[1] == lit and float(np.max(np.abs(qpos - last[0]),
                                                                initial=0.0)) <= STILL:  # fmt: skip
            return False
        self._shown = (qpos, lit)
        if self.on_snapshot is not None:
            self.on_snapshot(self.tick, w.snapshot())
            self.published += 1
        return True

    def _news(self, st: SessionStatus, moved: bool) -> bool:
        """Whether ``st`` is worth saying: the world ``moved``, it shows something the last
        status did not, or it is time to say the tick (every :data:`HEARTBEAT`) or, while
        recording, the growing step count (every :data:`STEPS_EVERY`) again."""
        key = (st.recording, st.stored, tuple(round(v, 4) for v in st.ee), round(st.yaw, 3),
               st.grip, st.speed, st.clutch, st.limits, st.success)  # fmt: skip
        now = time.monotonic()
        every = STEPS_EVERY if st.recording else HEARTBEAT
        if not moved and key == self._said and now - self._said_at < every:
            return False
        self._said, self._said_at = key, now
        return True

    def _act(self, project: Project, rec: Recorder, action: str) -> None:
        try:
            if action == "record":
                if not rec.recording:
                    rec.start()
            elif action == "next":
                if rec.recording and rec.steps:
                    self._store(project, rec.next())
                elif not rec.recording:
                    rec.start()
            elif action == "rerecord":
                if rec.recording:
                    rec.rerecord()
            elif action == "stop":
                before = len(rec.demos)
                rec.stop()
                if len(rec.demos) > before:
                    self._store(project, rec.demos[-1])
        except Exception as err:  # a failed store must not end the session: say it, go on
            if self.on_error is not None:
                self.on_error(err)

    def _store(self, project: Project, demo: Any) -> None:
        eid = store_demonstration(project, demo)
        self.stored.append(eid)
        if self.on_stored is not None:
            self.on_stored(eid)

    def _status(self, rec: Recorder, cmd: Command, limits: tuple[str, ...]) -> SessionStatus:
        w, t = rec.world, rec.teleop
        site = w.scene.arm.site_id
        graph = w.graph
        x, y, z = (float(v) for v in w.data.site_xpos[site])
        return SessionStatus(
            tick=self.tick,
            recording=rec.recording,
            steps=rec.steps,
            stored=tuple(self.stored),
            ee=(x, y, z),
            yaw=float(jaw_yaw(w.data.site_xmat[site].reshape(3, 3), t.gripper.jaw)),
            grip=t.grip,
            speed=cmd.speed,
            clutch=cmd.clutch,
            limits=limits,
            success=evaluate(rec.bound.contract, graph, []).satisfied,
            graph=graph,
        )
