"""What a camera shows, in words: the symbolic stand-in for a frame (and what the oracle reads).

Each visible object (not shut inside a closed container, not the table itself) gets one short
phrase — where it is and the state it shows: ``"on plate"``, ``"in pan, 40% cooked"``,
``"held"``, ``"open"``, ``"on"``. It carries no ids the camera could not show and nothing about
plans, queues or events: it is derived from the graph alone.

:class:`SceneCamera` gives the same descriptions for one episode's frames, re-deriving only the
phrases whose inputs changed since the last frame.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sim.world import Node, SceneGraph

Relations = frozenset[tuple[str, str, str]]


@dataclass(frozen=True)
class _Index:
    """The relations sorted out once per graph (the graph's own queries scan them all per
    object, which made a frame O(objects × relations))."""

    ins: Mapping[str, list[str]]  # object → the containers it is in, sorted (graph.inside)
    ons: Mapping[str, list[str]]  # object → what it rests on
    opened: frozenset[str]  # graph.is_open
    held: str | None  # graph.held()


def _index(graph: SceneGraph) -> _Index:
    ins: dict[str, list[str]] = {}
    ons: dict[str, list[str]] = {}
    opened: set[str] = set()
    for kind, a, b in graph.relations:
        if kind == "in":
            ins.setdefault(a, []).append(b)
        elif kind == "on":
            ons.setdefault(a, []).append(b)
        elif kind == "open" and b == "":
            opened.add(a)
    for v in ins.values():
        v.sort()
    return _Index(ins, ons, frozenset(opened), graph.held())


def _depends(k: str, ix: _Index) -> tuple[str, ...]:
    """The other objects ``k``'s phrase reads: its containers (are they shut?) and, when it
    rests on several things, those (the highest is its support)."""
    ons = ix.ons.get(k, ())
    return (*ix.ins.get(k, ()), *(ons if len(ons) > 1 else ()))


def _phrase(k: str, nodes: Mapping[str, Node], ix: _Index) -> str | None:
    """The phrase for object ``k``, or None when the camera cannot see it."""
    node = nodes[k]
    if node.type == "table" or not node.visible:
        return None
    containers = ix.ins.get(k, [])
    if any(c in nodes and c not in ix.opened and nodes[c].has("openable") for c in containers):
        return None  # shut inside a closed container
    parts: list[str] = []
    if k == ix.held:
        parts.append("held")
    else:
        inside = [c for c in containers if c != "table"]
        support = _support(nodes, ix.ons.get(k))
        if inside:
            parts.append(f"in {inside[0]}")
        elif support and support != "table":
            parts.append(f"on {support}")
        else:
            parts.append("on table")
    if node.has("cookable"):
        level = float(node.attrs.get("cooked", 0.0))
        if level <= 0.0:
            parts.append("raw")
        else:
            parts.append("cooked" if level >= 1.0 else f"{round(level * 100)}% cooked")
    if "on" in node.attrs:
        parts.append("on" if node.attrs["on"] else "off")
    if k in ix.opened:
        parts.append("open")
    return ", ".join(parts)


def _support(nodes: Mapping[str, Node], under: list[str] | None) -> str | None:
    """:meth:`SceneGraph.support` from the supports already collected (the highest wins)."""
    if not under:
        return None
    if len(under) == 1:
        return under[0]
    return max(under, key=lambda b: (nodes[b].top if b in nodes else 0.0, b))


def describe_scene(graph: SceneGraph) -> dict[str, str]:
    ix = _index(graph)
    out: dict[str, str] = {}
    for k in sorted(graph.nodes):
        phrase = _phrase(k, graph.nodes, ix)
        if phrase is not None:
            out[k] = phrase
    return out


class SceneCamera:
    """:func:`describe_scene` for one episode's frames, sampled every few ticks.

    Nodes are immutable and a tick replaces only those it changes, so a phrase whose inputs are
    the very same objects as last time (the object and the ones it depends on, under an equal
    relation index) is the phrase of last time. The relations are re-indexed only when the
    graph carries a new set, and an unchanged scene (most samples of a symbolic episode) is
    copied whole.
    """

    def __init__(self) -> None:
        self._relations: Relations | None = None
        self._ix = _Index({}, {}, frozenset(), None)
        self._nodes: dict[str, Node] = {}
        # object → (its node, the nodes it depends on, its phrase) at the last frame
        self._memo: dict[str, tuple[Node, tuple[Node | None, ...], str | None]] = {}
        self._scene: dict[str, str] = {}

    def __call__(self, graph: SceneGraph) -> dict[str, str]:
        nodes = graph.nodes
        if graph.relations is not self._relations:
            ix = _index(graph)
            if ix != self._ix:  # phrases read the relations only through the index
                self._memo, self._nodes = {}, {}
            self._relations, self._ix = graph.relations, ix
        if _same(nodes, self._nodes):
            return dict(self._scene)
        ix, memo = self._ix, self._memo
        out: dict[str, str] = {}
        for k in sorted(nodes):
            node = nodes[k]
            deps = tuple(nodes.get(d) for d in _depends(k, ix))
            seen = memo.get(k)
            if (
                seen is not None
                and seen[0] is node
                and len(seen[1]) == len(deps)
                and all(a is b for a, b in zip(seen[1], deps, strict=True))
            ):
                phrase = seen[2]
            else:
                phrase = _phrase(k, nodes, ix)
                memo[k] = (node, deps, phrase)
            if phrase is not None:
                out[k] = phrase
        self._nodes, self._scene = dict(nodes), out
        return dict(out)


def _same(nodes: Mapping[str, Node], before: dict[str, Node]) -> bool:
    return len(nodes) == len(before) and all(before.get(k) is n for k, n in nodes.items())
