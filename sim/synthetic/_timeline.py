"""A rollout as tracks over time (hand keys, holds, rests, scripted motions) and their sampling."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from sim.synthetic._compose import FrameState
from sim.synthetic._hand import HandPose
from sim.synthetic._model import Scene, SceneObject
from sim.synthetic._objects import Placed

Vec3 = tuple[float, float, float]


@dataclass(frozen=True)
class HandKey:
    """The hand reaches this pose at time t, eased from the previous key; `arc` lifts the path."""

    t: float
    pos: Vec3
    grip: float
    arc: float = 0.0


@dataclass(frozen=True)
class Rest:
    """From time t on (until the next rest or hold), the object lies still at pos."""

    t: float
    pos: Vec3


@dataclass(frozen=True)
class Hold:
    """From t0 to t1 the object moves with the hand, keeping the offset it had at t0."""

    t0: float
    t1: float
    start: Vec3


@dataclass(frozen=True)
class Motion:
    """Scripted motion without a cause: eased from a to b over [t0, t_arrive], then still (until
    t1), plus a constant drift velocity and a bob after arrival (for hovering)."""

    t0: float
    t_arrive: float
    t1: float
    a: Vec3
    b: Vec3
    drift: Vec3 = (0.0, 0.0, 0.0)
    bob: float = 0.0


@dataclass
class Tracks:
    """Everything that happens to each object and to the hand."""

    scene: Scene
    keys: list[HandKey] = field(default_factory=list)
    rests: dict[str, list[Rest]] = field(default_factory=dict)
    holds: dict[str, list[Hold]] = field(default_factory=dict)
    motions: dict[str, list[Motion]] = field(default_factory=dict)
    hidden: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    copies: list[tuple[float, SceneObject, Vec3]] = field(default_factory=list)
    hand_from: float = 0.0  # the hand is drawn from this time on
    duration: float = 0.0
    jitter: float = 0.006
    jitter_waves: tuple[tuple[float, float, float], ...] = ()  # (axis, freq, phase)


def _smoother(u: float) -> float:
    u = min(max(u, 0.0), 1.0)
    return u * u * u * (u * (u * 6 - 15) + 10)


def _lerp3(a: Vec3, b: Vec3, e: float) -> Vec3:
    return (a[0] + (b[0] - a[0]) * e, a[1] + (b[1] - a[1]) * e, a[2] + (b[2] - a[2]) * e)


class Timeline:
    """Samples a `Tracks` at any time: hand pose, object poses, what is drawn where."""

    def __init__(self, tracks: Tracks) -> None:
        self.tracks = tracks
        self._key_times = np.array([k.t for k in tracks.keys], dtype=np.float64)

    @property
    def duration(self) -> float:
        return self.tracks.duration

    def _jitter(self, t: float) -> Vec3:
        out = [0.0, 0.0, 0.0]
        amp = self.tracks.jitter
        for axis, freq, phase in self.tracks.jitter_waves:
            out[int(axis)] += amp * 0.6 * math.sin(2 * math.pi * freq * t + phase)
        return (out[0], out[1], out[2] * 0.5)

    def hand_pos(self, t: float, jitter: bool = True) -> tuple[Vec3, float]:
        keys = self.tracks.keys
        i = int(np.searchsorted(self._key_times, t, side="right")) - 1
        if i < 0:
            pos, grip = keys[0].pos, keys[0].grip
        elif i >= len(keys) - 1:
            pos, grip = keys[-1].pos, keys[-1].grip
        else:
            k0, k1 = keys[i], keys[i + 1]
            span = k1.t - k0.t
            u = (t - k0.t) / span if span > 0 else 1.0
            e = _smoother(u)
            pos = _lerp3(k0.pos, k1.pos, e)
            pos = (pos[0], pos[1], pos[2] + k1.arc * math.sin(math.pi * min(max(u, 0.0), 1.0)))
            grip = k0.grip + (k1.grip - k0.grip) * _smoother(u)
        if jitter:
            j = self._jitter(t)
            pos = (pos[0] + j[0], pos[1] + j[1], pos[2] + j[2])
        return pos, grip

    def hand_at(self, t: float) -> HandPose:
        pos, grip = self.hand_pos(t)
        return HandPose(pos[0], pos[1], pos[2], grip, visible=t >= self.tracks.hand_from)

    def object_pose(self, name: str, t: float) -> tuple[Vec3, bool] | None:
        """(pose, moving) of an object at time t, or None while it is hidden."""
        tr = self.tracks
        for t0, t1 in tr.hidden.get(name, ()):
            if t0 <= t < t1:
                return None
        for m in tr.motions.get(name, ()):
            if m.t0 <= t < m.t1:
                e = _smoother((t - m.t0) / max(m.t_arrive - m.t0, 1e-6))
                p = _lerp3(m.a, m.b, e)
                after = max(0.0, t - m.t_arrive)
                p = (
                    p[0] + m.drift[0] * after,
                    p[1] + m.drift[1] * after,
                    p[2] + m.drift[2] * after + m.bob * math.sin(2 * math.pi * 0.5 * after),
                )
                return p, True
        for h in tr.holds.get(name, ()):
            if h.t0 <= t < h.t1:
                ref, _ = self.hand_pos(h.t0)
                now, _ = self.hand_pos(t)
                p = (
                    h.start[0] + now[0] - ref[0],
                    h.start[1] + now[1] - ref[1],
                    max(0.0, h.start[2] + now[2] - ref[2]),
                )
                return p, True
        pose: Vec3 | None = None
        for r in tr.rests.get(name, ()):
            if r.t <= t:
                pose = r.pos
        if pose is None:
            return None
        return pose, False

    def state_at(self, t: float) -> FrameState:
        resting: list[Placed] = []
        moving: list[Placed] = []
        for o in self.tracks.scene.objects:
            got = self.object_pose(o.name, t)
            if got is None:
                continue
            (x, y, z), is_moving = got
            (moving if is_moving else resting).append(Placed(o, x, y, z))
        for t0, obj, pos in self.tracks.copies:
            if t >= t0:
                resting.append(Placed(obj, *pos))
        return FrameState(tuple(resting), tuple(moving), self.hand_at(t))
