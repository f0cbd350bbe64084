"""From an accepted semantic action to an arm skill, and from the finished skill to an outcome.

The rules (:func:`sim.world.check`) have already decided the action is possible; here we decide
*how*: where on the table a carried object goes (the nearest free spot to where it was picked
up), where on a surface or in a container, and which path pulls a drawer or swings a lid. After
the controller reports ``ok`` the new scene graph must show the intended effect too, or the
outcome is a failure that says what is missing: a controller that believes it succeeded is not
evidence that the world changed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import mujoco  # type: ignore[import-untyped]
import numpy as np
from numpy.typing import NDArray

from sim.mujoco._controller import Controller
from sim.mujoco._ctl_plan import handle_grasp
from sim.mujoco._ctl_scene import body_box
from sim.mujoco._index import Articulation, SceneIndex
from sim.mujoco._placing import interior_centre, interior_half_xy, interior_top, support_top
from sim.world import DIRECTION_VECTORS, OPEN_AT, SceneGraph, Verb, Verdict

Vec = NDArray[np.float64]

SPOT_STEP = 0.02  # m between candidate spots of the free-spot search
SPOT_GAP = 0.015  # m kept between a put-down object and its neighbours
OPEN_TO = 0.97  # fraction a drawer or lid is pulled to (the joint's end stop is at 1.0)
CLOSE_TO = 0.01
PATH_STEP = 0.03  # m between follow waypoints along a slide
ARC_STEP = 0.15  # rad between follow waypoints along a hinge arc
IN_CLEARANCE = 0.008  # m above a container's floor where a carried object is let go


def start_skill(
    ctl: Controller,
    data: mujoco.MjData,
    scene: SceneIndex,
    graph: SceneGraph,
    verdict: Verdict,
    picked_from: Mapping[str, tuple[float, float]],
) -> str:
    """Start the controller skill for ``verdict``; returns the skill's name ("" for wait)."""
    assert verdict.grounded is not None
    a = verdict.action
    obj, target = verdict.grounded.obj, verdict.grounded.target
    if a.verb is Verb.WAIT or obj is None:
        return ""
    body = int(scene.body[scene.index(obj)])
    if a.verb is Verb.PICK:
        ctl.pick(data, body)
        return "pick"
    if a.verb is Verb.PLACE:
        assert target is not None
        ctl.place(data, place_target(data, scene, graph, obj, target, a.relation, picked_from))
        return "place"
    if a.verb is Verb.PUSH:
        dx, dy = DIRECTION_VECTORS[a.direction or "forward"]
        ctl.push(data, body, np.array([dx, dy]), a.distance)
        return "push"
    art = _articulation(scene, obj)
    handle = scene.handles.get(obj, int(scene.model.jnt_bodyid[art.joint]))
    if a.verb in (Verb.TURN_ON, Verb.TURN_OFF):
        goal = art.value(1.0 if a.verb is Verb.TURN_ON else 0.0)
        ctl.turn(data, handle, goal - float(data.qpos[art.qadr]))
        return "turn"
    goal = art.value(OPEN_TO if a.verb is Verb.OPEN else CLOSE_TO)
    ctl.follow(data, handle, handle_path(scene, data, art, handle, goal))
    return "follow"


def place_target(
    data: mujoco.MjData,
    scene: SceneIndex,
    graph: SceneGraph,
    obj: str,
    target: str,
    relation: str | None,
    picked_from: Mapping[str, tuple[float, float]],
) -> Vec:
    """Where the carried object's bottom centre should end up."""
    held = graph.nodes[obj]
    foot = (max(held.size[0], held.size[1]),) * 2
    if relation == "in":  # the free spot nearest the interior's centre, just above its floor
        c = interior_centre(scene, data, target)
        hx, hy = interior_half_xy(scene, data, target)
        inner = (c[0] - hx + foot[0], c[0] + hx - foot[0], c[1] - hy + foot[1], c[1] + hy - foot[1])
        x, y = free_spot(graph, (c[0], c[1]), inner, foot, {obj, target, *_beneath(graph, target)})
        ceiling = interior_top(scene, data, target)
        return np.array(
            [x, y, support_top(scene, data, target, (x, y), foot, ceiling) + IN_CLEARANCE]
        )
    t = graph.nodes[target]
    if target == scene.info.table:
        xmin, xmax, ymin, ymax = graph.workspace
        region = (xmin + foot[0], xmax - foot[0], ymin + foot[1], ymax - foot[1])
        around = picked_from.get(obj, (held.pos[0], held.pos[1]))
    elif "surface" in t.tags:
        region = (
            t.pos[0] - t.size[0] + foot[0],
            t.pos[0] + t.size[0] - foot[0],
            t.pos[1] - t.size[1] + foot[1],
            t.pos[1] + t.size[1] - foot[1],
        )
        around = (t.pos[0], t.pos[1])
    else:  # a graspable object: stack on its centre
        region, around = (t.pos[0], t.pos[0], t.pos[1], t.pos[1]), (t.pos[0], t.pos[1])
    x, y = free_spot(graph, around, region, foot, {obj, target, *_beneath(graph, target)})
    return np.array([x, y, support_top(scene, data, target, (x, y), foot)])


