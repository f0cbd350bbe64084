"""Frozen task contracts and their evaluation into per-condition TRUE / FALSE / UNKNOWN.

A contract is what a task is scored against, so it is a value: frozen, serialisable, and
identified by the sha256 of its canonical JSON (stored as ``task.contract_hash``). Two kinds
(Ego2World B.6): ``terminal_state`` reads only the graph at the end of the task; ``accepted_event``
requires that specific grounded operations were accepted during the task, for goals the world
state does not represent.

Each condition also gets a *transition witness* when a trace is available: the tick at which it
last became TRUE, so the contract panel can point at the step that made it hold.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, cast

from sim.contracts._compound import Accepted
from sim.contracts._parse import ContractError, parse_predicate
from sim.contracts._predicates import Predicate
from sim.contracts._truth import Event, Truth, satisfied
from sim.world import SceneGraph

ContractKind = Literal["terminal_state", "accepted_event"]
CONTRACT_KINDS: tuple[ContractKind, ...] = ("terminal_state", "accepted_event")


@dataclass(frozen=True)
class Contract:
    """Predicates plus optional weights and required gates (all conditions when ``None``)."""

    kind: ContractKind
    predicates: tuple[Predicate, ...]
    weights: tuple[float, ...] | None = None
    required: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        problem = _problem(self)
        if problem:
            raise ContractError(f"contract: {problem}")

    @property
    def gates(self) -> tuple[int, ...]:
        """Indices that must all be TRUE for success."""
        return tuple(range(len(self.predicates))) if self.required is None else self.required

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "predicates": [p.to_json() for p in self.predicates],
        }
        if self.weights is not None:
            out["weights"] = list(self.weights)
        if self.required is not None:
            out["required"] = list(self.required)
        return out

    @staticmethod
    def from_json(
        d: Any, *, where: str = "contract", known_ids: Collection[str] | None = None
    ) -> Contract:
        """Parse a scenario file's contract; errors name the field path under ``where``."""
        if not isinstance(d, Mapping):
            raise ContractError(f"{where}: expected an object, got {type(d).__name__}")
        unknown = sorted(set(d) - {"kind", "predicates", "weights", "required"})
        if unknown:
            raise ContractError(f"{where}: unknown field(s) {', '.join(map(str, unknown))}")
        kind = d.get("kind")
        if kind not in CONTRACT_KINDS:
            raise ContractError(
                f"{where}.kind: expected one of {', '.join(CONTRACT_KINDS)}, got {kind!r}"
            )
        raw = d.get("predicates")
        if not isinstance(raw, list) or not raw:
            raise ContractError(f"{where}.predicates: expected a non-empty list")
        preds = tuple(
            parse_predicate(p, where=f"{where}.predicates[{i}]", known_ids=known_ids)
            for i, p in enumerate(raw)
        )
        _check_kind(cast(ContractKind, kind), preds, where)
        weights = None if d.get("weights") is None else _numbers(d["weights"], f"{where}.weights")
        required = None
        if d.get("required") is not None:
            req = d["required"]
            if not isinstance(req, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) for i in req
            ):
                raise ContractError(f"{where}.required: expected a list of predicate indices")
            required = tuple(sorted(req))
        try:
            return Contract(cast(ContractKind, kind), preds, weights, required)
        except ContractError as err:
            raise ContractError(str(err).replace("contract:", f"{where}:", 1)) from None

    @cached_property
    def canonical_json(self) -> str:
        """The contract as stored with an episode: the exact text :attr:`digest` covers."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @cached_property
    def digest(self) -> str:
        """sha256 of the canonical JSON: the frozen identity of the contract."""
        return hashlib.sha256(self.canonical_json.encode()).hexdigest()

    def describe(self) -> list[str]:
        gates = set(self.gates)
        return [
            f"[{i}] {p.describe()}" + ("" if i in gates else " (not required)")
            for i, p in enumerate(self.predicates)
        ]


def _problem(c: Contract) -> str | None:
    n = len(c.predicates)
    if c.kind not in CONTRACT_KINDS:
        return f"kind must be one of {', '.join(CONTRACT_KINDS)}, got {c.kind!r}"
    if n == 0:
        return "needs at least one predicate"
    uses = [p.uses_events() for p in c.predicates]
    if c.kind == "terminal_state" and any(uses):
        return f"predicates[{uses.index(True)}]: 'accepted' in a terminal_state contract"
    if c.kind == "accepted_event" and not any(uses):
        return "accepted_event contract without an 'accepted' predicate"
    if c.weights is not None:
        if len(c.weights) != n:
            return f"weights: {len(c.weights)} weights for {n} predicates"
        if any(w < 0 for w in c.weights) or sum(c.weights) <= 0:
            return "weights: must be non-negative with a positive sum"
    if c.required is not None:
        if not c.required:
            return "required: empty (omit it to require every predicate)"
        bad = [i for i in c.required if not 0 <= i < n]
        if bad:
            return f"required: index {bad[0]} out of range (0–{n - 1})"
        if len(set(c.required)) != len(c.required):
            return "required: repeated index"
    return None


def _check_kind(kind: ContractKind, preds: Sequence[Predicate], where: str) -> None:
    """Terminal contracts read the state only; event contracts must name an accepted event."""
    uses = [p.uses_events() for p in preds]
    if kind == "terminal_state" and any(uses):
        i = uses.index(True)
        raise ContractError(
            f"{where}.predicates[{i}]: a terminal_state contract reads only the final state; "
            "'accepted' belongs in an accepted_event contract"
        )
    if kind == "accepted_event" and not any(uses):
        raise ContractError(
            f"{where}.kind: accepted_event contract without an 'accepted' predicate"
        )


def _numbers(value: Any, where: str) -> tuple[float, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in value
    ):
        raise ContractError(f"{where}: expected a list of numbers")
    return tuple(float(v) for v in value)


@dataclass(frozen=True)
class ConditionResult:
    index: int
    predicate_text: str
    value: Truth
    witness_tick: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "predicate": self.predicate_text,
            "value": self.value.value,
            "witness_tick": self.witness_tick,
        }


@dataclass(frozen=True)
class ContractResult:
    """Per-condition values of one contract; UNKNOWN never counts as satisfied."""

    kind: ContractKind
    digest: str
    conditions: tuple[ConditionResult, ...]
    required: tuple[int, ...]
    weights: tuple[float, ...] | None = None

    @property
    def values(self) -> tuple[Truth, ...]:
        return tuple(c.value for c in self.conditions)

    @property
    def satisfied(self) -> bool:
        """Every required condition TRUE (the binary contract, before the run status)."""
        return all(satisfied(self.conditions[i].value) for i in self.required)

    @property
    def n_true(self) -> int:
        return sum(satisfied(v) for v in self.values)

    @property
    def fraction(self) -> float:
        """TRUE conditions over all conditions (the unweighted g_t of a completed run)."""
        return self.n_true / len(self.conditions)

    @property
    def score(self) -> float:
        """Weighted share of TRUE conditions, renormalised over the weights' sum."""
        if self.weights is None:
            return self.fraction
        hit = sum(w for w, v in zip(self.weights, self.values, strict=True) if satisfied(v))
        return hit / sum(self.weights)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "digest": self.digest,
            "satisfied": self.satisfied,
            "conditions": [c.to_json() for c in self.conditions],
        }


