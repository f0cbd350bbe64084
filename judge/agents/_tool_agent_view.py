"""What the tool agent may see and remember: the local view, belief records, executor feedback.

The harness holds the world's scene graph (the executor's side of the loop); everything here
cuts it down to what a robot standing at the table could perceive: visible objects only
(nothing shut inside a closed container), their type, colour, affordances, open/on states and
the relations among visible objects. Positions, hidden attributes, the task contract and the
anomaly schedule never pass through here: the agent is never given them at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sim.contracts import Belief, Delta, Fact, Region, RegionObservation, in_region, location
from sim.world import Action, ActionFormatError, SceneGraph, Verdict, parse_command

SCENE = "scene"  # the region name of an unrestricted observation


class ViewError(ValueError):
    """An observation the harness cannot give (unknown or hidden region); told to the model."""


def _visible(g: SceneGraph) -> list[str]:
    return sorted(k for k, n in g.nodes.items() if n.visible)


def local_view(g: SceneGraph, region: str | None = None) -> dict[str, Any]:
    """The visible part of ``g`` (optionally one support's or container's region) as JSON."""
    shown = _visible(g)
    if region is not None:
        if region not in shown:
            raise ViewError(f"no visible support or container {region!r} to look at")
        scope = Region(region, frozenset({region}))
        shown = [k for k in shown if k == region or in_region(g, k, scope)]
    ids = set(shown)
    objects = []
    for k in shown:
        n = g.nodes[k]
        item: dict[str, Any] = {"id": k, "type": n.type, "tags": sorted(n.tags)}
        if n.color:
            item["color"] = n.color
        if n.has("openable"):
            item["open"] = g.is_open(k)
        if n.has("switchable"):
            item["on"] = bool(n.attrs.get("on", False))
        objects.append(item)
    relations = sorted(
        [kind, a, b]
        for kind, a, b in g.relations
        if a in ids and (b in ids or b in ("", "gripper"))
    )
    return {
        "tick": g.tick,
        "region": region or SCENE,
        "holding": g.held() if g.held() in ids else None,
        "objects": objects,
        "relations": relations,
    }


def observed(view: Mapping[str, Any], g: SceneGraph, belief: Belief) -> RegionObservation:
    """The view as a region observation for the belief store (B.4/B.5 rules).

    Every object seen is *located*; an object the belief puts at a place now in view (and not
    a closed container) but not seen there is *removed*, destination unknown; open and on
    states of what is seen are *states*. No image is involved in symbolic mode, so there is
    nothing for the delta to conflict with.
    """
    seen = {o["id"] for o in view["objects"]}
    located = {k: where for k in sorted(seen) if (where := location(g, k)) is not None}
    places = {k for k in seen if not (g.nodes[k].has("openable") and not g.is_open(k))}
    if view["region"] == SCENE:
        places.add("gripper")  # the whole view shows the gripper too
    removed = frozenset(
        obj for obj, fact in belief.locations.items() if obj not in located and fact.value in places
    )
    states: dict[str, str] = {}
    for o in view["objects"]:
        if "open" in o:
            states[o["id"]] = "open" if o["open"] else "closed"
        if "on" in o:
            states[o["id"]] = "on" if o["on"] else "off"
    region = Region(str(view["region"]), frozenset(places))
    return RegionObservation(region, f"view@{view['tick']}", frozenset(),
                             Delta(located, removed, states))  # fmt: skip


def belief_json(b: Belief) -> dict[str, Any]:
    def facts(m: Mapping[str, Fact]) -> dict[str, dict[str, Any]]:
        return {
            k: {"value": f.value, "source": f.source}
            | ({"absent_from": f.absent_from} if f.absent_from else {})
            for k, f in sorted(m.items())
        }

    return {
        "policy": b.policy,
        "locations": facts(b.locations),
        "states": facts(b.states),
        "conflicts": b.conflicts,
    }


def belief_from_json(d: Mapping[str, Any]) -> Belief:
    def facts(m: Mapping[str, Any]) -> dict[str, Fact]:
        return {k: Fact(v["value"], v["source"], v.get("absent_from")) for k, v in m.items()}

    policy = d["policy"]
    if policy not in ("persistent", "reset_at_group_boundary"):
        raise ValueError(f"belief policy {policy!r}")
    return Belief(policy, facts(d["locations"]), facts(d["states"]), int(d["conflicts"]))


def parse_act(args: Mapping[str, Any]) -> Action:
    """The action an ``act`` call names; :class:`ActionFormatError` if it names none.

    Parsing is structural only (spec C.2.7): no reference is resolved or corrected here.
    """
    if "command" in args:
        return parse_command(str(args["command"]))
    if "action" in args and isinstance(args["action"], Mapping):
        return Action.from_json(args["action"])
    raise ActionFormatError("act needs a 'command' or an 'action'")


def verdict_json(v: Verdict) -> dict[str, Any]:
    """Executor feedback as the model gets it: accepted, the grounded ids, or the failed checks."""
    out: dict[str, Any] = {"action": v.action.describe(), "accepted": v.accepted}
    if v.grounded is not None and v.accepted:
        out["grounded"] = {k: x for k, x in v.grounded.to_json().items() if x}
    if v.failed:
        out["failed"] = [{"check": c.name, "message": c.message} for c in v.failed]
    return out