def free_spot(
    graph: SceneGraph,
    around: tuple[float, float],
    region: tuple[float, float, float, float],
    foot: tuple[float, float],
    ignore: set[str],
) -> tuple[float, float]:
    """The nearest point to ``around`` in ``region`` where a footprint touches nothing.

    Candidates lie on rings 2 cm apart, in a fixed order, so the answer is deterministic. If
    nothing is free (or the region is a single point) the clamped ``around`` is returned.
    """
    xmin, xmax, ymin, ymax = region
    cx = min(max(around[0], xmin), xmax)
    cy = min(max(around[1], ymin), ymax)
    others = [n for k, n in sorted(graph.nodes.items()) if k not in ignore]
    for ring in range(0, 25):
        r = ring * SPOT_STEP
        count = 1 if ring == 0 else max(6, round(2 * math.pi * r / SPOT_STEP))
        for k in range(count):
            x = cx + r * math.cos(2 * math.pi * k / count)
            y = cy + r * math.sin(2 * math.pi * k / count)
            if not (xmin - 1e-9 <= x <= xmax + 1e-9 and ymin - 1e-9 <= y <= ymax + 1e-9):
                continue
            if all(
                abs(x - n.pos[0]) >= n.size[0] + foot[0] + SPOT_GAP
                or abs(y - n.pos[1]) >= n.size[1] + foot[1] + SPOT_GAP
                for n in others
            ):
                return x, y
    return cx, cy


def handle_path(
    scene: SceneIndex, data: mujoco.MjData, art: Articulation, handle: int, goal: float
) -> list[Vec]:
    """Grasp-point waypoints that carry the joint from its value now to ``goal``.

    The grasp point is where the planner grasps a handle (:func:`handle_grasp`); the path moves
    it rigidly with the joint: a straight line along a slide, an arc about a hinge's axis
    through its anchor.
    """
    grasp = handle_grasp(*body_box(scene.model, data, handle))
    axis = data.xaxis[art.joint].copy()
    change = goal - float(data.qpos[art.qadr])
    if int(scene.model.jnt_type[art.joint]) == mujoco.mjtJoint.mjJNT_SLIDE:
        n = max(2, math.ceil(abs(change) / PATH_STEP))
        return [grasp + axis * change * k / n for k in range(1, n + 1)]
    anchor = data.xanchor[art.joint].copy()
    n = max(3, math.ceil(abs(change) / ARC_STEP))
    return [anchor + _rotate(grasp - anchor, axis, change * k / n) for k in range(1, n + 1)]


def effect_missing(graph: SceneGraph, verdict: Verdict) -> str | None:
    """What the finished action should have brought about but the graph does not show."""
    assert verdict.grounded is not None
    a = verdict.action
    obj, target = verdict.grounded.obj, verdict.grounded.target
    if obj is not None and obj not in graph.nodes:
        return f"{obj} is no longer there"
    if a.verb is Verb.PICK and not graph.holds("held", str(obj), "gripper"):
        return f"{obj} is not in the gripper"
    if a.verb is Verb.PLACE and target is not None:
        rel = a.relation or "on"
        if graph.held() == obj:
            return f"{obj} is still in the gripper"
        if not graph.holds(rel, str(obj), target):
            return f"{obj} did not end up {rel} {target}"
    if a.verb in (Verb.OPEN, Verb.CLOSE) and obj is not None:
        frac = float(graph.nodes[obj].attrs.get("open", 0.0))
        if (frac >= OPEN_AT) != (a.verb is Verb.OPEN):
            return f"{obj} is {'still closed' if a.verb is Verb.OPEN else 'still open'}"
    switched = a.verb in (Verb.TURN_ON, Verb.TURN_OFF) and obj is not None
    if switched and bool(graph.nodes[str(obj)].attrs.get("on")) != (a.verb is Verb.TURN_ON):
        return f"{obj} is still {'off' if a.verb is Verb.TURN_ON else 'on'}"
    return None


def _beneath(graph: SceneGraph, obj: str) -> set[str]:
    """What ``obj`` rests on or in, all the way down (their footprints are not obstacles)."""
    out: set[str] = set()
    todo = [obj]
    while todo:
        k = todo.pop()
        for kind, a, b in graph.relations:
            if kind in ("on", "in") and a == k and b not in out:
                out.add(b)
                todo.append(b)
    return out


def _articulation(scene: SceneIndex, obj: str) -> Articulation:
    i = scene.index(obj)
    for art in scene.articulations:
        if art.obj == i:
            return art
    raise ValueError(f"{obj} has no joint to open, close or turn")


def _rotate(v: Vec, axis: Vec, angle: float) -> Vec:
    """Rodrigues: ``v`` rotated by ``angle`` about the unit ``axis``."""
    c, s = math.cos(angle), math.sin(angle)
    out: Vec = v * c + np.cross(axis, v) * s + axis * float(axis @ v) * (1 - c)
    return out
