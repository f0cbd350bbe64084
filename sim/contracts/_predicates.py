"""The predicate language of task contracts: small typed conditions over a scene graph.

Each predicate is a frozen value that evaluates itself to :class:`Truth`, describes itself in a
sentence for reports, and serialises back to the JSON form it was parsed from (so a contract's
digest is stable). Conditions read the *graph*, never an agent's claims; only ``Accepted`` reads
the accepted-event log. Any valid execution order that reaches the same graph gets the same
answer, because nothing here looks at how the state was reached.

UNKNOWN rules: an object a predicate mentions is missing from the graph (e.g. removed by an
anomaly), an attribute it reads is not represented on the object, there is no graph at all, or
(for events) no event log.
"""

from __future__ import annotations

import math
import operator
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sim.contracts._truth import Event, Truth
from sim.world import GRIPPER, Node, SceneGraph

Events = Sequence[Event]
Attr = float | bool | str  # the attribute values a scene graph node carries

COMPARISONS: Mapping[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": lambda a, b: math.isclose(a, b, rel_tol=0.0, abs_tol=1e-9),
}


class Predicate(ABC):
    """A condition of a contract. Subclasses are frozen dataclasses."""

    @abstractmethod
    def evaluate(self, graph: SceneGraph | None, events: Events | None = None) -> Truth:
        """TRUE/FALSE from the graph (or event log); UNKNOWN when the evidence is missing."""

    @abstractmethod
    def describe(self) -> str:
        """A short sentence a person reads in the contract panel."""

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """The scenario-file form; ``parse_predicate(p.to_json())`` gives ``p`` back."""

    @abstractmethod
    def ids(self) -> frozenset[str]:
        """Every object id the predicate mentions."""

    def uses_events(self) -> bool:
        """Whether any part reads the accepted-event log (not allowed in terminal contracts)."""
        return False


def _present(graph: SceneGraph | None, *ids: str) -> SceneGraph | None:
    """The graph if every id is in it, else None (the caller answers UNKNOWN)."""
    if graph is None or any(i not in graph.nodes for i in ids):
        return None
    return graph


@dataclass(frozen=True)
class On(Predicate):
    """``a`` rests directly on ``b`` (the graph's support relation)."""

    a: str
    b: str

    def evaluate(self, graph: SceneGraph | None, events: Events | None = None) -> Truth:
        g = _present(graph, self.a, self.b)
        return Truth.U if g is None else Truth.of(g.holds("on", self.a, self.b))

    def describe(self) -> str:
        return f"{self.a} on {self.b}"

    def to_json(self) -> dict[str, Any]:
        return {"on": [self.a, self.b]}

    def ids(self) -> frozenset[str]:
        return frozenset((self.a, self.b))


@dataclass(frozen=True)
class In(Predicate):
    """``a`` is inside container ``b``."""

    a: str
    b: str

    def evaluate(self, graph: SceneGraph | None, events: Events | None = None) -> Truth:
        g = _present(graph, self.a, self.b)
        return Truth.U if g is None else Truth.of(g.holds("in", self.a, self.b))

    def describe(self) -> str:
        return f"{self.a} in {self.b}"

    def to_json(self) -> dict[str, Any]:
        return {"in": [self.a, self.b]}

    def ids(self) -> frozenset[str]:
        return frozenset((self.a, self.b))


@dataclass(frozen=True)
class Held(Predicate):
    """``a`` is in the gripper."""

    a: str

    def evaluate(self, graph: SceneGraph | None, events: Events | None = None) -> Truth:
        g = _present(graph, self.a)
        return Truth.U if g is None else Truth.of(g.holds("held", self.a, GRIPPER))

    def describe(self) -> str:
        return f"{self.a} held"

    def to_json(self) -> dict[str, Any]:
        return {"held": self.a}

    def ids(self) -> frozenset[str]:
        return frozenset((self.a,))


@dataclass(frozen=True)
class Open(Predicate):
    """``x`` is open (``want=True``) or closed (``want=False``).

    UNKNOWN for an object that neither opens nor carries an ``open`` attribute: the world does
    not represent that state, so "closed" would be a guess.
    """

    x: str
    want: bool = True

    def evaluate(self, graph: SceneGraph | None, events: Events | None = None) -> Truth:
        g = _present(graph, self.x)
        if g is None:
            return Truth.U
        node = g.nodes[self.x]
        if not node.has("openable") and "open" not in node.attrs:
            return Truth.U
        return Truth.of(g.is_open(self.x) == self.want)

    def describe(self) -> str:
        return f"{self.x} {'open' if self.want else 'closed'}"

    def to_json(self) -> dict[str, Any]:
        return {"open" if self.want else "closed": self.x}

    def ids(self) -> frozenset[str]:
        return frozenset((self.x,))


