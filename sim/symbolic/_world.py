"""The symbolic fast mode: the same actions and rules applied to the graph, no physics.

It starts from the scenario's layout (the same seeded arrangement the physics world uses),
accepts and rejects with :func:`sim.world.check`, and applies effects with
:func:`sim.world.apply` when an accepted action's duration has elapsed. Cooking, drift and
anomalies follow the same rules as in physics. It renders nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import Any

import numpy as np

from sim.world import (
    OPEN_AT,
    Action,
    Anomaly,
    Check,
    Layout,
    Node,
    Outcome,
    Relation,
    SceneGraph,
    SceneInfo,
    TickReport,
    Verb,
    Verdict,
    apply,
    check,
    sample_layout,
    symbolic_ticks,
    with_cooking,
)

#: ``json.dumps(x, sort_keys=True)``, the snapshot's encoding, without an encoder per call
_SORTED_JSON = json.JSONEncoder(sort_keys=True).encode


class SymbolicWorld:
    """A :class:`sim.world.World` over the scene graph alone."""

    mode = "symbolic"
    cameras: tuple[str, ...] = ()

    def __init__(self, info: SceneInfo, layout: Layout, *, delta: float = 0.1) -> None:
        self.info = info
        self.layout = layout
        self.delta = delta
        self._graph = SceneGraph(0, {}, frozenset(), info.workspace)
        self._pending: tuple[Verdict, int, int] | None = None  # verdict, ticks left, started
        self._drifts: dict[str, tuple[float, float]] = {}
        self._verdict_json: tuple[Verdict, str] | None = None

    # -- World protocol ----------------------------------------------------------------------
    def reset(self, seed: int) -> SceneGraph:
        self._graph = initial_graph(self.info, self.layout, seed)
        self._pending = None
        self._drifts = {}
        return self._graph

    @property
    def graph(self) -> SceneGraph:
        return self._graph

    @property
    def tick_index(self) -> int:
        return self._graph.tick

    @property
    def busy(self) -> bool:
        return self._pending is not None

    def submit(self, action: Action) -> Verdict:
        if self._pending is not None:
            busy = Check("busy", f"still carrying out: {self._pending[0].action.describe()}")
            return Verdict(action, False, None, (busy,))
        verdict = check(self._graph, action)
        if verdict.accepted:
            ticks = symbolic_ticks(action.verb, self.delta, action.ticks)
            self._pending = (verdict, ticks, self._graph.tick)
        return verdict

    def tick(self) -> TickReport:
        g = self._graph
        finished: Outcome | None = None
        controller: dict[str, Any] = {"busy": False}
        if self._pending is not None:
            verdict, left, started = self._pending
            left -= 1
            controller = {"busy": True, "skill": verdict.action.verb.value, "ticks_left": left}
            if left <= 0:
                result = "ok"
                gone = _vanished(g, verdict)
                if gone:
                    result = f"failed: {gone} is no longer there"
                elif verdict.action.verb is not Verb.WAIT:
                    g = apply(g, verdict)
                self._pending = None
                finished = Outcome(verdict, result, started, g.tick + 1)
                controller = {"busy": False, "skill": verdict.action.verb.value}
            else:
                self._pending = (verdict, left, started)
        g = with_cooking(g, self.delta)
        g = self._drift(g)
        self._graph = g.replace(tick=g.tick + 1)
        return TickReport(self._graph.tick, controller, finished)

    def inject(self, anomaly: Anomaly) -> None:
        g = self._graph
        if anomaly.obj not in g.nodes:
            return
        nodes = dict(g.nodes)
        n = nodes[anomaly.obj]
        rels = set(g.relations)
        if anomaly.kind == "remove":
            del nodes[anomaly.obj]
            rels = {r for r in rels if anomaly.obj not in (r[1], r[2])}
        elif anomaly.kind == "displace":
            dx, dy, dz = anomaly.offset
            nodes[anomaly.obj] = replace(n, pos=(n.pos[0] + dx, n.pos[1] + dy, n.pos[2] + dz))
            rels = _resupport(g, nodes, rels, anomaly.obj)
        elif anomaly.kind == "flip":
            attrs = dict(n.attrs)
            attrs["upside_down"] = not bool(attrs.get("upside_down", False))
            nodes[anomaly.obj] = replace(n, attrs=attrs)
            rels = {r for r in rels if not (r[0] == "on" and r[2] == anomaly.obj)}
        elif anomaly.kind == "drift":
            self._drifts[anomaly.obj] = anomaly.velocity
        self._graph = g.replace(nodes=nodes, relations=rels)

    def render(self, camera: str, width: int = 640, height: int = 480) -> np.ndarray:
        raise ValueError("the symbolic mode has no cameras; run with --mode physics for video")

    def snapshot(self) -> dict[str, Any]:
        pending = None
        if self._pending is not None:
            verdict, left, started = self._pending
            pending = {"verdict": verdict.to_json(), "left": left, "started": started}
        return {
            "mode": self.mode,
            "graph": self._graph.to_json(),
            "pending": pending,
            "drifts": {k: list(v) for k, v in sorted(self._drifts.items())},
        }

    def restore(self, snapshot: dict[str, Any]) -> None:
        self._graph = SceneGraph.from_json(snapshot["graph"])
        p = snapshot.get("pending")
        self._pending = None
        if p is not None:
            self._pending = (Verdict.from_json(p["verdict"]), int(p["left"]), int(p["started"]))
        self._drifts = {k: (float(v[0]), float(v[1])) for k, v in snapshot["drifts"].items()}

    def state_hash(self) -> str:
        """SHA-256 of ``json.dumps(self.snapshot(), sort_keys=True)``, the first 16 hex digits.

        The text is assembled from cached parts (the graph's, the running verdict's) rather than
        by encoding the snapshot: the same bytes, without re-encoding what a tick left alone.
        """
        pending = "null"
        if self._pending is not None:
            verdict, left, started = self._pending
            pending = (
                f'{{"left": {_int_text(left)}, "started": {_int_text(started)}, '
                f'"verdict": {self._verdict_text(verdict)}}}'
            )
        drifts = "{}"
        if self._drifts:
            drifts = _SORTED_JSON({k: list(v) for k, v in self._drifts.items()})
        blob = (
            f'{{"drifts": {drifts}, "graph": {self._graph.to_json_text()}, '
            f'"mode": {json.dumps(self.mode)}, "pending": {pending}}}'
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def close(self) -> None:
        pass

    def _verdict_text(self, verdict: Verdict) -> str:
        # The running action's verdict is hashed every tick it runs; encode it once.
        cached = self._verdict_json
        if cached is None or cached[0] is not verdict:
            cached = (verdict, _SORTED_JSON(verdict.to_json()))
            self._verdict_json = cached
        return cached[1]

    # -- helpers -----------------------------------------------------------------------------
    def _drift(self, g: SceneGraph) -> SceneGraph:
        if not self._drifts:
            return g
        nodes = dict(g.nodes)
        held = g.held()
        for k, (vx, vy) in sorted(self._drifts.items()):
            if k in nodes and k != held:
                n = nodes[k]
                p = (n.pos[0] + vx * self.delta, n.pos[1] + vy * self.delta, n.pos[2])
                nodes[k] = replace(n, pos=p)
        rels = set(g.relations)
        for k in self._drifts:
            if k in nodes and k != held:
                rels = _resupport(g, nodes, rels, k)
        return g.replace(nodes=nodes, relations=rels)


def _int_text(v: int) -> str:
    """``json.dumps(v)`` for an int, without the encoder's overhead (bool would differ)."""
    return str(v) if type(v) is int else json.dumps(v)


