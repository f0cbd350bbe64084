"""The teleoperation loop on a thread of its own, paced to wall-clock.

A person's device (keys, a gamepad) sets the current :class:`Command` from the GUI thread with
:meth:`TeleopSession.set_command`; the session thread reads it at every control step
(:data:`TELEOP_DELTA`, 20 ms: a key press shows within a step and a frame), runs one step
through its :class:`Recorder` (recorded while recording, else it just moves the arm),
publishes the world's snapshot (for a frame thread to render off this one) and a
:class:`SessionStatus`. Recording decisions (record, next, re-record, stop) are queued and
carried out between ticks; a demonstration that ends is stored in the project at once, so a
crash loses at most the one in progress. The recorder, its world and the project connection all
live on this thread (SQLite connections stay on their thread); nothing here imports Qt.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim._worker import Worker
from sim.contracts import evaluate
from sim.episode import open_scenario
from sim.mujoco import jaw_yaw
from sim.teleop._control import Command
from sim.teleop._record import TELEOP_DELTA, Recorder
from sim.teleop._store import store_demonstration
from sim.world import SceneGraph
from storage import Project

ACTIONS = ("record", "next", "rerecord", "stop")
BEHIND = 0.5  # s: a loop this far behind its schedule starts a new one instead of racing


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
        self._actions: list[str] = []
        self._start()

    # ---- any thread --------------------------------------------------------------------
    def set_command(self, cmd: Command) -> None:
        """The command every tick uses from now on (until the next call)."""
        with self._cv:
            self._cmd = cmd

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
                cmd = self._cmd
            for action in actions:  # between ticks: a decision is committed when it is made
                self._act(project, rec, action)
            report = rec.step(cmd)
            self.tick += 1
            if self.on_snapshot is not None:
                self.on_snapshot(self.tick, rec.world.snapshot())
            if self.on_status is not None:
                self.on_status(self._status(rec, cmd, report.limits))
            if self.speed <= 0:
                continue
            now = time.monotonic()
            due = anchor + (self.tick - at) * delta / self.speed
            if now - due > BEHIND:  # a slow tick or a paused machine: no racing to catch up
                anchor, at, due = now, self.tick, now
            with self._cv:  # a wait, not a sleep: close() and decisions need not wait a tick
                while not self._stop and not self._actions and time.monotonic() < due:
                    self._cv.wait(max(0.0, due - time.monotonic()))

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
