"""The MuJoCo view of a live episode: the running world, and any tick it has passed through.

The live thread :meth:`LiveFrames.publish` es the world's snapshot after every tick (arrays
copied: about 7.5 kB and 0.07 ms in the kitchen scene); this thread keeps them by tick, restores
the one asked for into a world of its own and renders it, so the physics keeps its pace however
slow software GL draws, and the picture is the playhead's tick, not merely the newest one: a
person who pauses a live run (or a fork) and steps back sees the world as it was at that tick,
pushes and takeovers included, which a replay could not give.

A request for ``tick=None`` follows the running world (each published tick supersedes the last,
so a playing episode is drawn as fast as GL allows). At most :data:`KEEP_TICKS` ticks are kept;
past that the older half is thinned to every other tick, and a request between two kept ticks
gets the one before it (the frame says which tick it shows). Once the run ends, the workspace
opens the recorded episode, whose :class:`~sim.review.FrameThread` replays any tick exactly.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any

from sim._worker import Worker
from sim.review._worlds import Frame, _render

#: live ticks whose world is kept for seeking back (about 45 MB of the kitchen scene)
KEEP_TICKS = 6000


class LiveFrames(Worker):
    """Renders the live world at the tick asked for (or the newest) on a thread of its own."""

    def __init__(
        self,
        make: Callable[[], Any],
        on_frame: Callable[[Frame], None],
        on_error: Callable[[BaseException], None],
        on_ready: Callable[[], None] | None = None,
        size: tuple[int, int] = (640, 480),
        keep: int = KEEP_TICKS,
    ) -> None:
        """``keep``: how many ticks to keep for seeking back (1: only the newest, for a view
        that only ever follows the running world)."""
        super().__init__("wb-live-frames", on_error, on_ready)  # on_ready: once cameras are known
        self.make, self.on_frame, self.size = make, on_frame, size
        self.keep = max(1, keep)
        self.cameras: list[str] = []
        self._kept: dict[int, dict[str, Any]] = {}  # tick → world snapshot
        self._ticks: list[int] = []  # sorted keys of _kept
        #: (tick or None for the newest, camera, render options) of the newest request
        self._view: tuple[int | None, str, dict[str, Any]] | None = None
        self._drawn: tuple[int, str, int] | None = None  # (tick, camera, request no.) last drawn
        self._asked = 0  # request number: a new request redraws even the same tick
        #: told of every change of the hand push (the live run applies it); on this thread
        self.on_push: Callable[[Any], None] | None = None
        self._push: Any = None  # the current sim.mujoco.Push, owned by this thread
        self._calls: list[Callable[[Any], None]] = []  # push gestures, in order
        self._world: Any = None  # made and used on this object's thread
        self._start()

    # ---- from the live thread ----------------------------------------------------------------
    def publish(self, tick: int, snapshot: dict[str, Any]) -> None:
        """The world as it is after ``tick`` (a later publish of the same tick replaces it: a
        push applied between ticks)."""
        with self._cv:
            if tick not in self._kept:
                if self._ticks and tick < self._ticks[-1]:  # a run never goes back; be safe
                    bisect.insort(self._ticks, tick)
                else:
                    self._ticks.append(tick)
            self._kept[tick] = snapshot
            while len(self._ticks) > self.keep:
                self._thin()
            self._cv.notify()

    def _thin(self) -> None:
        """Drop every other tick of the older half, or the oldest (under the lock)."""
        half = len(self._ticks) // 2
        dropped = set(self._ticks[1:half:2]) or {self._ticks[0]}
        for t in dropped:
            del self._kept[t]
        self._ticks = [t for t in self._ticks if t not in dropped]

    # ---- from the GUI ------------------------------------------------------------------------
    def request(self, tick: int | None, camera: str, **options: Any) -> None:
        """The frame of ``tick`` (``None``: the newest, and every newer one as it comes) from
        ``camera``; ``options`` go to the world's renderer. Only the newest request waits."""
        with self._cv:
            self._asked += 1
            self._view = (tick, camera, options)
            self._cv.notify()

    @property
    def newest(self) -> int | None:
        """The newest tick published so far."""
        with self._cv:
            return self._ticks[-1] if self._ticks else None

    def kept_at(self, tick: int) -> int | None:
        """The tick whose world a request for ``tick`` shows: ``tick`` itself if kept, else the
        nearest kept one before it (None before the first)."""
        with self._cv:
            return self._kept_at(tick)

    def _kept_at(self, tick: int) -> int | None:
        k = bisect.bisect_right(self._ticks, tick) - 1
        return self._ticks[k] if k >= 0 else None

    # ---- pushing a body by hand (sim.mujoco._perturb): gestures run on this thread, which
    # owns the GL scene the mouse is measured against ------------------------------------------
    def grab(self, camera: str, relx: float, rely: float, **options: Any) -> None:
        """Grab the object under (relx, rely) of the last frame (MuJoCo's bottom-left units)."""

        def call(world: Any) -> None:
            self._set_push(world.grab(camera, relx, rely, *self.size, **options))

        self._call(call)

    def drag(self, camera: str, dx: float, dy: float, horizontal: bool = False,
             **options: Any) -> None:  # fmt: skip
        """Move the grabbed point by a mouse motion in pixels of the picture (y down)."""
        h = float(self.size[1])

        def call(world: Any) -> None:
            if self._push is not None:
                self._set_push(world.drag(self._push, camera, dx / h, -dy / h, *self.size,
                                          horizontal=horizontal, **options))  # fmt: skip

        self._call(call)

    def release(self) -> None:
        self._call(lambda _world: self._set_push(None))

    def _set_push(self, push: Any) -> None:
        self._push = push
        if self.on_push is not None:
            self.on_push(push)

    def _call(self, fn: Callable[[Any], None]) -> None:
        with self._cv:
            self._calls.append(fn)
            self._cv.notify()

    # ---- the thread ---------------------------------------------------------------------------
    def _due(self) -> tuple[int, dict[str, Any], str, dict[str, Any]] | None:
        """What to draw now (under the lock): the asked tick's world, if it differs from the
        frame last drawn or the request is new."""
        if self._view is None or not self._ticks:
            return None
        tick, camera, options = self._view
        at = self._ticks[-1] if tick is None else self._kept_at(tick)
        if at is None:
            at = self._ticks[0]
        if self._drawn == (at, camera, self._asked):
            return None
        self._drawn = (at, camera, self._asked)
        return at, self._kept[at], camera, options

    def _serve(self) -> None:
        self._world = world = self.make()
        self.cameras = list(getattr(world, "cameras", ()))
        self._started()
        due: tuple[int, dict[str, Any], str, dict[str, Any]] | None = None

        def asked() -> bool:
            nonlocal due
            if self._calls:
                return True
            due = self._due()
            return due is not None

        while True:
            with self._cv:
                if not self._wait(asked):
                    return
                calls, self._calls = self._calls, []
                want, due = due, None
            for fn in calls:  # gestures first: they are measured against the frame shown
                fn(world)
            if want is None:
                continue
            tick, snap, camera, options = want
            world.restore(snap)
            image = _render(world, camera, *self.size, **options)
            self.on_frame(Frame(tick, camera, image))

    def _finish(self) -> None:
        if self._world is not None:
            self._world.close()