def _vanished(g: SceneGraph, verdict: Verdict) -> str | None:
    """An object the action needs that an anomaly removed while it was being carried out."""
    grounded = verdict.grounded
    if grounded is None:
        return None
    for k in (grounded.obj, grounded.target):
        if k is not None and k not in g.nodes:
            return k
    return None


def initial_graph(info: SceneInfo, layout: Layout, seed: int) -> SceneGraph:
    """The start state a layout describes: placed objects on/in their supports, fixed furniture."""
    placed = sample_layout(layout, info, seed)
    nodes: dict[str, Node] = {}
    rels: set[Relation] = set()
    for o in info.objects.values():
        if "fixed" in o.tags:
            attrs = {**o.attrs, **layout.attrs.get(o.id, {})}
            nodes[o.id] = Node(o.id, o.type, o.pos, o.half, 0.0, o.color, o.tags, attrs)
            if o.id != info.table and abs(o.pos[2] - o.half[2] - info.table_top) < 0.02:
                rels.add(("on", o.id, info.table))
    for placement in layout.placements:
        p = placed[placement.obj]
        o = info.objects[p.obj]
        support = nodes[p.support]
        if p.relation == "in" and info.objects[p.support].interior is not None:
            interior = info.objects[p.support].interior
            assert interior is not None
            floor = support.pos[2] + interior[0][2] - interior[1][2]
            z = floor + o.half[2]
        else:
            z = support.top + o.half[2]
        half = _yawed(o.half, p.yaw)
        attrs = {**o.attrs, **layout.attrs.get(o.id, {})}
        nodes[o.id] = Node(o.id, o.type, (p.x, p.y, z), half, p.yaw, o.color, o.tags, attrs)
        rels.add((p.relation, o.id, p.support))
        rels |= {("in", o.id, c) for kind, s, c in rels.copy() if kind == "in" and s == p.support}
    for k, n in list(nodes.items()):
        if "openable" in n.tags and float(n.attrs.get("open", 0.0)) >= OPEN_AT:
            rels.add(("open", k, ""))
    for k, n in list(nodes.items()):
        shut = any(
            kind == "in" and a == k and ("open", c, "") not in rels and "openable" in nodes[c].tags
            for kind, a, c in rels
        )
        if shut:
            nodes[k] = replace(n, visible=False)
    return SceneGraph(0, nodes, frozenset(rels), info.workspace)


def _yawed(half: tuple[float, float, float], yaw: float) -> tuple[float, float, float]:
    c, s = abs(np.cos(yaw)), abs(np.sin(yaw))
    return (float(c * half[0] + s * half[1]), float(s * half[0] + c * half[1]), half[2])


def _resupport(
    g: SceneGraph, nodes: dict[str, Node], rels: set[Relation], obj: str
) -> set[Relation]:
    """After a displacement: ``obj`` rests on whatever is now under it (or the table)."""
    n = nodes[obj]
    rels = {r for r in rels if r[1] != obj or r[0] not in ("on", "in", "held")}
    under = [
        k
        for k, s in nodes.items()
        if k != obj
        and abs(n.pos[0] - s.pos[0]) <= s.size[0]
        and abs(n.pos[1] - s.pos[1]) <= s.size[1]
        and s.top <= n.pos[2] + 1e-6
        and ("surface" in s.tags or "graspable" in s.tags)
    ]
    if under:
        best = max(under, key=lambda k: (nodes[k].top, k))
        rels.add(("on", obj, best))
    return rels


__all__ = ["SymbolicWorld", "initial_graph"]
