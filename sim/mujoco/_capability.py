"""Can this arm do that scenario? Reach, grasp and the controller's own plan of its reference.

``sim check`` proves an arm on a table of small boxes; a scenario asks for more (a 7 cm patty,
a mug with a handle, a drawer pulled along its slide). :func:`scenario_capability` walks a
scenario's error-free reference in the scenario's own physics scene with the given arm, without
running physics: the world is reset to the scenario's layout, and each step is planned the way
the controller plans it when the step starts (from where the last step left the arm, home at
first, gripper pointing down) and followed the way the controller tracks it
(:mod:`._capability_track`).

- **grasp**: every object (or handle) a step closes the jaws on, narrowest width across the
  jaws against the measured gripper: it must fit with the approach margin the controller keeps
  (``no grasp: patty 9.4 cm, jaws open 8.5 cm``) and be wider than the jaws' closed gap.
- **reach**: every pose of the step's plan (approach, grasp, lift; carry, lower, retreat; a
  handle's path) must have an IK solution. A step whose only problem is width is re-planned
  with wide-enough jaws, so reach answers for the arm and grasp for the jaws.
- **plan**: the controller's own planner must accept the step (clearance, joint limits) and
  the motion between the poses must be one it can follow.

Between steps the world follows the step's effect without physics: a placed object is moved to
the place target the physics world would choose, a drawer or knob is set to its goal (what is in
a drawer moves with it), a pushed object moves by the distance. The dry run of the reference in
both modes runs the engine, so it is ``sim.episode``'s (``capability_table``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from sim.mujoco._arm import ArmSpec
from sim.mujoco._capability_track import track
from sim.mujoco._ctl_plan import OPEN_MARGIN, PLACE_GAP, RETREAT, Plan
from sim.mujoco._ctl_route import SLOW, Route, Segment
from sim.mujoco._ctl_world import CLEAR, PlanError, Refs
from sim.mujoco._perceive import perceive
from sim.mujoco._skills import CLOSE_TO, OPEN_TO, _articulation, handle_path, place_target
from sim.mujoco._world import PhysicsWorld
from sim.scenario import BoundScenario
from sim.world import DIRECTION_VECTORS, SceneGraph, Verb, Verdict, apply, check

Vec = NDArray[np.float64]

SPARE = OPEN_MARGIN * 0.5  # what the controller keeps between an object and the open jaws
SQUEEZE = 0.002  # m: an object must be this much wider than the closed jaws to be held


@dataclass(frozen=True)
class Grasp:
    """One object (or handle) the reference closes the jaws on."""

    obj: str
    width: float  # m, the narrowest way across
    ok: bool
    why: str = ""


@dataclass(frozen=True)
class Step:
    """One command of the reference, planned from home."""

    index: int  # in the scenario's reference
    command: str
    poses: int  # poses its plan needs
    reached: int  # of them with an IK solution
    ok: bool  # the controller's planner accepts it
    why: str = ""


@dataclass(frozen=True)
class RunOutcome:
    """The reference run to its end in one mode, judged by the scenario's contract."""

    mode: str  # "symbolic" | "physics"
    status: str
    success: bool
    ticks: int
    why: str = ""  # the first rejection or failed action, when it did not succeed


