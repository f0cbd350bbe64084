"""Turn a RolloutPlan into tracks: reach, grasp, carry, place, release, withdraw; inject defects."""

from __future__ import annotations

import math

import numpy as np

from sim.synthetic._compose import in_wall
from sim.synthetic._model import (
    BOX_FLOOR,
    BOX_WALL,
    DefectKind,
    DefectWindow,
    RolloutPlan,
    SceneObject,
    Subgoal,
)
from sim.synthetic._objects import Placed
from sim.synthetic._timeline import HandKey, Hold, Motion, Rest, Timeline, Tracks, Vec3

# Seconds per phase of one placement, before the per-rollout pace is applied.
_PHASES = {
    "reach": 0.56,
    "descend": 0.20,
    "close": 0.18,
    "lift": 0.22,
    "carry": 0.68,
    "lower": 0.24,
    "open": 0.16,
    "rise": 0.16,
}
_OFFSCREEN: Vec3 = (0.95, -1.5, 0.3)
_TELEPORT_MARK = 0.2  # seconds marked around a one-frame jump
_MIN_DURATION = 6.25  # seconds; every video lasts at least this long


class _Builder:
    def __init__(self, plan: RolloutPlan, seed: int) -> None:
        self.plan = plan
        self.scene = plan.scene
        self.rng = np.random.default_rng([seed, 7013])
        human = plan.style == "human"
        self.pace = (1.12 if human else 1.0) * float(self.rng.uniform(0.94, 1.06))
        self.tr = Tracks(scene=plan.scene, jitter=0.010 if human else 0.005)
        self.tr.jitter_waves = tuple(
            (
                float(axis),
                float(self.rng.uniform(0.5, 2.4)),
                float(self.rng.uniform(0, 2 * math.pi)),
            )
            for axis in (0, 0, 0, 1, 1, 1, 2, 2)
        )
        self.rest: dict[str, Vec3] = {}
        for o in self.scene.objects:
            self.rest[o.name] = (o.x, o.y, 0.0)
            self.tr.rests[o.name] = [Rest(0.0, (o.x, o.y, 0.0))]
        self.t = 0.0
        self.hand: Vec3 = _OFFSCREEN
        self.windows: list[DefectWindow] = []
        self.completed = 0
        self.slots: dict[str, int] = {}

    # -- helpers ---------------------------------------------------------------------------

    def dur(self, phase: str) -> float:
        return _PHASES[phase] * self.pace * float(self.rng.uniform(0.94, 1.06))

    def key(self, dt: float, pos: Vec3, grip: float, arc: float = 0.0) -> float:
        self.t += dt
        self.tr.keys.append(HandKey(self.t, pos, grip, arc))
        self.hand = pos
        return self.t

    def _obj(self, name: str) -> SceneObject:
        return self.scene.object(name)

    def _top(self, name: str) -> float:
        return self.rest[name][2] + self._obj(name).height

    def _clearance(self, a: Vec3, b: Vec3, skip: str) -> float:
        """Height the carried object's bottom must clear on the straight path from a to b."""
        top = 0.16
        ax, ay, bx, by = a[0], a[1], b[0], b[1]
        for o in self.scene.objects:
            if o.name == skip:
                continue
            px, py, _ = self.rest[o.name]
            vx, vy = bx - ax, by - ay
            u = ((px - ax) * vx + (py - ay) * vy) / max(vx * vx + vy * vy, 1e-9)
            u = min(max(u, 0.0), 1.0)
            dist = math.hypot(ax + u * vx - px, ay + u * vy - py)
            if dist < o.radius + 0.25:
                top = max(top, self._top(o.name) + 0.10)
        return top

    def _noise(self, k: float) -> float:
        return float(self.rng.uniform(-k, k))

    def destination(self, i: int, sg: Subgoal, src: SceneObject) -> Vec3:
        tgt = self._obj(sg.target)
        tx, ty, tz = self.rest[sg.target]
        same = [j for j, s in enumerate(self.plan.subgoals) if s.target == sg.target]
        n = len(same)
        k = self.slots.get(sg.target, 0)
        self.slots[sg.target] = k + 1
        if sg.relation == "in":
            room_x = max(0.0, tgt.half_w - BOX_WALL - src.half_w - 0.02)
            room_y = max(0.0, tgt.half_d - BOX_WALL - src.half_d - 0.02)
            spots = [(0.0, 0.0)] if n == 1 else [(-0.8, 0.4), (0.8, -0.4), (0.0, 0.0)]
            sx, sy = spots[k % len(spots)]
            return (tx + sx * room_x, ty + sy * room_y, tz + BOX_FLOOR)
        z = tz + tgt.height
        if tgt.flat:
            room_x = max(0.0, tgt.half_w - src.half_w) * 0.92
            room_y = max(0.0, tgt.half_d - src.half_d) * 0.92
            spots = [(0.0, 0.0)] if n == 1 else [(-0.8, 0.3), (0.8, -0.3), (0.0, 0.8)]
            sx, sy = spots[k % len(spots)]
            return (tx + sx * room_x + self._noise(0.015), ty + sy * room_y + self._noise(0.015), z)
        return (tx + self._noise(0.015), ty + self._noise(0.01), z)

    def beside(self, sg: Subgoal, src: SceneObject) -> Vec3:
        """A spot on the table next to (not on) the target, with the most free room."""
        tgt = self._obj(sg.target)
        tx, ty, _ = self.rest[sg.target]
        gap = 0.12
        cands = [
            (tx - tgt.half_w - src.half_w - gap, ty),
            (tx + tgt.half_w + src.half_w + gap, ty),
            (tx, ty - tgt.half_d - src.half_d - gap),
        ]
        best, best_room = cands[0], -1.0
        for cx, cy in cands:
            if not (-1.35 < cx < 1.35 and 0.55 < cy < 2.45):
                continue
            room = min(
                (
                    math.hypot(cx - p[0], cy - p[1]) - self._obj(n).radius
                    for n, p in self.rest.items()
                    if n not in (src.name, sg.target)
                ),
                default=9.0,
            )
            if room > best_room:
                best, best_room = (cx, cy), room
        return (best[0], best[1], 0.0)

    def mark(self, kind: DefectKind, i: int, t0: float, t1: float) -> None:
        self.windows.append(DefectWindow(kind, i, t0, t1))

    # -- script ----------------------------------------------------------------------------

    def placement(self, i: int, sg: Subgoal) -> None:
        defect = self.plan.defect_at(i)
        src = self._obj(sg.source)
        start = self.rest[sg.source]
        dst = self.beside(sg, src) if defect == "wrong_target" else self.destination(i, sg, src)
        first = not self.tr.keys or self.hand == _OFFSCREEN
        grasp: Vec3 = start
        t_reach = self.dur("reach") * (1.5 if first else 1.0)
        t_descend = self.dur("descend")
        if defect == "float_off":
            # The hand pulls back toward the viewer and waits; meanwhile the object lifts off
            # by itself and drifts toward it. Only then does the hand reach in: no contact.
            away = (start[0] + 0.55, start[1] - 1.15, 0.40)
            t_away = self.key(0.5 * self.pace if not first else t_reach, away, 0.0, arc=0.05)
            hx, hy = away[0] - start[0], away[1] - start[1]
            norm = max(math.hypot(hx, hy), 1e-6)
            grasp = (start[0] + 0.06 * hx / norm, start[1] + 0.06 * hy / norm, start[2] + 0.18)
            t_float = t_away - 0.2 * self.pace
            t_rest = t_away + 0.6 * self.pace
            self.key(0.75 * self.pace, away, 0.0)
            t_reach = self.dur("reach")
            t_contact = self.t + t_reach + t_descend
            self.tr.motions[sg.source] = [Motion(t_float, t_rest, math.inf, start, grasp)]
            self.mark("float_off", i, t_float, t_contact)
        hz = grasp[2] + src.height
        # Pre-grasp a little short of the object, so the open fingers do not hide it.
        pre = (grasp[0], grasp[1] - 0.30, hz + 0.04)
        self.key(t_reach, pre, 0.0, arc=0.10)
        self.key(t_descend, (grasp[0], grasp[1], hz), 0.4)
        t_hold = self.key(self.dur("close"), (grasp[0], grasp[1], hz), 1.0)
        if defect == "float_off":
            m = self.tr.motions[sg.source][0]
            self.tr.motions[sg.source] = [Motion(m.t0, m.t_arrive, t_hold, m.a, m.b)]

        if defect == "pass_through":
            lift_z = hz  # slides along the table, straight into the wall
            carry_z = hz
        else:
            # Lift straight up to the carrying height first, so nothing clips on the way.
            carry_z = max(hz + 0.12, self._clearance(start, dst, sg.source) + src.height)
            lift_z = carry_z
        t_lift = self.dur("lift") * (1.0 + 1.2 * max(0.0, lift_z - hz - 0.12))
        t_lifted = self.key(t_lift, (grasp[0], grasp[1] - 0.02, lift_z), 1.0)
        t_carry = self.dur("carry") * {"pass_through": 2.0, "vanish": 1.3}.get(str(defect), 1.0)
        place_z = dst[2] + (0.24 if defect == "hover" else 0.0)
        above = (dst[0], dst[1], carry_z if defect != "pass_through" else dst[2] + src.height)
        t_above = self.key(t_carry, above, 1.0, arc=0.0 if defect == "pass_through" else 0.05)
        t_down = self.key(self.dur("lower"), (dst[0], dst[1], place_z + src.height), 1.0)
        release = t_down
        final: Vec3 = (dst[0], dst[1], place_z)

        if defect == "teleport":
            t_jump = t_lifted + 0.4 * (t_above - t_lifted)
            release = t_jump
            self.mark("teleport", i, t_jump, t_jump + _TELEPORT_MARK)
        self.tr.holds.setdefault(sg.source, []).append(Hold(t_hold, release, grasp))
        if defect == "hover":
            drift = (0.07 * (1.0 if dst[0] < 0.6 else -1.0), 0.03, 0.0)
            self.tr.motions.setdefault(sg.source, []).append(
                Motion(release, release, math.inf, final, final, drift, bob=0.025)
            )
            self.mark("hover", i, release, math.inf)
        else:
            self.tr.rests[sg.source].append(Rest(release, final))
        if defect == "duplicate":
            t_dup = t_hold + 0.5 * (t_lifted - t_hold)
            self.tr.copies.append((t_dup, src, start))
            self.mark("duplicate", i, t_dup, math.inf)
        if defect == "vanish":
            t0 = t_lifted + 0.12 * self.pace
            t1 = min(t0 + 0.8 * self.pace, t_down - 0.05)
            self.tr.hidden.setdefault(sg.source, []).append((t0, t1))
            self.mark("vanish", i, t0, t1)
        if defect == "wrong_target":
            self.mark("wrong_target", i, t_down, math.inf)
        else:
            self.completed += 1
        self.rest[sg.source] = final

        # Let go while pulling back toward the viewer, so the open fingers clear the object.
        top = place_z + src.height
        self.key(self.dur("open"), (dst[0], dst[1] - 0.32, top + 0.04), 0.0)
        self.key(self.dur("rise"), (dst[0] + 0.04, dst[1] - 0.50, top + 0.14), 0.0)

    def no_attempt(self) -> None:
        xs = [o.x for o in self.scene.objects]
        cx = 0.5 * float(np.mean(xs)) + self._noise(0.1)
        p1 = (cx, 0.45, 0.55)
        self.key(self.dur("reach") * 1.6, p1, 0.1, arc=0.1)
        self.key(1.0 * self.pace, (cx + 0.28, 0.55, 0.60), 0.0)
        self.key(0.5 * self.pace, (cx + 0.28, 0.55, 0.60), 0.05)
        self.key(1.0 * self.pace, (cx - 0.18, 0.50, 0.52), 0.15)
        self.key(0.6 * self.pace, (cx - 0.18, 0.50, 0.52), 0.1)
        self.key(0.9 * self.pace, (cx + 0.10, 0.40, 0.58), 0.0)
        self.mark("no_attempt", 0, 0.0, math.inf)

    def build(self) -> tuple[Tracks, list[DefectWindow], int]:
        plan = self.plan
        self.tr.keys.append(HandKey(0.0, _OFFSCREEN, 0.0))
        self.tr.hand_from = self.key(0.35 * self.pace, _OFFSCREEN, 0.0)
        if plan.has("no_attempt"):
            self.no_attempt()
        else:
            stop = len(plan.subgoals)
            for d in plan.defects:
                if d.kind == "unfinished":
                    stop = min(stop, d.subgoal)
            for i in range(stop):
                self.placement(i, plan.subgoals[i])
            if stop < len(plan.subgoals):
                # Stop short: the hand pauses over the near edge of the table, then leaves.
                self.mark("unfinished", stop, self.t, math.inf)
                pause = (self.hand[0] * 0.5 + 0.3, 0.35, 0.5)
                self.key(0.6 * self.pace, pause, 0.1, arc=0.03)
                self.key(0.5 * self.pace, pause, 0.15)
        self.key(0.85 * self.pace, _OFFSCREEN, 0.0, arc=0.08)
        # A still tail after the hand has left; short rollouts hold the end state longer.
        self.tr.duration = max(self.t + 0.4 * self.pace, _MIN_DURATION)
        return self.tr, self.windows, self.completed


def build_timeline(plan: RolloutPlan, seed: int) -> tuple[Timeline, list[DefectWindow], int]:
    """The timeline of a plan, its defect windows (open ends are inf) and completed subgoals."""
    tracks, windows, completed = _Builder(plan, seed).build()
    return Timeline(tracks), windows, completed


def wall_crossing(timeline: Timeline, name: str, times: list[float]) -> tuple[float, float] | None:
    """First and last sampled time at which object `name` is inside a box wall."""
    boxes = [o for o in timeline.tracks.scene.objects if o.kind == "box"]
    obj = timeline.tracks.scene.object(name)
    hits: list[float] = []
    for t in times:
        got = timeline.object_pose(name, t)
        if got is None or not got[1]:
            continue
        p = Placed(obj, *got[0])
        for b in boxes:
            got_b = timeline.object_pose(b.name, t)
            bx, by, bz = got_b[0] if got_b is not None else (b.x, b.y, 0.0)
            if in_wall(p, Placed(b, bx, by, bz)):
                hits.append(t)
    if not hits:
        return None
    return hits[0], hits[-1]