Frames = Sequence[tuple[int, SceneGraph]]


def evaluate(
    contract: Contract,
    final_graph: SceneGraph | None,
    accepted_events: Sequence[Event] | None,
    *,
    frames: Frames | None = None,
) -> ContractResult:
    """Evaluate every condition on the final graph and the task's accepted events.

    ``accepted_events=None`` means the log is unavailable (event conditions are UNKNOWN), not
    that nothing was accepted (pass ``[]`` for that). With ``frames`` (tick, graph) of the task,
    each TRUE condition gets its witness tick; without them only bare ``accepted`` conditions do
    (the tick of the first matching event).
    """
    out = []
    for i, p in enumerate(contract.predicates):
        value = p.evaluate(final_graph, accepted_events)
        tick = None
        if value is Truth.T:
            if frames is not None:
                tick = witness_tick(_series(p, frames, accepted_events))
            elif isinstance(p, Accepted) and accepted_events is not None:
                tick = next((e.tick for e in accepted_events if p.matches(e)), None)
        out.append(ConditionResult(i, p.describe(), value, tick))
    return ContractResult(
        contract.kind, contract.digest, tuple(out), contract.gates, contract.weights
    )


def _series(
    p: Predicate, frames: Frames, events: Sequence[Event] | None
) -> Iterable[tuple[int, Truth]]:
    for tick, graph in frames:
        seen = None if events is None else [e for e in events if e.tick is None or e.tick <= tick]
        yield tick, p.evaluate(graph, seen)


def witness_tick(series: Iterable[tuple[int, Truth]]) -> int | None:
    """The tick at which the value last became TRUE, or None if it does not end TRUE.

    ``series`` is (tick, value) in tick order. A condition TRUE from the first tick has that
    tick as witness; one that became TRUE, was undone and re-achieved has the re-achieving tick.
    """
    start: int | None = None
    for tick, value in series:
        if value is not Truth.T:
            start = None
        elif start is None:
            start = tick
    return start
