"""Region observations computed from scene graphs: a fixed anchor image plus a fresh delta.

The image of a region is captured once (its content is what the region held then), and every
later query returns that same image id with a delta recomputed against the *initial* world
(spec B.4): objects that left the region are reported removed with no destination, objects
that arrived are reported with their location, and container and appliance states that differ
from the start are listed.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.contracts._belief import Delta, Region, RegionObservation
from sim.world import SceneGraph


def location(g: SceneGraph, obj: str) -> str | None:
    """The gripper, else the direct support, else the innermost container; None if loose."""
    if g.holds("held", obj, "gripper"):
        return "gripper"
    support = g.support(obj)
    if support is not None:
        return support
    boxes = g.inside(obj)
    if not boxes:
        return None
    return max(boxes, key=lambda b: (len(g.inside(b)), b))


def in_region(g: SceneGraph, obj: str, region: Region) -> bool:
    """Whether ``obj`` is in the region: at a covered location, or resting (through a chain of
    supports) on one. Containers are their own places: what is inside a drawer standing on the
    counter is in the drawer's region, not the counter's."""
    current = obj
    seen: set[str] = set()
    while current not in seen:
        seen.add(current)
        where = location(g, current)
        if where is None:
            return False
        if region.covers(where):
            return True
        if g.support(current) != where:  # held or inside: the chain of supports ends here
            return False
        current = where
    return False


def _state(g: SceneGraph, x: str) -> dict[str, str]:
    node = g.nodes[x]
    out = {}
    if node.has("openable"):
        out["open"] = "open" if g.is_open(x) else "closed"
    if node.has("switchable"):
        out["on"] = "on" if node.attrs.get("on") else "off"
    return out


def region_delta(region: Region, initial: SceneGraph, current: SceneGraph) -> Delta:
    """What an observation of ``region`` reports now, relative to the initial world."""
    located: dict[str, str] = {}
    removed: set[str] = set()
    states: dict[str, str] = {}
    for obj in sorted(set(initial.nodes) | set(current.nodes)):
        if region.covers(obj):
            continue
        was = obj in initial.nodes and in_region(initial, obj, region)
        now = obj in current.nodes and in_region(current, obj, region)
        if was and not now:
            removed.add(obj)
        elif now:
            where = location(current, obj)
            if where is not None and (not was or where != location(initial, obj)):
                located[obj] = where
    for x in sorted(current.nodes):
        if x in initial.nodes and (region.covers(x) or in_region(current, x, region)):
            before, after = _state(initial, x), _state(current, x)
            changed = [v for k, v in after.items() if before.get(k) != v]
            if changed:
                states[x] = changed[0] if len(changed) == 1 else ",".join(changed)
    return Delta(located, frozenset(removed), states)


@dataclass(frozen=True)
class RegionAnchor:
    """A region's recorded image: captured once, reused by every later query."""

    region: Region
    image_id: str
    visible: frozenset[str]

    @staticmethod
    def capture(region: Region, image_id: str, graph: SceneGraph) -> RegionAnchor:
        shown = frozenset(
            k
            for k, n in graph.nodes.items()
            if n.visible and not region.covers(k) and in_region(graph, k, region)
        )
        return RegionAnchor(region, image_id, shown)

    def query(self, initial: SceneGraph, current: SceneGraph) -> RegionObservation:
        """The same image with the delta as of ``current``."""
        return RegionObservation(
            self.region, self.image_id, self.visible, region_delta(self.region, initial, current)
        )
