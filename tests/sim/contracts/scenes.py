"""Hand-built kitchen scene graphs and a tiny symbolic executor loop for the contract tests."""

from __future__ import annotations

from collections.abc import Sequence

from sim.contracts import Event
from sim.world import Action, Node, SceneGraph, Verb, Verdict, apply, check

_TABLE_TOP = 0.42


def _node(
    id_: str,
    type_: str,
    xy: tuple[float, float],
    tags: Sequence[str],
    *,
    half: float = 0.04,
    attrs: dict[str, float | bool | str] | None = None,
) -> Node:
    return Node(
        id=id_,
        type=type_,
        pos=(xy[0], xy[1], _TABLE_TOP + half),
        size=(half, half, half),
        tags=frozenset(tags),
        attrs=attrs or {},
    )


def kitchen() -> SceneGraph:
    """Table with plate, bun, patty, cheese, a red mug, a closed drawer and an off burner."""
    nodes = {
        "table": Node(
            "table",
            "table",
            (0.5, 0.0, 0.4),
            (0.5, 0.5, 0.02),
            tags=frozenset({"surface", "fixed"}),
        ),
        "plate": _node("plate", "plate", (0.4, 0.0), ("graspable", "surface"), half=0.01),
        "bun": _node("bun", "bun", (0.3, 0.2), ("graspable",), half=0.02),
        "patty": _node("patty", "patty", (0.3, -0.2), ("graspable", "cookable"), half=0.01),
        "cheese": _node("cheese", "cheese", (0.6, 0.2), ("graspable",), half=0.005),
        "mug_red": _node("mug_red", "mug", (0.6, -0.2), ("graspable",)),
        "drawer": _node(
            "drawer",
            "drawer",
            (0.8, 0.3),
            ("container", "openable", "fixed"),
            half=0.1,
            attrs={"open": 0.0},
        ),
        "burner": _node("burner", "burner", (0.8, -0.3), ("switchable", "heater", "fixed")),
    }
    rels = frozenset(("on", k, "table") for k in nodes if k != "table")
    return SceneGraph(tick=0, nodes=nodes, relations=rels)


def act(verb: Verb, obj: str | None = None, target: str | None = None, rel: str = "on") -> Action:
    return Action(verb, obj=obj, target=target, relation=rel if verb is Verb.PLACE else None)


def run_plan(
    graph: SceneGraph, plan: Sequence[Action]
) -> tuple[SceneGraph, list[Verdict], list[Event], list[tuple[int, SceneGraph]]]:
    """Submit each action in turn: accepted ones mutate the graph (one tick each), rejected ones
    leave it as is. Returns the final graph, every verdict, the accepted events and the frames."""
    verdicts: list[Verdict] = []
    events: list[Event] = []
    frames = [(graph.tick, graph)]
    for action in plan:
        verdict = check(graph, action)
        verdicts.append(verdict)
        if verdict.accepted:
            graph = apply(graph, verdict).replace(tick=graph.tick + 1)
            events.append(Event.from_verdict(verdict, tick=graph.tick))
            frames.append((graph.tick, graph))
    return graph, verdicts, events, frames


def pick_place(obj: str, target: str, rel: str = "on") -> list[Action]:
    return [act(Verb.PICK, obj), act(Verb.PLACE, obj, target, rel)]


def without(graph: SceneGraph, obj: str) -> SceneGraph:
    """The graph with ``obj`` removed (a 'remove' anomaly)."""
    nodes = {k: n for k, n in graph.nodes.items() if k != obj}
    rels = [r for r in graph.relations if obj not in (r[1], r[2])]
    return graph.replace(nodes=nodes, relations=rels)