@dataclass(frozen=True)
class OnState(Predicate):
    """Switch ``x`` is on (``want=True``) or off; a switchable without the attribute is off."""

    x: str
    want: bool

    def evaluate(self, graph: SceneGraph | None, events: Events | None = None) -> Truth:
        g = _present(graph, self.x)
        if g is None:
            return Truth.U
        node = g.nodes[self.x]
        if "on" not in node.attrs and not node.has("switchable"):
            return Truth.U
        return Truth.of(bool(node.attrs.get("on", False)) == self.want)

    def describe(self) -> str:
        return f"{self.x} switched {'on' if self.want else 'off'}"

    def to_json(self) -> dict[str, Any]:
        return {"on_state": [self.x, self.want]}

    def ids(self) -> frozenset[str]:
        return frozenset((self.x,))


@dataclass(frozen=True)
class AttrCmp(Predicate):
    """Attribute ``name`` of ``x`` compared with ``value``; ordering needs numbers on both sides.

    UNKNOWN when the attribute is absent or its type cannot be compared (a string against a
    number): the world does not represent the condition as asked.
    """

    x: str
    name: str
    op: str
    value: Attr

    def evaluate(self, graph: SceneGraph | None, events: Events | None = None) -> Truth:
        g = _present(graph, self.x)
        if g is None or self.name not in g.nodes[self.x].attrs:
            return Truth.U
        have = g.nodes[self.x].attrs[self.name]
        if self.op == "==" and (isinstance(have, str) or isinstance(self.value, str)):
            return Truth.of(have == self.value)
        if isinstance(have, str) or isinstance(self.value, str):
            return Truth.U
        return Truth.of(COMPARISONS[self.op](float(have), float(self.value)))

    def describe(self) -> str:
        return f"{self.x}.{self.name} {self.op} {self.value!r}"

    def to_json(self) -> dict[str, Any]:
        return {"attr": [self.x, self.name, self.op, self.value]}

    def ids(self) -> frozenset[str]:
        return frozenset((self.x,))


@dataclass(frozen=True)
class Stack(Predicate):
    """``items`` stacked on ``base`` in this order, bottom first, each directly on the previous.

    A different order is FALSE even when every item sits somewhere on the pile (CookSim's
    plating order): the burger is plate, bun, patty, cheese — not plate, patty, bun, cheese.
    """

    base: str
    items: tuple[str, ...]

    def evaluate(self, graph: SceneGraph | None, events: Events | None = None) -> Truth:
        g = _present(graph, self.base, *self.items)
        if g is None:
            return Truth.U
        below = (self.base, *self.items[:-1])
        return Truth.of(all(g.holds("on", a, b) for a, b in zip(self.items, below, strict=True)))

    def describe(self) -> str:
        return f"{', '.join(self.items)} stacked on {self.base}, in that order"

    def to_json(self) -> dict[str, Any]:
        return {"stack": [self.base, *self.items]}

    def ids(self) -> frozenset[str]:
        return frozenset((self.base, *self.items))


@dataclass(frozen=True)
class Near(Predicate):
    """Centres of ``a`` and ``b`` within ``d`` metres in the table plane (inclusive)."""

    a: str
    b: str
    d: float

    def evaluate(self, graph: SceneGraph | None, events: Events | None = None) -> Truth:
        g = _present(graph, self.a, self.b)
        if g is None:
            return Truth.U
        return Truth.of(_planar(g.nodes[self.a], g.nodes[self.b]) <= self.d + 1e-12)

    def describe(self) -> str:
        return f"{self.a} within {self.d:g} m of {self.b}"

    def to_json(self) -> dict[str, Any]:
        return {"near": [self.a, self.b, self.d]}

    def ids(self) -> frozenset[str]:
        return frozenset((self.a, self.b))


def _planar(p: Node, q: Node) -> float:
    return math.hypot(p.pos[0] - q.pos[0], p.pos[1] - q.pos[1])
