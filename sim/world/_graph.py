"""The scene graph: what is true in a world at one tick.

Both world modes (MuJoCo physics and the symbolic fast mode) produce the same value type, so
preconditions, grounding, task contracts and traces never know which mode made it. In physics
mode the graph is derived from contacts and geometry every tick; nothing an agent says enters it.

Relations are triples ``(kind, a, b)``:

- ``("on", a, b)``   a rests on b (support contact, a above b)
- ``("in", a, b)``   a's centre lies inside b's interior volume
- ``("held", a, "gripper")``  both gripper fingers touch a
- ``("open", x, "")``  x's open fraction is at least 0.5
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

Attr = float | bool | str
Relation = tuple[str, str, str]
Vec3 = tuple[float, float, float]

GRIPPER = "gripper"

#: ``json.dumps(x, sort_keys=True)`` without building an encoder per call (what dumps does for
#: any non-default argument): the same encoder settings, so the same text
_SORTED_JSON = json.JSONEncoder(sort_keys=True).encode

#: Capabilities an object can have. A world description sets them; rules read them.
TAGS = frozenset(
    {"graspable", "surface", "container", "openable", "switchable", "heater", "fixed", "cookable"}
)


@dataclass(frozen=True)
class Node:
    """One object: stable id, kind, where it is, and its semantic attributes."""

    id: str
    type: str
    pos: Vec3
    size: Vec3  # half extents of the world-aligned bounding box
    yaw: float = 0.0
    color: str | None = None
    tags: frozenset[str] = frozenset()
    attrs: Mapping[str, Attr] = field(default_factory=dict)
    visible: bool = True

    def has(self, tag: str) -> bool:
        return tag in self.tags

    @property
    def top(self) -> float:
        return self.pos[2] + self.size[2]

    @property
    def bottom(self) -> float:
        return self.pos[2] - self.size[2]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "color": self.color,
            "pos": [round(v, 4) for v in self.pos],
            "size": [round(v, 4) for v in self.size],
            "yaw": round(self.yaw, 4),
            "tags": sorted(self.tags),
            "attrs": {k: _round(v) for k, v in sorted(self.attrs.items())},
            "visible": self.visible,
        }

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> Node:
        return Node(
            id=d["id"],
            type=d["type"],
            color=d.get("color"),
            pos=_vec3(d["pos"]),
            size=_vec3(d["size"]),
            yaw=float(d.get("yaw", 0.0)),
            tags=frozenset(d.get("tags", ())),
            attrs=dict(d.get("attrs", {})),
            visible=bool(d.get("visible", True)),
        )

    @cached_property
    def _json_text(self) -> str:
        # A node is immutable and most survive a tick unchanged (the rules copy the mapping and
        # replace only the nodes they touch), so each is encoded once, not once per tick.
        return _SORTED_JSON(self.to_json())


@dataclass(frozen=True)
class SceneGraph:
    """Objects by id plus relations; ``workspace`` is the arm's reachable table area."""

    tick: int
    nodes: Mapping[str, Node]
    relations: frozenset[Relation]
    workspace: tuple[float, float, float, float] = (-1e9, 1e9, -1e9, 1e9)  # xmin xmax ymin ymax

    # -- queries -----------------------------------------------------------------------------
    def holds(self, kind: str, a: str, b: str = "") -> bool:
        return (kind, a, b) in self.relations

    def held(self) -> str | None:
        """The id of the object in the gripper, if any."""
        for kind, a, _ in self.relations:
            if kind == "held":
                return a
        return None

    def support(self, a: str) -> str | None:
        """What ``a`` rests on (the highest support if several)."""
        under = [b for kind, x, b in self.relations if kind == "on" and x == a]
        if not under:
            return None
        return max(under, key=lambda b: (self.nodes[b].top if b in self.nodes else 0.0, b))

    def on_top_of(self, b: str) -> list[str]:
        return sorted(a for kind, a, x in self.relations if kind == "on" and x == b)

    def inside(self, a: str) -> list[str]:
        """Containers ``a`` is in, innermost unknown: sorted ids."""
        return sorted(b for kind, x, b in self.relations if kind == "in" and x == a)

    def is_open(self, x: str) -> bool:
        return ("open", x, "") in self.relations

    def reachable(self, a: str) -> bool:
        x, y, _ = self.nodes[a].pos
        xmin, xmax, ymin, ymax = self.workspace
        return xmin <= x <= xmax and ymin <= y <= ymax

    def stack_on(self, base: str) -> list[str]:
        """The chain of objects resting one on another above ``base``, bottom first."""
        chain: list[str] = []
        current = base
        seen = {base}
        while True:
            above = [a for a in self.on_top_of(current) if a not in seen]
            if len(above) != 1:
                return chain
            current = above[0]
            seen.add(current)
            chain.append(current)

    # -- serialisation -----------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "tick": self.tick,
            "nodes": [self.nodes[k].to_json() for k in sorted(self.nodes)],
            "relations": sorted(list(r) for r in self.relations),
            "workspace": list(self.workspace),
        }

    def to_json_text(self) -> str:
        """Exactly ``json.dumps(self.to_json(), sort_keys=True)``, at a fraction of the cost.

        The symbolic world's per-tick state hash is made of this text. It is assembled from
        texts cached on the immutable nodes and on the graph (passed on by :meth:`replace` for
        the parts it keeps), so a tick pays only for what it changed.
        """
        return self._json_text

    @cached_property
    def _json_text(self) -> str:
        tick = str(self.tick) if type(self.tick) is int else json.dumps(self.tick)
        return (
            f'{{"nodes": {self._nodes_text}, "relations": {self._relations_text}, '
            f'"tick": {tick}, "workspace": {self._workspace_text}}}'
        )

    @cached_property
    def _nodes_text(self) -> str:
        nodes = self.nodes
        return "[" + ", ".join(nodes[k]._json_text for k in sorted(nodes)) + "]"

    @cached_property
    def _relations_text(self) -> str:
        return json.dumps(sorted(list(r) for r in self.relations))

    @cached_property
    def _workspace_text(self) -> str:
        return json.dumps(list(self.workspace))

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> SceneGraph:
        nodes = {n["id"]: Node.from_json(n) for n in d["nodes"]}
        rels = frozenset((str(r[0]), str(r[1]), str(r[2])) for r in d["relations"])
        ws = d.get("workspace", (-1e9, 1e9, -1e9, 1e9))
        return SceneGraph(
            tick=int(d["tick"]),
            nodes=nodes,
            relations=rels,
            workspace=(float(ws[0]), float(ws[1]), float(ws[2]), float(ws[3])),
        )

    def semantic_digest(self) -> str:
        """Hash of the symbolic content (relations, attributes, visibility) — not poses."""
        payload = {
            "relations": sorted(list(r) for r in self.relations),
            "attrs": {
                k: {a: _round(v, 3) for a, v in sorted(n.attrs.items())}
                for k, n in sorted(self.nodes.items())
            },
            "visible": sorted(k for k, n in self.nodes.items() if n.visible),
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]

    def replace(
        self,
        *,
        tick: int | None = None,
        nodes: Mapping[str, Node] | None = None,
        relations: Iterable[Relation] | None = None,
    ) -> SceneGraph:
        g = SceneGraph(
            tick=self.tick if tick is None else tick,
            nodes=self.nodes if nodes is None else nodes,
            relations=self.relations if relations is None else frozenset(relations),
            workspace=self.workspace,
        )
        # Texts of the parts passed on unchanged stay valid (a symbolic tick usually changes the
        # tick alone); cached_property keeps them in the instance dict, so they are copied there.
        mine, theirs = self.__dict__, g.__dict__
        for name in _CARRIED[nodes is None, relations is None]:
            if name in mine:
                theirs[name] = mine[name]
        return g


