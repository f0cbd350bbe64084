"""World versus the agent's belief at a tick: what the agent thought that was not so.

Compared per object: where it is (its relations), its attributes (``open`` 0.0 against 1.0),
and objects one side has and the other lacks. Positions are not compared: a belief says what
is where, not to the millimetre.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sim.world import SceneGraph


@dataclass(frozen=True)
class Mismatch:
    obj: str
    what: str  # "where", an attribute's name, or "exists"
    world: str
    belief: str


def _fmt(v: Any) -> str:
    return "—" if v is None else (f"{v:g}" if isinstance(v, float) else str(v))


def mismatches(world: SceneGraph, belief: SceneGraph) -> list[Mismatch]:
    out: list[Mismatch] = []
    where_w: dict[str, set[str]] = {}
    where_b: dict[str, set[str]] = {}
    for rels, into in ((world.relations, where_w), (belief.relations, where_b)):
        for kind, a, b in rels:
            into.setdefault(a, set()).add(f"{kind} {b}".strip())
    for k in sorted(set(world.nodes) | set(belief.nodes)):
        wn, bn = world.nodes.get(k), belief.nodes.get(k)
        if wn is None or bn is None:
            out.append(Mismatch(k, "exists", "yes" if wn else "no", "yes" if bn else "no"))
            continue
        ww, bb = sorted(where_w.get(k, set())), sorted(where_b.get(k, set()))
        if ww != bb:
            out.append(Mismatch(k, "where", ", ".join(ww) or "—", ", ".join(bb) or "—"))
        for name in sorted(set(wn.attrs) & set(bn.attrs)):
            x, y = wn.attrs[name], bn.attrs[name]
            same = abs(float(x) - float(y)) < 1e-6 if _num(x) and _num(y) else x == y
            if not same:
                out.append(Mismatch(k, name, _fmt(x), _fmt(y)))
    return out


def _num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)
