"""Event and compound predicates: accepted actions, and Kleene ``not`` / ``all`` / ``any``.

Kept apart from the state predicates because these are the only ones that read the event log
(``Accepted``) or recurse into other predicates; both facts decide what a contract kind may hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sim.contracts._predicates import Events, Predicate
from sim.contracts._truth import Event, Truth, t_all, t_any, t_not
from sim.world import SceneGraph


@dataclass(frozen=True)
class Accepted(Predicate):
    """An action with this verb and bindings was accepted during the task (event contract)."""

    verb: str
    obj: str
    target: str | None = None

    def evaluate(self, graph: SceneGraph | None, events: Events | None = None) -> Truth:
        if events is None:
            return Truth.U
        return Truth.of(any(self.matches(e) for e in events))

    def matches(self, event: Event) -> bool:
        return (
            event.verb == self.verb
            and event.obj == self.obj
            and (self.target is None or event.target == self.target)
        )

    def describe(self) -> str:
        onto = f" → {self.target}" if self.target else ""
        return f"accepted {self.verb} {self.obj}{onto}"

    def to_json(self) -> dict[str, Any]:
        body = {"verb": self.verb, "obj": self.obj}
        if self.target is not None:
            body["target"] = self.target
        return {"accepted": body}

    def ids(self) -> frozenset[str]:
        return frozenset(i for i in (self.obj, self.target) if i is not None)

    def uses_events(self) -> bool:
        return True


@dataclass(frozen=True)
class Not(Predicate):
    """Kleene negation: not UNKNOWN is UNKNOWN."""

    part: Predicate

    def evaluate(self, graph: SceneGraph | None, events: Events | None = None) -> Truth:
        return t_not(self.part.evaluate(graph, events))

    def describe(self) -> str:
        return f"not ({self.part.describe()})"

    def to_json(self) -> dict[str, Any]:
        return {"not": self.part.to_json()}

    def ids(self) -> frozenset[str]:
        return self.part.ids()

    def uses_events(self) -> bool:
        return self.part.uses_events()


@dataclass(frozen=True)
class AllOf(Predicate):
    """Kleene conjunction: FALSE if any part is FALSE, else UNKNOWN if any is UNKNOWN."""

    parts: tuple[Predicate, ...]

    def evaluate(self, graph: SceneGraph | None, events: Events | None = None) -> Truth:
        return t_all(p.evaluate(graph, events) for p in self.parts)

    def describe(self) -> str:
        return "all of: " + "; ".join(p.describe() for p in self.parts)

    def to_json(self) -> dict[str, Any]:
        return {"all": [p.to_json() for p in self.parts]}

    def ids(self) -> frozenset[str]:
        return frozenset().union(*(p.ids() for p in self.parts))

    def uses_events(self) -> bool:
        return any(p.uses_events() for p in self.parts)


@dataclass(frozen=True)
class AnyOf(Predicate):
    """Kleene disjunction: TRUE if any part is TRUE, else UNKNOWN if any is UNKNOWN."""

    parts: tuple[Predicate, ...]

    def evaluate(self, graph: SceneGraph | None, events: Events | None = None) -> Truth:
        return t_any(p.evaluate(graph, events) for p in self.parts)

    def describe(self) -> str:
        return "any of: " + "; ".join(p.describe() for p in self.parts)

    def to_json(self) -> dict[str, Any]:
        return {"any": [p.to_json() for p in self.parts]}

    def ids(self) -> frozenset[str]:
        return frozenset().union(*(p.ids() for p in self.parts))

    def uses_events(self) -> bool:
        return any(p.uses_events() for p in self.parts)