@dataclass(frozen=True)
class Capability:
    scenario: str
    arm: str  # the arm's MJCF file name
    steps: tuple[Step, ...]
    grasps: tuple[Grasp, ...]
    runs: tuple[RunOutcome, ...] = ()

    @property
    def poses(self) -> int:
        return sum(s.poses for s in self.steps)

    @property
    def reached(self) -> int:
        return sum(s.reached for s in self.steps)

    @property
    def can(self) -> bool:
        """The prediction: every pose reached, every grasp fits, every step planned."""
        return all(s.ok for s in self.steps) and all(g.ok for g in self.grasps)

    @property
    def why(self) -> list[str]:
        """What stops the arm, each reason once, in reference order."""
        out = [g.why for g in self.grasps if not g.ok]
        out += [f"{s.command}: {s.why}" for s in self.steps if not s.ok and s.why]
        return list(dict.fromkeys(out))

    @property
    def physics(self) -> RunOutcome | None:
        return next((r for r in self.runs if r.mode == "physics"), None)

    @property
    def agrees(self) -> bool | None:
        """Whether the physics run came out as predicted (None: not run)."""
        run = self.physics
        return None if run is None else run.success == self.can

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "arm": self.arm,
            "can": self.can,
            "why": self.why,
            "reach": {"poses": self.poses, "reached": self.reached},
            "grasps": [dataclasses.asdict(g) | {"width": round(g.width, 4)} for g in self.grasps],
            "steps": [dataclasses.asdict(s) for s in self.steps],
            "runs": [dataclasses.asdict(r) for r in self.runs],
            "agrees": self.agrees,
        }


def cm(v: float) -> str:
    return f"{v * 100:.1f} cm"


class _Walk:
    """The scenario's physics world, moved from step to step by effects instead of physics."""

    def __init__(self, spec: ArmSpec, bound: BoundScenario) -> None:
        sc = bound.scenario
        self.world = PhysicsWorld(sc.family, bound.layout, arm=spec, delta=sc.delta)
        self.graph: SceneGraph = self.world.reset(sc.seed)  # the rules' view, effects applied
        self.scene, self.data = self.world.scene, self.world.data
        self.w = self.world.controller.world
        self.planner = self.world.controller.planner
        self.w.update(self.data)
        self.refs: Refs = self.w.refs_from(self.data, self.w.home, 0.0)  # the arm starts home
        self.grasps: list[Grasp] = []
        # what the last pick holds: body, its bottom centre from the tcp, jaw yaw, lift point
        self.held: tuple[int, Vec, float, Vec] | None = None
        self.picked_from: dict[str, tuple[float, float]] = {}

    # -- what the rules and the sensed world say -----------------------------------------

    def perceived(self) -> SceneGraph:
        s = self.world.s
        return perceive(
            self.world.model, self.data, self.scene, 0, s.extra, absent=frozenset(s.parked)
        )

    def body(self, obj: str) -> int:
        return int(self.scene.body[self.scene.index(obj)])

    def grasp(self, label: str, body: int) -> Grasp:
        g = self.w.gripper
        width = min(w for _, w in self.w.options(body))
        if width + SPARE > g.gap_open + 1e-9:
            why = f"no grasp: {label} {cm(width)}, jaws open {cm(g.gap_open)}"
            if width <= g.gap_open:
                why += f" (the approach needs {cm(SPARE)} to spare)"
            return Grasp(label, width, False, why)
        if width <= g.gap_closed + SQUEEZE:
            return Grasp(label, width, False, f"no grip: {label} {cm(width)}, jaws close to "
                         f"{cm(g.gap_closed)}")  # fmt: skip
        return Grasp(label, width, True)

    # -- planning ------------------------------------------------------------------------

    def reach(self, q: Vec, waypoints: list[tuple[str, Vec, float]]) -> tuple[int, str]:
        """(waypoints with an IK solution, the first one without), chained from ``q`` as the
        controller validates a plan."""
        reached, first = 0, ""
        for phase, pos, yaw in waypoints:
            q_new, ok = self.w.solve(self.data, q, pos, yaw)
            if ok:
                reached, q = reached + 1, q_new
            elif not first:
                first = f"unreachable ({phase} at {' '.join(f'{v:.3f}' for v in pos)})"
        return reached, first

    def plan(self, make: Callable[[Refs], Plan], fits: bool) -> tuple[list[Segment], int, int, str]:
        """Plan the step as the controller would, from where the last step left the arm (home
        at first), and follow the plan as it would: (segments, poses, reached, why not).

        When the jaws are all that stop it (``fits`` false, a "too wide" refusal) it is planned
        again with wide-enough jaws, to count the reach; ``why`` is then empty, the grasp says.
        """
        self.w.update(self.data)
        try:
            return self.follow(make(self.refs)[0])
        except PlanError as exc:
            why = str(exc)
        if fits or "too wide" not in why:
            return [], 1, 0, why
        real = self.w.gripper
        self.w.gripper = dataclasses.replace(real, gap_open=real.gap_open + 0.2)
        try:
            return self.follow(make(self.refs)[0])
        except PlanError as exc:
            return [], 1, 0, str(exc)
        finally:
            self.w.gripper = real

    def follow(self, segments: list[Segment]) -> tuple[list[Segment], int, int, str]:
        """Track a planned skill; a skill that can be followed leaves the arm at its end."""
        why, end = track(self.w, self.data, self.refs, segments)
        if not why:
            self.refs = end
        n = _poses(segments)
        return segments, n, n, why

    # -- effects -------------------------------------------------------------------------

    def shift(self, obj: str, move: Vec) -> None:
        """Move a loose object by ``move`` (fixed furniture stays)."""
        q = int(self.scene.free_qadr[self.scene.index(obj)])
        if q >= 0:
            self.data.qpos[q : q + 3] += move

    def settle_view(self) -> None:
        mujoco.mj_forward(self.world.model, self.data)
        self.w.update(self.data)


