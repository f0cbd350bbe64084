"""A live episode on a thread of its own: play at a speed factor, pause, step, run to a tick.

The engine honours pause and step at tick boundaries (DESIGN §6); this class owns the thread
that calls it, paces it to wall-clock (``speed`` × real time; 0 means as fast as it goes) and
measures the real-time factor actually reached. The episode is built *on* that thread, with
the thread's own project connection (SQLite connections stay on their thread), and records as
it runs, so the workspace can read the trace while it grows.

A person can take the arm over (:meth:`LiveRun.take_over`, physics only): the runner is held
(``EpisodeRunner.held``: the agent is not asked, its queue waits, so no action of its is
submitted and none is refused), and as soon as the arm is idle a :class:`~sim.teleop.Teleop`
drives it from the :class:`~sim.teleop.Command` s given (:meth:`LiveRun.command`) until
:meth:`LiveRun.hand_back`. Each takeover is a span (start tick, end tick, who, why) stored
with the episode (``config.takeovers``) when it starts and again when it ends.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim._worker import Worker
from sim.episode import EpisodeRunner, RunState
from storage import EpisodeError, Project

if TYPE_CHECKING:
    from sim.mujoco import Push
    from sim.teleop import Command, Span, Teleop

#: builds the episode on the live thread: ``project -> (runner, episode id or None, extra)``
Build = Callable[[Project], tuple[EpisodeRunner, Any]]


class LiveRun(Worker):
    def __init__(
        self, root: Path, build: Build, *, on_error: Callable[[BaseException], None] | None = None,
        on_tick: Callable[[EpisodeRunner], None] | None = None,
        on_ready: Callable[[], None] | None = None,
    ) -> None:  # fmt: skip
        """``on_tick(runner)`` runs on the live thread after every tick: keep it cheap (the
        MuJoCo view publishes a snapshot every few ticks and renders on a thread of its own);
        ``on_ready()`` runs there once the episode is built."""
        super().__init__("wb-live", on_error, on_ready)
        self.root, self.build = root, build
        self.on_tick = on_tick
        self.runner: EpisodeRunner | None = None
        self.extra: Any = None
        self.speed = 1.0
        self._steps = 0  # ticks still to take while paused (step / run to)
        self._playing = False
        self._walls: deque[tuple[float, int]] = deque(maxlen=50)  # (wall, tick) while playing
        self._push: tuple[Push | None] | None = None  # a change of hand push, not yet applied
        self._pushing = False
        #: tick spans (inclusive) with a body pushed by hand; stored as ``config.perturbed``
        self.perturbed: list[tuple[int, int]] = []
        #: takeovers so far (the last one open while :attr:`taken_over`); ``config.takeovers``
        self.takeovers: list[Span] = []
        self.teleop: Teleop | None = None  # driving the arm now
        self._want: tuple[str, str] | None = None  # (who, why) waiting for the arm to be idle
        self._control: list[tuple[str, Any]] = []  # take / back, not yet applied
        self._command: Command | None = None  # the person's command in force
        self._flush_due = False
        self._view: tuple[str, Any] = ("front", None)  # see set_view
        self._start()

    # ---- control (any thread) ---------------------------------------------------------------
    def play(self, speed: float = 1.0) -> None:
        with self._cv:
            self.speed, self._playing = max(0.0, speed), True
            self._walls.clear()
            self._cv.notify()

    def pause(self) -> None:
        with self._cv:
            self._playing, self._steps = False, 0
            self._flush_due = True  # the trace is written up to the tick it paused at
            self._cv.notify()

    def step(self, n: int = 1) -> None:
        with self._cv:
            self._playing = False
            self._steps += max(0, n)
            self._cv.notify()

    def run_to(self, tick: int) -> None:
        if self.runner is not None:
            self.step(max(0, tick - self.runner.tick))

    def push(self, push: Push | None) -> None:
        """Pull a body by hand (MuJoCo's mouse spring) from the next tick on, or let go
        (``None``). The episode is then marked as perturbed: it cannot be replayed exactly."""
        with self._cv:
            self._push = (push,)
            self._cv.notify()

    def take_over(self, who: str, why: str = "") -> None:
        """Take the arm from the agent at the next tick boundary (once its current action is
        done): the agent is held from then on, the arm follows :meth:`command`. ``why``
        defaults to "took over"."""
        if not who.strip():
            raise EpisodeError("take over: say who is taking over (a name)")
        world = self.runner.world if self.runner is not None else None
        if world is not None and not hasattr(world, "set_manual"):
            raise EpisodeError("take over: a symbolic episode has no arm to drive")
        with self._cv:
            self._control.append(("take", (who.strip(), why.strip() or "took over")))
            self._cv.notify()

    def command(self, cmd: Command) -> None:
        """The person's command from the next tick on, held until the next one (a key held
        down); ignored unless taken over. A screen-frame command moves the arm as seen through
        the view of :meth:`set_view`."""
        with self._cv:
            self._command = cmd

    def set_view(self, camera: str, free: Any = None) -> None:
        """The camera the person looks through (``free``: the orbit camera, with an
        ``azimuth``), for screen-frame commands."""
        with self._cv:
            self._view = (camera, free)

    def hand_back(self) -> None:
        """Give the arm back to the agent's controller at the next tick boundary."""
        with self._cv:
            self._control.append(("back", None))
            self._cv.notify()

    @property
    def taken_over(self) -> bool:
        """Whether a person has the arm, or asked for it and waits for the arm to be idle."""
        return self.teleop is not None or self._want is not None

    def stop(self, timeout: float = 10.0) -> None:
        """End the run (an episode not finished yet is stored as cancelled); see :meth:`close`."""
        self.close(timeout)

    # ---- what it shows ----------------------------------------------------------------------
    @property
    def tick(self) -> int:
        return self.runner.tick if self.runner is not None else 0

    @property
    def finished(self) -> bool:
        return self.runner is not None and self.runner.state is RunState.FINISHED

    @property
    def playing(self) -> bool:
        return self._playing and not self.finished

    @property
    def episode_id(self) -> str | None:
        """The id of the episode being recorded (once it is built), from its recording sink."""
        for sink in self.runner.sinks if self.runner is not None else ():
            eid = getattr(sink, "episode_id", None) or getattr(
                getattr(sink, "db", None), "episode_id", None
            )
            if eid:
                return str(eid)
        return None

    @property
    def rtf(self) -> float | None:
        """Simulated seconds per wall second over the last ticks played (None until known)."""
        if self.runner is None or len(self._walls) < 2:
            return None
        (w0, t0), (w1, t1) = self._walls[0], self._walls[-1]
        return (t1 - t0) * self.runner.world.delta / (w1 - w0) if w1 > w0 else None

    # ---- the thread -------------------------------------------------------------------------
    def _serve(self) -> None:
        with Project.open(self.root) as project:
            try:
                self.runner, self.extra = self.build(project)
                self.runner.start()
                if self.on_tick is not None:  # tick 0: the world before anything happens
                    self.on_tick(self.runner)
                self._started()
                self._loop(project)
            finally:  # with the project still open: the trace is written whole
                if self._pushing:
                    self._mark(project)  # the last span's end
                if self.teleop is not None:  # stopped while a person had the arm
                    self._hand_back(project)
                if self.runner is not None:
                    if self.runner.state is not RunState.FINISHED:
                        self.runner.cancel("stopped in the live view")
                        self.runner.step()  # finishes it as cancelled
                    self.runner.world.close()

    def _loop(self, project: Project) -> None:
        runner = self.runner
        assert runner is not None
        anchor: tuple[float, int, float] | None = None  # (wall, tick, speed) of the schedule

        def pending() -> bool:  # a change to apply, or a tick to take
            ticking = bool(self._playing or self._steps) and runner.state is not RunState.FINISHED
            return self._push is not None or bool(self._control) or ticking or self._flush_due

        while True:
            with self._cv:
                if not self._wait(pending, timeout=0.2):
                    return
                change, self._push = self._push, None
                control, self._control = self._control, []
                flush, self._flush_due = self._flush_due, False
                cmd = self._command
                ticking = (
                    bool(self._playing or self._steps > 0) and runner.state is not RunState.FINISHED
                )
                if change is None and not control and ticking:
                    playing = self._playing
                    if not playing:
                        self._steps -= 1
                    speed = self.speed
            if flush:
                _flush(runner)
            if change is None and not control and not ticking:
                continue
            if change is not None or control:  # applied between ticks, paused or not
                if change is not None and runner.state is not RunState.FINISHED:
                    self._apply_push(project, change[0])
                for what, arg in control:
                    self._apply_control(project, what, arg)
                continue
            if self._want is not None and not runner.world.busy:
                self._take(project)  # the agent's last action is done: the arm is free
            if self.teleop is not None and cmd is not None:
                from sim.teleop import world_command

                self.teleop.hold(world_command(runner.world, cmd, *self._view))
            runner.step()
            if self._pushing:
                a, _ = self.perturbed[-1]
                self.perturbed[-1] = (a, runner.tick)
            if self.teleop is not None:
                self.takeovers[-1] = replace(self.takeovers[-1], end=runner.tick)
            if self.on_tick is not None:
                self.on_tick(runner)
            if not playing:
                anchor = None
                with self._cv:
                    resting = not self._playing and self._steps <= 0
                if resting:  # paused: the trace is written up to this tick, not a batch behind
                    _flush(runner)
                continue
            now = time.monotonic()
            self._walls.append((now, runner.tick))
            if speed <= 0:
                continue
            # Pace to a schedule, not tick by tick: each tick is due at anchor + n·Δ/speed, so a
            # sleep that overshoots is made up on the next tick instead of adding up (the rate
            # stays at the speed asked). A run that fell behind by more than half a second
            # (a slow tick, a paused machine) starts a new schedule rather than racing to catch up.
            fresh = len(self._walls) == 1  # play() was just pressed: a schedule from now
            if (
                fresh
                or anchor is None
                or anchor[2] != speed
                or now - self._due(anchor, runner) > 0.5
            ):
                anchor = (now, runner.tick, speed)
            left = self._due(anchor, runner) - time.monotonic()
            if left > 0:
                time.sleep(left)

    @staticmethod
    def _due(anchor: tuple[float, int, float], runner: EpisodeRunner) -> float:
        """When the runner's next tick is due on the schedule that started at ``anchor``."""
        wall, tick, speed = anchor
        return wall + (runner.tick + 1 - tick) * runner.world.delta / speed

    def _apply_push(self, project: Project, push: Push | None) -> None:
        """On the live thread, between ticks: hand the push to the world and, when one starts
        or ends, store the perturbed spans at once (a crash mid-push still leaves the mark)."""
        runner = self.runner
        assert runner is not None
        world: Any = runner.world
        if not hasattr(world, "push"):
            return  # a symbolic world has no bodies to push
        world.push(push)
        was, self._pushing = self._pushing, push is not None
        if self._pushing and not was:
            self.perturbed.append((runner.tick, runner.tick))
        if self._pushing != was:
            self._mark(project)

    def _mark(self, project: Project) -> None:
        eid = self.episode_id
        if eid is not None and self.perturbed:
            project.episodes.mark_perturbed(eid, self.perturbed)

    # ---- takeovers (on the live thread, between ticks) ----------------------------------------
    def _apply_control(self, project: Project, what: str, arg: Any) -> None:
        runner = self.runner
        assert runner is not None
        if what == "take" and not self.taken_over and runner.state is not RunState.FINISHED:
            runner.held = True  # at once: the agent starts nothing new while the arm frees up
            self._want = arg
            if not runner.world.busy:
                self._take(project)
        elif what == "back":
            if self.teleop is not None:
                self._hand_back(project)
            elif self._want is not None:  # asked, never got the arm: nothing to record
                self._want = None
                runner.held = False

    def _take(self, project: Project) -> None:
        from sim.teleop import Span, Teleop  # mujoco-heavy: only when someone takes over

        runner = self.runner
        assert runner is not None and self._want is not None
        who, why = self._want
        self._want = None
        self.teleop = Teleop(runner.world)  # type: ignore[arg-type]  # a PhysicsWorld
        with self._cv:
            self._command = None  # a key still held from a takeover before does not carry over
        self.takeovers.append(Span(runner.tick, runner.tick, who, why))
        self._mark_takeovers(project)  # stored at once: a crash mid-takeover keeps the mark

    def _hand_back(self, project: Project) -> None:
        runner = self.runner
        assert runner is not None and self.teleop is not None
        self.teleop.close()
        self.teleop = None
        runner.held = False
        self._mark_takeovers(project)

    def _mark_takeovers(self, project: Project) -> None:
        eid = self.episode_id
        if eid is not None and self.takeovers:
            spans = [{"start": s.start, "end": s.end, "who": s.who, "why": s.why}
                     for s in self.takeovers]  # fmt: skip
            project.episodes.mark_taken_over(eid, spans)


def _flush(runner: EpisodeRunner) -> None:
    """Write every sink's waiting rows (ticks first: the trace's turns refer to them)."""
    for sink in runner.sinks:
        flush = getattr(sink, "flush", None)
        if callable(flush):
            flush()
