"""Parse predicates from the JSON-able dicts of scenario files, with errors that name the field.

A scenario author reads ``goal.predicates[2].stack[3]: unknown object 'chese' — did you mean
'cheese'?`` and can fix the file without reading this code. Unknown object ids are caught here,
at load time, when the scene's ids are known; otherwise a typo would only surface as a contract
that silently evaluates to UNKNOWN.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Mapping
from typing import Any

from annotation import UserError
from sim.contracts._compound import Accepted, AllOf, AnyOf, Not
from sim.contracts._predicates import (
    COMPARISONS,
    AttrCmp,
    Held,
    In,
    Near,
    On,
    OnState,
    Open,
    Predicate,
    Stack,
)
from sim.world import Verb


class ContractError(UserError, ValueError):
    """A contract or predicate in a scenario file that is malformed; the message has the path."""


_Parser = Callable[[Any, str, "Collection[str] | None"], Predicate]


def parse_predicate(
    d: Any, *, where: str = "predicate", known_ids: Collection[str] | None = None
) -> Predicate:
    """The predicate ``d`` describes; ``where`` is its path in the file, used in every error."""
    if not isinstance(d, Mapping) or len(d) != 1:
        raise ContractError(
            f"{where}: expected an object with exactly one key ({_known()}), got {_show(d)}"
        )
    ((key, body),) = d.items()
    parser = _PARSERS.get(str(key))
    if parser is None:
        raise ContractError(f"{where}: unknown predicate {key!r} ({_known()})")
    return parser(body, f"{where}.{key}", known_ids)


def _known() -> str:
    return "known: " + ", ".join(_PARSERS)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _obj(value: Any, where: str, known: Collection[str] | None) -> str:
    if not isinstance(value, str) or not value:
        raise ContractError(
            f"{where}: expected an object id (a non-empty string), got {_show(value)}"
        )
    if known is not None and value not in known:
        close = difflib.get_close_matches(value, sorted(known), n=1)
        hint = f" — did you mean {close[0]!r}?" if close else ""
        listed = sorted(known)
        shown = ", ".join(listed[:12]) + (", …" if len(listed) > 12 else "")
        raise ContractError(f"{where}: unknown object {value!r}{hint} (known: {shown})")
    return value


def _args(body: Any, where: str, shape: str, n: int) -> list[Any]:
    if not isinstance(body, list) or len(body) != n:
        raise ContractError(f"{where}: expected [{shape}], got {_show(body)}")
    return body


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ContractError(f"{where}: expected a number, got {_show(value)}")
    return float(value)


def _pair(cls: Callable[[str, str], Predicate], shape: str) -> _Parser:
    def parse(body: Any, where: str, known: Collection[str] | None) -> Predicate:
        a, b = _args(body, where, shape, 2)
        return cls(_obj(a, f"{where}[0]", known), _obj(b, f"{where}[1]", known))

    return parse


def _single(cls: Callable[[str], Predicate]) -> _Parser:
    def parse(body: Any, where: str, known: Collection[str] | None) -> Predicate:
        return cls(_obj(body, where, known))

    return parse


def _on_state(body: Any, where: str, known: Collection[str] | None) -> Predicate:
    x, want = _args(body, where, "switch, true|false", 2)
    if not isinstance(want, bool):
        raise ContractError(f"{where}[1]: expected true or false, got {_show(want)}")
    return OnState(_obj(x, f"{where}[0]", known), want)


def _attr(body: Any, where: str, known: Collection[str] | None) -> Predicate:
    x, name, op, value = _args(body, where, "object, attribute, op, value", 4)
    if not isinstance(name, str) or not name:
        raise ContractError(f"{where}[1]: expected an attribute name, got {_show(name)}")
    if op not in COMPARISONS:
        raise ContractError(
            f"{where}[2]: unknown comparison {op!r} (known: {', '.join(COMPARISONS)})"
        )
    if op == "==":
        if not isinstance(value, bool | int | float | str):
            raise ContractError(
                f"{where}[3]: expected a number, true/false or text, got {_show(value)}"
            )
        if isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
    else:
        value = _number(value, f"{where}[3]")
    return AttrCmp(_obj(x, f"{where}[0]", known), name, op, value)


def _stack(body: Any, where: str, known: Collection[str] | None) -> Predicate:
    if not isinstance(body, list) or len(body) < 2:
        raise ContractError(
            f"{where}: expected [base, first, second, …] bottom to top, got {_show(body)}"
        )
    ids = [_obj(v, f"{where}[{i}]", known) for i, v in enumerate(body)]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise ContractError(f"{where}: {', '.join(twice)} appears more than once")
    return Stack(ids[0], tuple(ids[1:]))


def _near(body: Any, where: str, known: Collection[str] | None) -> Predicate:
    a, b, d = _args(body, where, "object, object, metres", 3)
    dist = _number(d, f"{where}[2]")
    if dist <= 0:
        raise ContractError(f"{where}[2]: distance must be positive metres, got {_show(d)}")
    return Near(_obj(a, f"{where}[0]", known), _obj(b, f"{where}[1]", known), dist)


def _accepted(body: Any, where: str, known: Collection[str] | None) -> Predicate:
    if not isinstance(body, Mapping):
        raise ContractError(f"{where}: expected {{verb, obj[, target]}}, got {_show(body)}")
    unknown = sorted(set(body) - {"verb", "obj", "target"})
    if unknown:
        raise ContractError(f"{where}: unknown field(s) {', '.join(map(str, unknown))}")
    verbs = [v.value for v in Verb]
    verb = body.get("verb")
    if verb not in verbs:
        raise ContractError(f"{where}.verb: expected one of {', '.join(verbs)}, got {_show(verb)}")
    obj = _obj(body.get("obj"), f"{where}.obj", known)
    target = body.get("target")
    if target is not None:
        target = _obj(target, f"{where}.target", known)
    return Accepted(str(verb), obj, target)


def _not(body: Any, where: str, known: Collection[str] | None) -> Predicate:
    return Not(parse_predicate(body, where=where, known_ids=known))


def _many(cls: Callable[[tuple[Predicate, ...]], Predicate]) -> _Parser:
    def parse(body: Any, where: str, known: Collection[str] | None) -> Predicate:
        if not isinstance(body, list) or not body:
            raise ContractError(
                f"{where}: expected a non-empty list of predicates, got {_show(body)}"
            )
        return cls(
            tuple(
                parse_predicate(p, where=f"{where}[{i}]", known_ids=known)
                for i, p in enumerate(body)
            )
        )

    return parse


_PARSERS: dict[str, _Parser] = {
    "on": _pair(On, "object, support"),
    "in": _pair(In, "object, container"),
    "held": _single(Held),
    "open": _single(lambda x: Open(x, True)),
    "closed": _single(lambda x: Open(x, False)),
    "on_state": _on_state,
    "attr": _attr,
    "stack": _stack,
    "near": _near,
    "accepted": _accepted,
    "not": _not,
    "all": _many(AllOf),
    "any": _many(AnyOf),
}
