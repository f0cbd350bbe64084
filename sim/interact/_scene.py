"""What a camera shows, in words: the symbolic stand-in for a frame (and what the oracle reads).

Each visible object (not shut inside a closed container, not the table itself) gets one short
phrase — where it is and the state it shows: ``"on plate"``, ``"in pan, 40% cooked"``,
``"held"``, ``"open"``, ``"on"``. It carries no ids the camera could not show and nothing about
plans, queues or events: it is derived from the graph alone.
"""

from __future__ import annotations

from sim.world import SceneGraph


def describe_scene(graph: SceneGraph) -> dict[str, str]:
    out: dict[str, str] = {}
    held = graph.held()
    for k in sorted(graph.nodes):
        node = graph.nodes[k]
        if node.type == "table" or not node.visible or _hidden(graph, k):
            continue
        parts: list[str] = []
        if k == held:
            parts.append("held")
        else:
            inside = [c for c in graph.inside(k) if c != "table"]
            support = graph.support(k)
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
        if graph.is_open(k):
            parts.append("open")
        out[k] = ", ".join(parts)
    return out


def _hidden(graph: SceneGraph, k: str) -> bool:
    return any(
        c in graph.nodes and not graph.is_open(c) and graph.nodes[c].has("openable")
        for c in graph.inside(k)
    )
