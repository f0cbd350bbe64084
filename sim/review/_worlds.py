"""The world of a recorded episode at any tick, exactly: nearest snapshot, then replay.

Replays are deterministic (the state hash of every tick is stored and compared by
``sim replay``), so restoring the latest stored snapshot at or before a tick and re-running the
recorded decisions up to it gives the world as it was, physics included. Scrubbing forward
steps on from where the cursor stands; backwards, or past a later snapshot, it restores.

A :class:`FrameThread` owns one cursor and renders on its own thread: an offscreen GL context
belongs to the thread that made it, and the GUI thread stays free (mujoco releases the GIL
while it steps and renders). Requests are coalesced: only the newest waits, so dragging the
playhead never queues a backlog.

A demonstration (an episode recorded by teleoperation, agent ``teleop``) has no decisions to
replay: its ``.npz`` holds the MuJoCo integration state of every step, so the cursor restores
the stored state of the tick asked for, and :attr:`WorldCursor.faithful` checks the world's
state against the tick's stored hash (the sha256 of that state).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sim._worker import Worker
from sim.episode import EpisodeRunner, episode_world, open_scenario, recorded, replay_runner
from sim.scenario import ScenarioError
from storage import EpisodeRecord, Project

#: ticks a cursor keeps in memory (about 10 kB each for the kitchen scene)
MEMO_TICKS = 5000


class WorldCursor:
    """A replaying runner positioned at any tick of one stored episode.

    Every tick it passes through is kept in memory as a runner snapshot (about 10 kB for the
    kitchen scene; up to :data:`MEMO_TICKS` of them), so going back to a tick seen once costs a
    restore (~1 ms) instead of a replay from the stored snapshot before it; :meth:`prefetch`
    fills the rest in while the view is idle.
    """

    def __init__(self, project: Project, episode_id: str) -> None:
        #: a demonstration's per-step MuJoCo states (None: an episode replayed from decisions)
        self.demo_states: NDArray[np.float64] | None = None
        if is_demonstration(project.episodes.get(episode_id)):
            self._open_demo(project, episode_id)
            return
        ep, bound, decisions = recorded(project, episode_id)
        self.episode = ep
        self.world = episode_world(project, ep, bound)  # its arm, checked unchanged
        self.snapshots = [(t, s) for t, s in project.episodes.snapshots(ep.id)]
        self.expected = project.episodes.hashes(ep.id)
        self._bound, self._decisions = bound, decisions
        self._memo: dict[int, dict[str, Any]] = {}
        self._memo_ticks: list[int] = []  # sorted keys of _memo
        self._frontier = 0  # every tick below it is in the memo
        self.runner = self._make()
        self.runner.start()
        self._remember()

    def _make(self) -> EpisodeRunner:
        return replay_runner(self.world, self._bound, self.episode, self._decisions)

    def _open_demo(self, project: Project, episode_id: str) -> None:
        from sim.teleop import load_demonstration  # mujoco-heavy, and only for demonstrations

        demo = load_demonstration(project, episode_id)
        ep = project.episodes.get(episode_id)
        self.episode = ep
        source = str(ep.config.get("source", ep.scenario))
        bound = open_scenario(source)
        if bound.scenario.digest != ep.scenario_sha:
            raise ScenarioError(
                f"{source}: the scenario changed since demonstration {ep.id[:8]} was recorded "
                "(its digest differs); its states belong to the scene it ran in"
            )
        self.world = episode_world(project, ep, bound)  # its arm, checked unchanged
        self.world.reset(ep.seed)  # the layout's parked objects and attributes, as recorded
        self.demo_states = demo.states
        self.expected = project.episodes.hashes(ep.id)
        self.snapshots = []
        self._base: dict[str, Any] = self.world.snapshot()
        self._tick = -1
        self.seek(0)

    @property
    def tick(self) -> int:
        return self._tick if self.demo_states is not None else self.runner.tick

    def _seek_demo(self, tick: int) -> int:
        """Restore the demonstration's recorded state of ``tick`` (one ``mj_setState``)."""
        assert self.demo_states is not None
        tick = max(0, min(int(tick), len(self.demo_states) - 1))
        if tick != self._tick:
            snap = dict(self._base)
            snap["physics"] = np.ascontiguousarray(self.demo_states[tick]).tobytes().hex()
            snap["world"] = {**self._base["world"], "tick": tick}
            self.world.restore(snap)
            self._tick = tick
        return tick

    def state_hash(self) -> str:
        """The world's state hash in the episode's own terms (what its ticks stored)."""
        if self.demo_states is None:
            return self.world.state_hash()
        return _demo_hash(self.world)

    def seek(self, tick: int) -> int:
        """Put the world at ``tick`` (clamped to the episode); returns the tick reached."""
        if self.demo_states is not None:
            return self._seek_demo(tick)
        tick = max(0, min(int(tick), self.episode.ticks))
        if tick == self.runner.tick:
            return tick
        snap = None
        for t, s in self.snapshots:
            if t <= tick:
                snap = (t, s)
        k = bisect.bisect_right(self._memo_ticks, tick) - 1
        memo = self._memo_ticks[k] if k >= 0 else -1
        here = self.runner.tick if self.runner.tick <= tick else -1
        stored = snap[0] if snap is not None else -1
        if memo > here and memo >= stored:
            self._restore_memo(memo)
        elif stored > here or here < 0:
            self.runner = self._make()
            if snap is None:
                self.runner.start()
            else:
                self.runner.restore(json.loads(snap[1]))
            self._remember()
        while self.runner.tick < tick and self.runner.result is None:
            self.runner.step()
            self._remember()
        return self.runner.tick

    def prefetch(self) -> bool:
        """Replay one more tick into the memory (the first one missing); False when there is
        nothing left to do (all ticks held, or the memory is full; a demonstration restores
        any tick at once)."""
        if self.demo_states is not None:
            return False
        while self._frontier in self._memo:
            self._frontier += 1
        if self._frontier > self.episode.ticks or len(self._memo) >= MEMO_TICKS:
            return False
        self.seek(self._frontier)
        return True

    def _remember(self) -> None:
        t = self.runner.tick
        if t not in self._memo and len(self._memo) < MEMO_TICKS:
            snap = self.runner.snapshot()
            # a runner snapshot carries every hash so far: kept per tick that is quadratic in
            # the episode's length (hundreds of MB at 5,000 ticks). A faithful tick's hashes
            # are the recorded ones, so only where the replay left them are they kept
            if self.faithful:  # this tick's hash is the recorded one, so are those before it
                snap["hashes"] = len(snap["hashes"])
            self._memo[t] = snap
            bisect.insort(self._memo_ticks, t)

    def _restore_memo(self, t: int) -> None:
        snap = dict(self._memo[t])
        if isinstance(snap["hashes"], int):
            snap["hashes"] = self.expected[: snap["hashes"]]
        self.runner = self._make()
        self.runner.restore(snap)

    @property
    def faithful(self) -> bool:
        """Whether the world's state hash is the one recorded at this tick."""
        if self.demo_states is not None:
            t = self._tick
            return 0 <= t < len(self.expected) and _demo_hash(self.world) == self.expected[t]
        hashes = self.runner.hashes
        t = self.runner.tick
        return bool(hashes) and t < len(self.expected) and hashes[-1] == self.expected[t]

    def close(self) -> None:
        self.world.close()


