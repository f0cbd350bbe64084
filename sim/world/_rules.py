"""Action rules shared by both world modes: grounding, preconditions, symbolic effects, heat.

``check(graph, action)`` is the whole executor decision: it grounds the references and lists
every failed precondition. Physics and symbolic worlds call the same function, so an action is
accepted or rejected identically in both; they differ only in how an accepted action is carried
out (the arm controller over many physics steps, or :func:`apply` on the graph).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from sim.world._actions import DIRECTIONS, Action, Check, Grounded, Verb, Verdict
from sim.world._graph import GRIPPER, Node, Relation, SceneGraph
from sim.world._grounder import ground

#: How long an accepted action takes in the symbolic mode, in seconds.
SYMBOLIC_SECONDS: Mapping[Verb, float] = {
    Verb.PICK: 3.0,
    Verb.PLACE: 3.0,
    Verb.OPEN: 4.0,
    Verb.CLOSE: 4.0,
    Verb.TURN_ON: 2.0,
    Verb.TURN_OFF: 2.0,
    Verb.PUSH: 3.0,
}

OPEN_AT = 0.5  # open fraction from which "open" holds
COOK_SECONDS = 20.0  # seconds on a hot pan from raw (0) to cooked (1)
MAX_WAIT_TICKS = 3000
DIRECTION_VECTORS: Mapping[str, tuple[float, float]] = {
    "left": (0.0, 1.0),
    "right": (0.0, -1.0),
    "forward": (1.0, 0.0),
    "back": (-1.0, 0.0),
}


def check(graph: SceneGraph, action: Action) -> Verdict:
    """Ground ``action`` and test its preconditions against ``graph``; nothing is changed."""
    problems: list[Check] = []
    obj = target = None
    if action.verb is not Verb.WAIT:
        if not action.obj:
            return Verdict(action, False, None, (Check("missing_object", "which object?"),))
        res = ground(action.obj, graph)
        obj, problem = res.id, res.problem
        if problem:
            problems.append(problem)
    if action.verb is Verb.PLACE:
        if not action.target:
            problems.append(Check("missing_target", "place it where?"))
        else:
            res = ground(action.target, graph)
            target = res.id
            if res.problem:
                problems.append(res.problem)
    grounded = Grounded(action, obj, target)
    if problems:
        return Verdict(action, False, grounded, tuple(problems))
    failed = tuple(_preconditions(graph, action, obj, target))
    return Verdict(action, not failed, grounded, failed)


def _preconditions(g: SceneGraph, a: Action, obj: str | None, target: str | None) -> list[Check]:
    out: list[Check] = []
    held = g.held()
    n = g.nodes[obj] if obj else None

    def need(ok: bool, name: str, message: str) -> None:
        if not ok:
            out.append(Check(name, message))

    if a.verb is Verb.WAIT:
        need(1 <= a.ticks <= MAX_WAIT_TICKS, "wait_range", f"wait 1–{MAX_WAIT_TICKS} ticks")
        return out
    assert n is not None and obj is not None
    if a.verb is Verb.PICK:
        need(n.has("graspable"), "graspable", f"{obj} cannot be picked up")
        need(held != obj, "not_held", f"{obj} is already in the gripper")
        need(held is None or held == obj, "hand_empty", f"the gripper is holding {held}")
        need(not _shut_in(g, obj), "accessible", f"{obj} is inside something closed")
        above = [x for x in g.on_top_of(obj) if x != GRIPPER]
        need(not above, "clear", f"{', '.join(above)} is on top of {obj}")
        need(g.reachable(obj), "reachable", f"{obj} is out of the arm's reach")
    elif a.verb is Verb.PLACE:
        assert target is not None
        t = g.nodes[target]
        rel = a.relation or "on"
        need(held == obj, "holding", f"the gripper is not holding {obj}")
        need(target != obj, "not_self", f"cannot place {obj} {rel} itself")
        if rel == "in":
            need(t.has("container"), "container", f"{target} is not something to put things in")
            if t.has("openable"):
                need(g.is_open(target), "target_open", f"{target} is closed")
        else:
            need(
                t.has("surface") or t.has("graspable"),
                "surface",
                f"{target} is not something to put things on",
            )
            if not t.has("surface"):
                stacked = [x for x in g.on_top_of(target) if x != obj]
                need(not stacked, "target_clear", f"{', '.join(stacked)} is on {target}")
        need(target != held, "target_free", f"{target} is in the gripper")
        need(g.reachable(target), "reachable", f"{target} is out of the arm's reach")
    elif a.verb in (Verb.OPEN, Verb.CLOSE):
        need(n.has("openable"), "openable", f"{obj} does not open or close")
        if n.has("openable"):
            if a.verb is Verb.OPEN:
                need(not g.is_open(obj), "closed", f"{obj} is already open")
            else:
                need(g.is_open(obj), "is_open", f"{obj} is already closed")
        need(held is None, "hand_empty", f"the gripper is holding {held}")
        need(g.reachable(obj), "reachable", f"{obj} is out of the arm's reach")
    elif a.verb in (Verb.TURN_ON, Verb.TURN_OFF):
        need(n.has("switchable"), "switchable", f"{obj} cannot be switched")
        if n.has("switchable"):
            on = bool(n.attrs.get("on", False))
            if a.verb is Verb.TURN_ON:
                need(not on, "is_off", f"{obj} is already on")
            else:
                need(on, "is_on", f"{obj} is already off")
        need(held is None, "hand_empty", f"the gripper is holding {held}")
        need(g.reachable(obj), "reachable", f"{obj} is out of the arm's reach")
    elif a.verb is Verb.PUSH:
        need(a.direction in DIRECTIONS, "direction", "push left, right, forward or back")
        need(not n.has("fixed"), "movable", f"{obj} is fixed in place")
        need(held is None, "hand_empty", f"the gripper is holding {held}")
        need(not _shut_in(g, obj), "accessible", f"{obj} is inside something closed")
        need(0.01 <= a.distance <= 0.3, "distance", "push between 1 and 30 cm")
        need(g.reachable(obj), "reachable", f"{obj} is out of the arm's reach")
        if a.direction is not None and a.direction in DIRECTION_VECTORS:
            dx, dy = DIRECTION_VECTORS[a.direction]
            x, y = n.pos[0] + dx * a.distance, n.pos[1] + dy * a.distance
            xmin, xmax, ymin, ymax = g.workspace
            need(
                xmin <= x <= xmax and ymin <= y <= ymax,
                "destination",
                f"pushing {obj} {a.direction} would take it out of reach",
            )
    return out


def _shut_in(g: SceneGraph, obj: str) -> bool:
    return any(
        g.nodes[c].has("openable") and not g.is_open(c) for c in g.inside(obj) if c in g.nodes
    )


def symbolic_ticks(verb: Verb, delta: float, ticks: int = 0) -> int:
    """Ticks an accepted action occupies in the symbolic mode."""
    if verb is Verb.WAIT:
        return max(1, ticks)
    return max(1, math.ceil(SYMBOLIC_SECONDS[verb] / delta - 1e-9))


def apply(g: SceneGraph, verdict: Verdict) -> SceneGraph:
    """The effects of an accepted action on the graph (symbolic mode)."""
    assert verdict.accepted and verdict.grounded is not None
    a = verdict.action
    obj, target = verdict.grounded.obj, verdict.grounded.target
    nodes = dict(g.nodes)
    rels = set(g.relations)
    if a.verb is Verb.PICK and obj:
        rels = {r for r in rels if not (r[0] in ("on", "in") and r[1] == obj)}
        rels.add(("held", obj, GRIPPER))
        n = nodes[obj]
        nodes[obj] = replace(n, pos=(n.pos[0], n.pos[1], n.pos[2] + 0.15))
    elif a.verb is Verb.PLACE and obj and target:
        rels.discard(("held", obj, GRIPPER))
        t = nodes[target]
        n = nodes[obj]
        if a.relation == "in":
            z = t.bottom + 0.01 + n.size[2]
            rels.add(("in", obj, target))
            rels |= {("in", obj, c) for c in g.inside(target)}
            xy = (t.pos[0], t.pos[1])
        else:
            z = t.top + n.size[2]
            rels.add(("on", obj, target))
            rels |= {("in", obj, c) for c in g.inside(target)}
            xy = (t.pos[0], t.pos[1])
            if t.type == "table" or max(t.size[0], t.size[1]) > 0.3:
                xy = free_spot(g, obj, target) or xy
        nodes[obj] = replace(n, pos=(xy[0], xy[1], z))
    elif a.verb in (Verb.OPEN, Verb.CLOSE) and obj:
        opened = a.verb is Verb.OPEN
        nodes[obj] = _with_attr(nodes[obj], "open", 1.0 if opened else 0.0)
        rels.discard(("open", obj, ""))
        if opened:
            rels.add(("open", obj, ""))
        for k, node in nodes.items():
            if obj in g.inside(k):
                nodes[k] = replace(node, visible=opened)
    elif a.verb in (Verb.TURN_ON, Verb.TURN_OFF) and obj:
        nodes[obj] = _with_attr(nodes[obj], "on", a.verb is Verb.TURN_ON)
    elif a.verb is Verb.PUSH and obj and a.direction:
        dx, dy = DIRECTION_VECTORS[a.direction]
        moving = [obj, *g.stack_on(obj)]
        for k in moving:
            p = nodes[k].pos
            nodes[k] = replace(nodes[k], pos=(p[0] + dx * a.distance, p[1] + dy * a.distance, p[2]))
        support = g.support(obj)
        if support and support in nodes and not _over(nodes[obj], nodes[support]):
            rels.discard(("on", obj, support))
            table = _table(nodes)
            if table:
                rels.add(("on", obj, table))
    return g.replace(nodes=nodes, relations=rels)


def free_spot(
    g: SceneGraph, obj: str, surface: str, *, gap: float = 0.03, step: float = 0.02
) -> tuple[float, float] | None:
    """The free place on ``surface`` nearest to where ``obj`` is now, within reach.

    Deterministic: a grid search ordered by distance, then x, then y. The symbolic mode's
    answer to "put it on the table" without saying where. The physics world has its own search
    (``sim/mujoco/_skills.py``: box footprints, from where the object was picked, always an
    answer), so the two modes may put the object in different free spots; relations agree.
    """
    n, s = g.nodes[obj], g.nodes[surface]
    radius = math.hypot(n.size[0], n.size[1])
    xmin, xmax, ymin, ymax = g.workspace
    xmin, xmax = max(xmin, s.pos[0] - s.size[0] + radius), min(xmax, s.pos[0] + s.size[0] - radius)
    ymin, ymax = max(ymin, s.pos[1] - s.size[1] + radius), min(ymax, s.pos[1] + s.size[1] - radius)
    others = [
        m
        for k, m in g.nodes.items()
        if k not in (obj, surface) and m.bottom < s.top + 0.5 and m.top > s.top - 0.01
    ]
    best: tuple[float, float, float] | None = None
    nx, ny = int((xmax - xmin) / step) + 1, int((ymax - ymin) / step) + 1
    for i in range(max(nx, 0)):
        x = xmin + i * step
        for j in range(max(ny, 0)):
            y = ymin + j * step
            d = math.hypot(x - n.pos[0], y - n.pos[1])
            if best is not None and d >= best[0]:
                continue
            if all(
                math.hypot(x - m.pos[0], y - m.pos[1])
                >= radius + math.hypot(m.size[0], m.size[1]) + gap
                for m in others
            ):
                best = (d, x, y)
    return None if best is None else (round(best[1], 4), round(best[2], 4))


def heat_step(g: SceneGraph, dt: float) -> dict[str, float]:
    """New ``cooked`` levels after ``dt`` seconds: food in/on a pan resting on a burner that is on.

    Returns only the objects whose level changed. Both modes integrate cooking with this.
    """
    nodes = g.nodes
    hot_pans: set[str] = set()
    for kind, pan, b in g.relations:  # a pan on a burner that is on
        if kind == "on" and pan in nodes and b in nodes and nodes[pan].type == "pan":
            burner = nodes[b]
            if burner.has("heater") and bool(burner.attrs.get("on")):
                hot_pans.add(pan)
    out: dict[str, float] = {}
    if not hot_pans:  # nothing can be heated: most ticks of most scenes
        return out
    held = g.held()
    for k, node in g.nodes.items():
        if not node.has("cookable") or held == k:
            continue
        heated = any((r in ("on", "in")) and b in hot_pans for r, a, b in g.relations if a == k)
        if heated:
            out[k] = float(node.attrs.get("cooked", 0.0)) + dt / COOK_SECONDS
    return out


def with_cooking(g: SceneGraph, dt: float) -> SceneGraph:
    return set_cooked(g, heat_step(g, dt))


def set_cooked(g: SceneGraph, levels: Mapping[str, float]) -> SceneGraph:
    """``g`` with these ``cooked`` levels (rounded to 1e-6, as both modes store them)."""
    if not levels:
        return g
    nodes = dict(g.nodes)
    for k, level in levels.items():
        nodes[k] = _with_attr(nodes[k], "cooked", round(level, 6))
    return g.replace(nodes=nodes)


def _with_attr(n: Node, key: str, value: float | bool | str) -> Node:
    attrs = dict(n.attrs)
    attrs[key] = value
    return replace(n, attrs=attrs)


def _over(n: Node, support: Node) -> bool:
    return (
        abs(n.pos[0] - support.pos[0]) <= support.size[0]
        and abs(n.pos[1] - support.pos[1]) <= support.size[1]
    )


def _table(nodes: Mapping[str, Node]) -> str | None:
    tables = sorted(k for k, n in nodes.items() if n.type == "table")
    return tables[0] if tables else None


__all__ = [
    "Relation",
    "apply",
    "check",
    "free_spot",
    "heat_step",
    "set_cooked",
    "symbolic_ticks",
    "with_cooking",
]
