"""The frame description: one pass over the relations, and a camera that re-derives only what
changed, must say exactly what the graph's own queries say (the definition below)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sim.episode import EpisodeRunner, open_scenario
from sim.interact import build_interactive, describe_scene
from sim.interact._scene import SceneCamera
from sim.users import PROFILES
from sim.world import Node, SceneGraph


def reference(graph: SceneGraph) -> dict[str, str]:
    """The description written with SceneGraph's queries (as it was first written)."""
    out: dict[str, str] = {}
    held = graph.held()
    for k in sorted(graph.nodes):
        node = graph.nodes[k]
        hidden = any(
            c in graph.nodes and not graph.is_open(c) and graph.nodes[c].has("openable")
            for c in graph.inside(k)
        )
        if node.type == "table" or not node.visible or hidden:
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


def _node(id: str, type: str, z: float, tags: set[str] = frozenset(), **attrs: Any) -> Node:  # type: ignore[assignment]
    return Node(id, type, (0.0, 0.0, z), (0.1, 0.1, 0.1), tags=frozenset(tags), attrs=attrs)


def _world() -> SceneGraph:
    nodes = {
        "table": _node("table", "table", 0.0, {"surface"}),
        "box": _node("box", "box", 0.2, {"container", "openable"}),
        "cube": _node("cube", "cube", 0.2, {"graspable"}),
        "low": _node("low", "board", 0.1, {"surface"}),
        "high": _node("high", "plate", 0.3, {"surface"}),
        "lid": _node("lid", "lid", 0.4, {"graspable"}),
        "pan": _node("pan", "pan", 0.2, {"container"}),
        "patty": _node("patty", "patty", 0.2, {"cookable"}, cooked=0.0),
        "burner": _node("burner", "burner", 0.1, {"switchable", "heater"}, on=False),
        "ghost": replace(_node("ghost", "cube", 0.2), visible=False),
    }
    rels = frozenset({
        ("in", "cube", "box"), ("on", "box", "table"), ("on", "lid", "low"),
        ("on", "lid", "high"), ("in", "patty", "pan"), ("on", "pan", "burner"),
        ("on", "burner", "table"), ("on", "low", "table"), ("on", "high", "table"),
    })  # fmt: skip
    return SceneGraph(0, nodes, rels)


def _frames() -> list[SceneGraph]:
    """A scene changed a little at a time, the way ticks change it: nodes replaced, relations
    passed on unchanged (the same set) or changed."""
    g = _world()
    out = [g]

    def node(k: str, **kw: Any) -> SceneGraph:
        n = out[-1].nodes[k]
        return out[-1].replace(tick=out[-1].tick + 1, nodes={**out[-1].nodes, k: replace(n, **kw)})

    def rel(add: set[tuple[str, str, str]], drop: set[tuple[str, str, str]]) -> SceneGraph:
        r = (out[-1].relations | add) - drop
        return out[-1].replace(tick=out[-1].tick + 1, relations=r)

    out.append(out[-1].replace(tick=1))  # nothing changed
    out.append(node("patty", attrs={"cooked": 0.4}))
    out.append(node("burner", attrs={"on": True}))
    out.append(rel({("open", "box", "")}, set()))  # the cube shows
    # the lid rests on both: the higher one is its support; lower "high" under "low"
    out.append(node("high", pos=(0.0, 0.0, 0.05)))
    out.append(node("low", pos=(0.0, 0.0, 0.5)))
    out.append(rel({("held", "cube", "gripper")}, {("in", "cube", "box")}))
    out.append(rel(set(), {("open", "box", "")}))  # closed again, the cube is in the gripper
    out.append(node("patty", attrs={"cooked": 1.0}))
    out.append(node("ghost", visible=True))
    # equal relations in a new set object
    out.append(out[-1].replace(tick=99, relations=set(out[-1].relations)))
    # the cube back in the closed box, then the box gone from the scene: nothing shuts it in
    out.append(rel({("in", "cube", "box")}, {("held", "cube", "gripper")}))
    out.append(out[-1].replace(nodes={k: v for k, v in out[-1].nodes.items() if k != "box"}))
    return out


def test_camera_and_description_match_the_graph_queries_as_the_scene_changes() -> None:
    camera = SceneCamera()
    seen = []
    for g in _frames():
        want = reference(g)
        assert describe_scene(g) == want
        got = camera(g)
        assert got == want, f"tick {g.tick}"
        seen.append(got)
    # the frames did exercise what the camera must notice
    assert seen[3]["burner"] == "on table, on" and "cube" not in seen[3]
    assert seen[4]["cube"] == "in box" and seen[4]["lid"] == "on high"
    assert seen[6]["lid"] == "on low"
    assert seen[7]["cube"] == "held" and "ghost" not in seen[9]
    assert seen[10]["ghost"] == "on table" and seen[9]["patty"] == "in pan, cooked"
    assert "cube" not in seen[-2] and seen[-1]["cube"] == "in box"


def test_camera_matches_on_every_tick_of_shipped_interactive_episodes() -> None:
    # physics graphs come from contacts: things rest on several supports, relation sets are new
    # every tick
    for name, persona, mode in (("cheeseburger", "novice", "symbolic"),
                                ("prep-board", "expert", "symbolic"),
                                ("prep-board", "balanced", "physics")):  # fmt: skip
        ep = build_interactive(
            open_scenario(name), persona=PROFILES[persona], mode=mode, record=False
        )
        camera = SceneCamera()
        checked = []

        def check(runner: EpisodeRunner, _entry: Any) -> None:
            g = runner.world.graph
            assert camera(g) == reference(g), f"{name} tick {g.tick}"  # noqa: B023
            checked.append(g.tick)  # noqa: B023

        ep.runner.on_tick = check
        try:
            ep.runner.run()
        finally:
            ep.runner.world.close()
        assert ep.runner.result is not None and len(checked) == ep.runner.result.ticks + 1
