"""Where an export's camera videos come from: frames kept with the demonstrations, or frames
rendered from their recorded MuJoCo states.

The teleop workspace records no camera (rendering every step under software GL would slow the
arm the person drives), but every step's MuJoCo integration state is kept, so any camera can be
drawn afterwards exactly as the world was: :class:`StateVideos` restores each step's state into
a world of the demonstration's scenario and arm (as ``sim.review.WorldCursor`` does to show a
demonstration: reset to its seed for the layout's parked objects and attributes, then the
step's physics state) and renders it. Frames are made one at a time, as the encoder takes them,
so a long demonstration never sits in memory as raw images.

Frames are drawn without shadows, as the teleop view draws them (shadows cost most of a frame
under software GL), at :data:`DEFAULT_SIZE`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import NDArray

from sim.mujoco import PhysicsWorld
from sim.teleop._demo import Demonstration
from sim.teleop._demo_io import DemoFileError

if TYPE_CHECKING:
    from storage import Project

#: the cameras an export renders unless told: the view the workspace opens on, and the wrist
DEFAULT_CAMERAS = ("front", "wrist")
DEFAULT_SIZE = (320, 240)  # width, height: the recorder's camera size
RENDER_OPTIONS: dict[str, Any] = {"shadows": False, "antialias": True}


class VideoSource(Protocol):
    """Camera frames of a set of demonstrations, by episode (its index in the set)."""

    @property
    def cameras(self) -> tuple[str, ...]: ...

    def shape(self, camera: str) -> tuple[int, int]:
        """(height, width) of ``camera``'s frames."""
        ...

    def frames(
        self, episode: int, camera: str, steps: NDArray[np.int64]
    ) -> Iterator[NDArray[np.uint8]]:
        """``camera``'s frame of each of ``steps`` of the episode, in order."""
        ...


class RecordedVideos:
    """The frames the demonstrations carry (``Demonstration.frames``): every camera of the
    first one (the set agrees on cameras; ``check_set`` makes sure)."""

    def __init__(self, demos: Sequence[Demonstration]) -> None:
        self.demos = list(demos)

    @property
    def cameras(self) -> tuple[str, ...]:
        return tuple(sorted(self.demos[0].frames)) if self.demos else ()

    def shape(self, camera: str) -> tuple[int, int]:
        h, w = self.demos[0].frames[camera].shape[1:3]
        return int(h), int(w)

    def frames(
        self, episode: int, camera: str, steps: NDArray[np.int64]
    ) -> Iterator[NDArray[np.uint8]]:
        frames = self.demos[episode].frames[camera]
        for i in steps:
            yield frames[int(i)]


class StateVideos:
    """``cameras`` rendered at ``size`` (width, height) from each demonstration's states, in a
    physics world of its scenario and arm (``project`` resolves arm profiles). Use as a context
    manager: it keeps one world per scenario and arm until closed (a GL context is costly)."""

    def __init__(
        self,
        demos: Sequence[Demonstration],
        cameras: Sequence[str] = DEFAULT_CAMERAS,
        size: tuple[int, int] = DEFAULT_SIZE,
        *,
        project: Project | None = None,
    ) -> None:
        w, h = int(size[0]), int(size[1])
        if w <= 0 or h <= 0 or w % 2 or h % 2:
            raise DemoFileError(f"video size {w}×{h}: width and height must be even and positive")
        self.demos, self.size, self.project = list(demos), (w, h), project
        self._cameras = tuple(dict.fromkeys(cameras))
        unknown = [c for c in self._cameras if c not in PhysicsWorld.cameras]
        if unknown:
            raise DemoFileError(
                f"no camera {', '.join(map(repr, unknown))} in a physics scene "
                f"(cameras: {', '.join(PhysicsWorld.cameras)})"
            )
        self._worlds: dict[tuple[str, str], Any] = {}
        for d in self.demos:
            if d.states.shape[1] == 0:
                raise DemoFileError(
                    f"{d.name}: no MuJoCo states recorded, so no camera can be rendered"
                )

    @property
    def cameras(self) -> tuple[str, ...]:
        return self._cameras

    def shape(self, camera: str) -> tuple[int, int]:
        return self.size[1], self.size[0]

    def frames(
        self, episode: int, camera: str, steps: NDArray[np.int64]
    ) -> Iterator[NDArray[np.uint8]]:
        demo = self.demos[episode]
        world, base = self._world(demo)
        if camera not in world.cameras:
            raise DemoFileError(
                f"{demo.name}: no camera {camera!r} (cameras: {', '.join(world.cameras)})"
            )
        for i in steps:
            snap = dict(base)
            snap["physics"] = np.ascontiguousarray(demo.states[int(i)], np.float64).tobytes().hex()
            snap["world"] = {**base["world"], "tick": int(i)}
            try:
                world.restore(snap)
            except ValueError as exc:  # another scene or arm: its state has another size
                raise DemoFileError(f"{demo.name}: step {int(i)}: {exc}") from exc
            image = world.render(camera, *self.size, **RENDER_OPTIONS)
            yield np.ascontiguousarray(image, dtype=np.uint8)

    def _world(self, demo: Demonstration) -> tuple[Any, dict[str, Any]]:
        """The world of ``demo``'s scenario and arm, reset to its seed; and that reset's
        snapshot, which each step's physics state is put into."""
        from sim.episode import make_world, open_scenario, resolve_arm

        source = str(demo.meta.get("source", demo.scenario))
        key = (source, demo.arm)
        world = self._worlds.get(key)
        bound = open_scenario(source)
        if world is None:
            arm = resolve_arm(demo.arm, self.project, where=demo.name)
            world = make_world(bound, "physics", arm=arm)
            self._worlds[key] = world
        world.reset(int(demo.meta.get("seed", bound.scenario.seed)))
        return world, world.snapshot()

    def close(self) -> None:
        for world in self._worlds.values():
            world.close()
        self._worlds.clear()

    def __enter__(self) -> StateVideos:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