def _poses(segments: list[Segment]) -> int:
    return sum(len(s["pts"]) if s["kind"] == "path" else 1 for s in segments if s["kind"] != "hold")


def _descend_pose(segments: list[Segment]) -> tuple[Vec, float]:
    """Where the plan closes the jaws: the last move before the first grasp hold."""
    pos, yaw = None, 0.0
    for s in segments:
        if s["phase"] == "grasp":
            break
        if s["kind"] == "cart":
            pos, yaw = np.array(s["pos"]), float(s["yaw"])
    assert pos is not None
    return pos, yaw


def scenario_capability(spec: ArmSpec, bound: BoundScenario) -> Capability:
    """Walk ``bound``'s reference with arm ``spec``; see the module docstring."""
    walk = _Walk(spec, bound)
    steps: list[Step] = []
    try:
        for index, ref in enumerate(bound.reference):
            if ref.action is None:  # a wait: nothing for the arm to do
                continue
            verdict = check(walk.graph, ref.action)
            command = ref.action.describe()
            if not verdict.accepted:
                steps.append(Step(index, command, 0, 0, False, f"refused: {verdict.reason}"))
                continue
            steps.append(_step(walk, index, command, verdict))
            walk.graph = apply(walk.graph, verdict)
    finally:
        walk.world.close()
    grasps = tuple({g.obj: g for g in walk.grasps}.values())  # each object once
    return Capability(bound.name, spec.mjcf.name, tuple(steps), grasps)


def _step(walk: _Walk, index: int, command: str, verdict: Verdict) -> Step:
    a, g = verdict.action, verdict.grounded
    assert g is not None and g.obj is not None
    obj = g.obj
    data, scene = walk.data, walk.scene
    body = walk.body(obj)
    walk.w.update(data)
    if a.verb is Verb.PICK:
        grasp = walk.grasp(obj, body)
        walk.grasps.append(grasp)
        node = walk.perceived().nodes[obj]
        walk.picked_from[obj] = (node.pos[0], node.pos[1])
        segs, n, reached, why = walk.plan(lambda r: walk.planner.pick(data, r, body), grasp.ok)
        if segs:
            tcp, yaw = _descend_pose(segs)
            lift = np.array(segs[-1]["pos"])
            walk.held = (body, walk.w.bottom_centre(body) - tcp, yaw, lift)
        return Step(index, command, n, reached, grasp.ok and not why, why)
    if a.verb is Verb.PLACE:
        assert g.target is not None
        return _place(walk, index, command, obj, g.target, a.relation, body)
    if a.verb is Verb.PUSH:
        dx, dy = DIRECTION_VECTORS[a.direction or "forward"]
        u = np.array([dx, dy])
        segs, n, reached, why = walk.plan(
            lambda r: walk.planner.push(data, r, body, u, a.distance), True
        )
        for o in [obj, *walk.graph.stack_on(obj)]:
            walk.shift(o, np.array([dx, dy, 0.0]) * a.distance)
        walk.settle_view()
        return Step(index, command, n, reached, not why, why)
    art = _articulation(scene, obj)
    handle = scene.handles.get(obj, int(scene.model.jnt_bodyid[art.joint]))
    grasp = walk.grasp(f"{obj} handle", handle)
    walk.grasps.append(grasp)
    if a.verb in (Verb.TURN_ON, Verb.TURN_OFF):
        goal = art.value(1.0 if a.verb is Verb.TURN_ON else 0.0)
        angle = goal - float(data.qpos[art.qadr])
        segs, n, reached, why = walk.plan(
            lambda r: walk.planner.turn(data, r, handle, angle), grasp.ok
        )
    else:
        goal = art.value(OPEN_TO if a.verb is Verb.OPEN else CLOSE_TO)
        path = handle_path(scene, data, art, handle, goal)
        segs, n, reached, why = walk.plan(
            lambda r: walk.planner.follow(data, r, handle, path), grasp.ok
        )
    _set_joint(walk, obj, art.qadr, art.joint, goal)
    return Step(index, command, n, reached, grasp.ok and not why, why)