#: cached texts :meth:`SceneGraph.replace` passes on, by (nodes unchanged, relations unchanged)
_CARRIED: Mapping[tuple[bool, bool], tuple[str, ...]] = {
    (a, b): ("_workspace_text",)
    + (("_nodes_text",) if a else ())
    + (("_relations_text",) if b else ())
    for a in (False, True)
    for b in (False, True)
}


@dataclass(frozen=True)
class GraphDiff:
    """What changed between two graphs: relations gained/lost, attributes, moved objects."""

    added: tuple[Relation, ...] = ()
    removed: tuple[Relation, ...] = ()
    attrs: Mapping[str, Mapping[str, tuple[Attr | None, Attr | None]]] = field(default_factory=dict)
    moved: Mapping[str, float] = field(default_factory=dict)  # id -> distance in metres
    appeared: tuple[str, ...] = ()
    vanished: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(
            self.added or self.removed or self.attrs or self.moved or self.appeared or self.vanished
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.added:
            out["added"] = [list(r) for r in self.added]
        if self.removed:
            out["removed"] = [list(r) for r in self.removed]
        if self.attrs:
            out["attrs"] = {
                k: {a: [_round(v[0]), _round(v[1])] for a, v in sorted(ch.items())}
                for k, ch in sorted(self.attrs.items())
            }
        if self.moved:
            out["moved"] = {k: round(v, 4) for k, v in sorted(self.moved.items())}
        if self.appeared:
            out["appeared"] = list(self.appeared)
        if self.vanished:
            out["vanished"] = list(self.vanished)
        return out


def diff(before: SceneGraph, after: SceneGraph, *, move_tol: float = 0.01) -> GraphDiff:
    """Changes from ``before`` to ``after``; positions count as moved beyond ``move_tol`` m."""
    attrs: dict[str, dict[str, tuple[Attr | None, Attr | None]]] = {}
    moved: dict[str, float] = {}
    for k, new in after.nodes.items():
        old = before.nodes.get(k)
        if old is None or old is new:  # the same immutable node: nothing changed (symbolic ticks)
            continue
        changes = {
            a: (old.attrs.get(a), new.attrs.get(a))
            for a in sorted(set(old.attrs) | set(new.attrs))
            if _round(old.attrs.get(a), 3) != _round(new.attrs.get(a), 3)
        }
        if old.visible != new.visible:
            changes["visible"] = (old.visible, new.visible)
        if changes:
            attrs[k] = changes
        dist = sum((p - q) ** 2 for p, q in zip(old.pos, new.pos, strict=True)) ** 0.5
        if dist > move_tol:
            moved[k] = dist
    same_rels = before.relations is after.relations
    same_ids = before.nodes is after.nodes or before.nodes.keys() == after.nodes.keys()
    return GraphDiff(
        added=() if same_rels else tuple(sorted(after.relations - before.relations)),
        removed=() if same_rels else tuple(sorted(before.relations - after.relations)),
        attrs=attrs,
        moved=moved,
        appeared=() if same_ids else tuple(sorted(set(after.nodes) - set(before.nodes))),
        vanished=() if same_ids else tuple(sorted(set(before.nodes) - set(after.nodes))),
    )


def _round(v: Attr | None, nd: int = 4) -> Attr | None:
    if isinstance(v, float):
        return round(v, nd)
    return v


def _vec3(v: Any) -> Vec3:
    return (float(v[0]), float(v[1]), float(v[2]))
