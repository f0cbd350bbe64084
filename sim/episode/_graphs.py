"""The scene graph at any tick of a recorded episode, from its stored keyframes and diffs.

(The trace format is the episode's; the review views, metrics and forks all read it here.)

A trace stores the whole graph at tick 0 and at keyframes, and between them each tick's diff
(relations added and removed, attributes changed, objects vanished). :class:`GraphCursor` loads
an episode's rows once and answers ``graph_at(tick)`` from the nearest keyframe at or before it,
stepping forward from its last answer when it can (scrubbing forward costs one diff per tick).
Relations, attributes and visibility are exact; positions are the keyframe's (diffs say how far
things moved, not where to).
"""

from __future__ import annotations

import bisect
import json
from dataclasses import replace
from typing import Any

from sim.contracts import Event
from sim.world import Node, SceneGraph
from storage import ActionRecord, Project, TickRecord


def apply_diff(graph: SceneGraph, tick: int, d: dict[str, Any]) -> SceneGraph:
    """``graph`` with one stored tick diff applied, as the graph of ``tick``."""
    rels = set(graph.relations)
    rels -= {(str(r[0]), str(r[1]), str(r[2])) for r in d.get("removed", ())}
    rels |= {(str(r[0]), str(r[1]), str(r[2])) for r in d.get("added", ())}
    nodes: dict[str, Node] = dict(graph.nodes)
    for k, changes in d.get("attrs", {}).items():
        if k not in nodes:
            continue
        node = nodes[k]
        attrs = dict(node.attrs)
        visible = node.visible
        for name, (_, after) in changes.items():
            if name == "visible":
                visible = bool(after)
            elif after is None:
                attrs.pop(name, None)
            else:
                attrs[name] = after
        nodes[k] = replace(node, attrs=attrs, visible=visible)
    for k in d.get("vanished", ()):
        nodes.pop(k, None)
    return graph.replace(tick=tick, nodes=nodes, relations=rels)


def changed(d: dict[str, Any]) -> bool:
    """Whether a tick's diff changed what the scene graph says (not only positions)."""
    return any(d.get(k) for k in ("added", "removed", "attrs", "vanished"))


class GraphCursor:
    """Scene graphs of one recorded episode by tick (see the module docstring)."""

    def __init__(self, rows: list[TickRecord]) -> None:
        if not rows or rows[0].graph_json is None:
            raise ValueError("a recorded episode starts with a keyframe at its first tick")
        self.rows = rows
        self.ticks = [r.tick for r in rows]
        self._keys = [i for i, r in enumerate(rows) if r.graph_json is not None]
        self._diffs: dict[int, dict[str, Any]] = {}
        self._last: tuple[int, SceneGraph] | None = None

    @classmethod
    def load(cls, project: Project, episode_id: str) -> GraphCursor:
        return cls(project.episodes.ticks(episode_id))

    def diff(self, i: int) -> dict[str, Any]:
        """The stored diff of row ``i`` (parsed once)."""
        if i not in self._diffs:
            self._diffs[i] = json.loads(self.rows[i].diff_json)
        return self._diffs[i]

    def index(self, tick: int) -> int:
        """The row of the last stored tick at or before ``tick`` (clamped to the episode)."""
        return max(0, bisect.bisect_right(self.ticks, tick) - 1)

    def graph_at(self, tick: int) -> SceneGraph:
        i = self.index(tick)
        if self._last is not None and self._last[0] <= i:
            start, graph = self._last
            key = self._keys[bisect.bisect_right(self._keys, i) - 1]
            if key > start:  # a keyframe in between: start from it instead
                start, graph = key, self._keyframe(key)
        else:
            start = self._keys[bisect.bisect_right(self._keys, i) - 1]
            graph = self._keyframe(start)
        for j in range(start + 1, i + 1):
            row = self.rows[j]
            graph = (self._keyframe(j) if row.graph_json is not None
                     else apply_diff(graph, row.tick, self.diff(j)))  # fmt: skip
        self._last = (i, graph)
        return graph

    def _keyframe(self, i: int) -> SceneGraph:
        text = self.rows[i].graph_json
        assert text is not None
        return SceneGraph.from_json(json.loads(text))


def accepted_events(actions: list[ActionRecord]) -> list[Event]:
    """The accepted, grounded actions as the engine logged them (what event goals read)."""
    out = []
    for a in actions:
        if not a.accepted:
            continue
        verb = str(json.loads(a.action_json)["verb"])
        g = json.loads(a.grounded_json) if a.grounded_json else {}
        out.append(Event(verb, g.get("obj"), g.get("target"), a.tick))
    return out