def _place(
    walk: _Walk, index: int, command: str, obj: str, target: str, relation: str | None, body: int
) -> Step:
    """Mirror of ``Planner.place`` for an object held as the pick planned it."""
    w, data, scene = walk.w, walk.data, walk.scene
    goal = place_target(data, scene, walk.perceived(), obj, target, relation, walk.picked_from)
    if walk.held is None or walk.held[0] != body:
        return Step(index, command, 1, 0, False, "its pick could not be planned")
    _, offset, yaw, lift = walk.held
    goal_tcp = goal - offset
    goal_tcp[2] += PLACE_GAP
    lo, hi = w.box(body)
    radius = 0.5 * float(np.hypot(hi[0] - lo[0], hi[1] - lo[1])) + 0.02
    hang = max(w.gripper.depth, -float(offset[2]))
    top = w.top(lift, goal_tcp, max(radius, w.hand_radius(0.0)), frozenset({body}))
    z_carry = max(top + CLEAR + hang, float(goal_tcp[2]) + 0.05)
    r = Route(lift, yaw, 1.0)
    if z_carry > lift[2] + 1e-3:
        r.move("carry", np.array([lift[0], lift[1], z_carry]))
    z_travel = max(z_carry, float(lift[2]))
    r.move("carry", np.array([goal_tcp[0], goal_tcp[1], z_travel]), yaw)
    r.move("lower", goal_tcp + np.array([0.0, 0.0, 0.025]))
    r.move("lower", goal_tcp, speed=SLOW * 0.6)
    r.move("retreat", goal_tcp + np.array([0.0, 0.0, RETREAT]))
    start = walk.refs  # the pick's end: at the lift, holding
    reached, why = walk.reach(start.q, r.waypoints)
    if not why:
        why, end = track(w, data, start, r.segments)
        if not why:
            walk.refs = end
    walk.shift(obj, goal - w.bottom_centre(body))
    walk.held = None
    walk.settle_view()
    return Step(index, command, len(r.waypoints), reached, not why, why)


def _set_joint(walk: _Walk, obj: str, qadr: int, joint: int, goal: float) -> None:
    """Set an articulation to ``goal``; what lies in a sliding drawer rides along."""
    model, data = walk.world.model, walk.data
    before = data.xpos[int(model.jnt_bodyid[joint])].copy()
    data.qpos[qadr] = goal
    mujoco.mj_kinematics(model, data)
    move = data.xpos[int(model.jnt_bodyid[joint])] - before
    if int(model.jnt_type[joint]) == mujoco.mjtJoint.mjJNT_SLIDE:
        for kind, a, b in walk.perceived().relations:
            if kind == "in" and b == obj and a in walk.scene.ids:
                walk.shift(a, move)
    walk.settle_view()
