"""The agent's belief store: where it thinks things are, kept apart from the world state.

Ego2World's memory variable (spec B.4, B.5, C.2.9) is what the *agent* retains, not what is
true: the world always persists across groups, the belief persists only under the
``persistent`` policy. Belief changes through observations and accepted actions only; a
rejection message does not correct it fact by fact.

An observation of a region is a recorded image (fixed anchor time, so it can be stale) plus a
symbolic delta relative to the initial world. When they disagree the delta wins: an explicit
removal overrides the object's presence in the image, and a destination nobody observed stays
``unknown``. Re-querying a region reuses the same image with an updated delta.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from sim.world import Verb, Verdict

UNKNOWN = "unknown"
Retention = Literal["persistent", "reset_at_group_boundary"]


@dataclass(frozen=True)
class Region:
    """A named observable region and the location ids (supports, containers) it covers."""

    name: str
    members: frozenset[str]

    def covers(self, location: str) -> bool:
        return location == self.name or location in self.members


@dataclass(frozen=True)
class Delta:
    """Changes in a region relative to the initial world, as an observation reports them.

    ``located``: objects now observed in the region and where; ``removed``: objects that left
    it, destination not revealed; ``states``: containers and appliances ("open", "on", …).
    """

    located: Mapping[str, str] = field(default_factory=dict)
    removed: frozenset[str] = frozenset()
    states: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RegionObservation:
    region: Region
    image_id: str
    visible: frozenset[str]  # objects shown in the recorded image
    delta: Delta


@dataclass(frozen=True)
class Fact:
    """One believed value and where it came from ("image:<id>", "delta:<region>", "action:<verb>").

    ``absent_from`` records a region the object is known *not* to be in (a removal delta).
    """

    value: str
    source: str
    absent_from: str | None = None


@dataclass(frozen=True)
class Belief:
    policy: Retention = "persistent"
    locations: Mapping[str, Fact] = field(default_factory=dict)
    states: Mapping[str, Fact] = field(default_factory=dict)
    conflicts: int = 0  # image–delta disagreements seen (a counter, survives resets)

    @property
    def empty(self) -> bool:
        return not self.locations and not self.states

    def location(self, obj: str) -> str:
        fact = self.locations.get(obj)
        return UNKNOWN if fact is None else fact.value

    def remembers(self, obj: str) -> bool:
        return self.location(obj) != UNKNOWN

    def needs_visual_query(self, target: str, visible: Iterable[str]) -> bool:
        """Query only for a target neither visible now nor remembered (B.5)."""
        return target not in set(visible) and not self.remembers(target)

    def observe(self, obs: RegionObservation) -> Belief:
        """Fold one region observation in; the delta wins over the image."""
        region, delta = obs.region, obs.delta
        from_delta = f"delta:{region.name}"
        locs = dict(self.locations)
        conflicts = self.conflicts
        for obj in sorted(obs.visible):
            if obj in delta.removed:
                conflicts += 1
            elif obj not in delta.located:
                locs[obj] = Fact(region.name, f"image:{obs.image_id}")
        for obj, where in sorted(delta.located.items()):
            locs[obj] = Fact(where, from_delta)
        for obj in sorted(delta.removed):
            known = self.location(obj)
            if known == UNKNOWN or region.covers(known):
                locs[obj] = Fact(UNKNOWN, from_delta, absent_from=region.name)
        states = dict(self.states)
        states.update({x: Fact(s, from_delta) for x, s in sorted(delta.states.items())})
        return replace(self, locations=locs, states=states, conflicts=conflicts)

    def on_accepted(self, verdict: Verdict) -> Belief:
        """What an accepted action tells the agent; a rejection changes nothing."""
        grounded = verdict.grounded
        if not verdict.accepted or grounded is None or grounded.obj is None:
            return self
        verb, obj = verdict.action.verb, grounded.obj
        source = f"action:{verb.value}"
        if verb is Verb.PICK:
            return replace(self, locations={**self.locations, obj: Fact("gripper", source)})
        if verb is Verb.PLACE and grounded.target:
            return replace(self, locations={**self.locations, obj: Fact(grounded.target, source)})
        state = {
            Verb.OPEN: "open",
            Verb.CLOSE: "closed",
            Verb.TURN_ON: "on",
            Verb.TURN_OFF: "off",
        }.get(verb)
        if state is None:
            return self
        return replace(self, states={**self.states, obj: Fact(state, source)})

    def group_boundary(self) -> Belief:
        """Keep everything (persistent, no age expiry) or discard it (reset)."""
        if self.policy == "persistent":
            return self
        return Belief(self.policy, conflicts=self.conflicts)
