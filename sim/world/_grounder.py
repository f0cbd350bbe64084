"""Deterministic rule-based grounding: "the mug on the left" → ``mug_2``, or a reason why not.

Frame convention (shared by every world): the viewer stands behind the arm looking along +x, so
*left* is +y, *right* is −y, *front*/*near* is small x and *back*/*far* is large x.

A reference is resolved in this order: an exact object id; otherwise the object type (with
synonyms) and colour words select candidates, relational phrases ("on the plate", "in the
drawer") filter them, and a spatial or size word picks one. What remains must be exactly one
visible object. Rejections carry one of three names: ``unknown``, ``ambiguous``, ``not_visible``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from sim.world._actions import Check
from sim.world._graph import Node, SceneGraph

COLOURS = (
    "red", "green", "blue", "yellow", "orange", "purple", "white", "black", "brown", "grey",
    "pink",
)  # fmt: skip

#: Spoken phrase → object type. Longest phrases are tried first.
SYNONYMS: dict[str, str] = {
    "cutting board": "cutting_board", "chopping board": "cutting_board", "board": "cutting_board",
    "frying pan": "pan", "skillet": "pan", "pan": "pan",
    "stove": "burner", "hob": "burner", "cooker": "burner", "burner": "burner",
    "knob": "burner",
    "burger patty": "patty", "patty": "patty", "meat": "patty", "burger": "patty",
    "bun": "bun", "bread": "bun",
    "cheese slice": "cheese", "cheese": "cheese", "slice": "cheese",
    "plate": "plate", "dish": "plate",
    "mug": "mug", "cup": "mug",
    "book": "book",
    "box": "box", "carton": "box",
    "bin": "bin", "trash can": "bin", "trash": "bin", "basket": "bin",
    "drawer": "drawer",
    "cabinet door": "cabinet", "cabinet": "cabinet", "cupboard": "cabinet",
    "brick": "brick", "block": "brick", "cube": "brick",
    "table": "table", "counter": "table",
}  # fmt: skip

_ARTICLES = re.compile(r"\b(?:the|a|an|that|this|one)\b")
_RELATIONAL = re.compile(
    r"^(?P<head>.+?) (?:that is |which is |sitting |lying )?(?P<rel>on|in|inside) (?P<rest>.+)$"
)

Pick = Callable[[list[Node]], list[Node]]


def _extreme(key: Callable[[Node], float], largest: bool) -> Pick:
    def pick(nodes: list[Node]) -> list[Node]:
        best = (max if largest else min)(key(n) for n in nodes)
        return [n for n in nodes if abs(key(n) - best) < 0.02]

    return pick


def _volume(n: Node) -> float:
    return n.size[0] * n.size[1] * n.size[2]


# spatial/size words → selection of the extreme candidate(s)
_SPATIAL: list[tuple[re.Pattern[str], Pick]] = [
    (re.compile(r"\b(?:on the left|to the left|leftmost|left)\b"), _extreme(lambda n: n.pos[1], True)),  # noqa: E501
    (re.compile(r"\b(?:on the right|to the right|rightmost|right)\b"), _extreme(lambda n: n.pos[1], False)),  # noqa: E501
    (re.compile(r"\b(?:in front|front|nearest|closest|near)\b"), _extreme(lambda n: n.pos[0], False)),  # noqa: E501
    (re.compile(r"\b(?:at the back|back|farthest|furthest|far)\b"), _extreme(lambda n: n.pos[0], True)),  # noqa: E501
    (re.compile(r"\b(?:top|highest|upper)\b"), _extreme(lambda n: n.pos[2], True)),
    (re.compile(r"\b(?:bottom|lowest)\b"), _extreme(lambda n: n.pos[2], False)),
    (re.compile(r"\b(?:big|bigger|biggest|large|larger|largest)\b"), _extreme(_volume, True)),
    (re.compile(r"\b(?:small|smaller|smallest|little|tiny)\b"), _extreme(_volume, False)),
]  # fmt: skip


@dataclass(frozen=True)
class Resolution:
    """Either an id or a failed :class:`Check` saying why not."""

    id: str | None = None
    problem: Check | None = None


def ground(reference: str, graph: SceneGraph) -> Resolution:
    """Resolve one spoken reference against the graph."""
    text = " ".join(reference.strip().lower().split())
    if text in graph.nodes:
        return _visible_only(graph, [graph.nodes[text]], reference)
    bare = " ".join(_ARTICLES.sub(" ", text).split())
    if bare.replace(" ", "_") in graph.nodes:
        return _visible_only(graph, [graph.nodes[bare.replace(" ", "_")]], reference)

    # "the mug on the plate" / "the brick in the drawer": filter by relation to another reference
    relational = _RELATIONAL.match(bare)
    anchor: tuple[str, str] | None = None
    if relational and not _is_spatial_phrase(relational["rel"] + " " + relational["rest"]):
        inner = ground(relational["rest"], graph)
        if inner.id is None:
            return inner
        anchor = (relational["rel"].replace("inside", "in"), inner.id)
        bare = relational["head"]

    kind = _type_of(bare)
    colours = [c for c in COLOURS if re.search(rf"\b{c}\b", bare)]
    if kind is None and not colours:
        return Resolution(problem=Check("unknown", f"I don't know what {reference!r} refers to"))
    candidates = [
        n
        for n in graph.nodes.values()
        if (kind is None or n.type == kind) and all(n.color == c for c in colours)
    ]
    if not candidates:
        return Resolution(problem=Check("unknown", f"there is no {bare} here"))
    if anchor is not None:
        rel, other = anchor
        candidates = [n for n in candidates if graph.holds(rel, n.id, other)]
        if not candidates:
            return Resolution(problem=Check("unknown", f"there is no {bare} {rel} {other}"))

    visible = [n for n in candidates if n.visible]
    if not visible:
        return Resolution(
            problem=Check("not_visible", f"{reference!r} is not visible (it may be shut away)")
        )
    for pattern, pick in _SPATIAL:
        if pattern.search(bare):
            visible = pick(visible)
    if len(visible) > 1:
        ids = ", ".join(sorted(n.id for n in visible))
        return Resolution(
            problem=Check("ambiguous", f"{reference!r} could be any of {ids}; say which one")
        )
    return Resolution(id=visible[0].id)


def _visible_only(graph: SceneGraph, nodes: list[Node], reference: str) -> Resolution:
    if not nodes[0].visible:
        return Resolution(problem=Check("not_visible", f"{reference!r} is not visible"))
    return Resolution(id=nodes[0].id)


def _type_of(text: str) -> str | None:
    for phrase in sorted(SYNONYMS, key=len, reverse=True):
        if re.search(rf"\b{phrase}s?\b", text):
            return SYNONYMS[phrase]
    return None


def _is_spatial_phrase(text: str) -> bool:
    spatial = r"^(?:on|in) (?:the )?(?:left|right|front|back|middle|top|bottom)\b"
    return bool(re.match(spatial, text))