def is_demonstration(ep: EpisodeRecord) -> bool:
    """Whether ``ep`` is a demonstration recorded by teleoperation (see ``sim.teleop``)."""
    return ep.agent == "teleop" and bool(ep.config.get("teleop"))


def _demo_hash(world: Any) -> str:
    """sha256 of the world's MuJoCo integration state, as a demonstration's ticks store it."""
    import mujoco  # type: ignore[import-untyped]

    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    state = np.zeros(mujoco.mj_stateSize(world.model, spec))
    mujoco.mj_getState(world.model, world.data, state, spec)
    return hashlib.sha256(state.tobytes()).hexdigest()


@dataclass(frozen=True)
class Frame:
    tick: int
    camera: str
    image: NDArray[np.uint8]  # height × width × 3, top row first


class FrameThread(Worker):
    """Renders ``(tick, camera)`` requests of one episode on a thread of its own."""

    def __init__(
        self,
        root: Path,
        episode_id: str,
        on_frame: Callable[[Frame], None],
        on_error: Callable[[BaseException], None],
        on_ready: Callable[[], None] | None = None,
        size: tuple[int, int] = (640, 480),
        on_pick: Callable[[str | None], None] | None = None,
    ) -> None:
        super().__init__("wb-frames", on_error, on_ready)  # on_ready: once cameras are known
        self.root, self.episode_id, self.size = root, episode_id, size
        self.on_frame, self.on_pick = on_frame, on_pick
        self._pick: tuple[int, str, float, float, dict[str, Any]] | None = None
        self.cameras: list[str] = []
        #: set once every tick is held in memory: from then on a seek restores, never replays
        self.prefetched = threading.Event()
        self._want: tuple[int, str, dict[str, Any]] | None = None
        self._cursor: WorldCursor | None = None  # made and used on this object's thread
        self._start()

    def request(self, tick: int, camera: str, **options: Any) -> None:
        """The frame of ``tick`` from ``camera``; ``options`` go to the world's renderer
        (``free`` camera, ``contacts``, ``labels``). Only the newest request waits."""
        with self._cv:
            self._want = (tick, camera, options)
            self._cv.notify()

    def pick(self, tick: int, camera: str, relx: float, rely: float, **options: Any) -> None:
        """Which object is under (relx, rely) of ``tick``'s frame: answered by ``on_pick``."""
        with self._cv:
            self._pick = (tick, camera, relx, rely, options)
            self._cv.notify()

    def _serve(self) -> None:
        with Project.open(self.root) as project:
            self._cursor = cursor = WorldCursor(project, self.episode_id)
        self.cameras = list(getattr(cursor.world, "cameras", ()))
        self._started()

        def asked() -> bool:
            return self._want is not None or self._pick is not None

        while True:
            with self._cv:
                # nothing asked: prefetch (until every tick is in memory)
                idle = None if self.prefetched.is_set() else self._prefetch
                if not self._wait(asked, idle=idle):
                    return
                want, self._want = self._want, None
                pick, self._pick = self._pick, None
            if want is not None:
                tick, camera, options = want
                reached = cursor.seek(tick)
                image = _render(cursor.world, camera, *self.size, **options)
                self.on_frame(Frame(reached, camera, image))
            if pick is not None and self.on_pick is not None:
                tick, camera, relx, rely, options = pick
                cursor.seek(tick)  # picks use the renderer of the frame already shown
                world: Any = cursor.world  # a physics world: only it renders and picks
                self.on_pick(world.pick(camera, relx, rely, *self.size, **options))

    def _prefetch(self) -> bool:
        """Replay one more tick into memory; False (and :attr:`prefetched` set) once all are."""
        assert self._cursor is not None
        more = self._cursor.prefetch()
        if not more:
            self.prefetched.set()
        return more

    def _finish(self) -> None:
        if self._cursor is not None:
            self._cursor.close()  # frees the GL context on the thread that made it


def _render(world: Any, camera: str, width: int, height: int, **options: Any) -> NDArray[np.uint8]:
    image: NDArray[np.uint8] = np.ascontiguousarray(world.render(camera, width, height, **options))
    return image
