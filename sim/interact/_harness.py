"""The harness: fires scheduled events, holds the user's queue during errors, resolves them.

Each tick, :meth:`Harness.step` evaluates the triggers of events not yet fired (at most once
each). An error fires only when no other error holds the queue, so intervention windows stay
apart; questions also wait for a running error to end. A fired error's record gets its
trigger tick, then its commit tick (the point of no return), and a resolution with its tick:

- ``accepted`` — the user accepted the assistant's guidance (it gets its queue back);
- ``completed`` — the enqueued mistake was carried out (or ``complete`` held);
- ``cancelled`` — ``cancel`` held; ``timeout`` — ``max_duration`` passed;
- ``episode_end`` — still active when the episode ended; ``not_reached`` — never triggered.

:class:`History` is the harness's record of what the user actually did, from which questions'
reference answers are derived (only completed actions count).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sim.contracts import Event, Truth
from sim.interact._schedule import Schedule, ScheduledEvent
from sim.world import SceneGraph
from storage import EventStatus, Resolution

_PAST = {
    "pick": "picked up",
    "place": "put down",
    "open": "opened",
    "close": "closed",
    "turn_on": "turned on",
    "turn_off": "turned off",
    "push": "pushed",
}


@dataclass
class EventState:
    """The runtime record of one scheduled event (stored with the episode)."""

    status: EventStatus = "pending"
    trigger_tick: int | None = None
    commit_tick: int | None = None
    resolve_tick: int | None = None
    resolution: Resolution | None = None
    accept_tick: int | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @staticmethod
    def from_json(d: dict[str, Any]) -> EventState:
        return EventState(**d)


@dataclass
class History:
    """Completed actions and cooking sessions, as the world recorded them."""

    done: list[tuple[int, str, str | None, str | None]] = field(default_factory=list)
    cooking_since: dict[str, int] = field(default_factory=dict)
    cooked: dict[str, float] = field(default_factory=dict)

    def finished(self, tick: int, verb: str, obj: str | None, target: str | None) -> None:
        self.done.append((tick, verb, obj, target))

    def observe(self, graph: SceneGraph) -> None:
        """Track when each item started cooking (its ``cooked`` level rising)."""
        for k, node in graph.nodes.items():
            if "cookable" not in node.tags:  # (node.has inlined: this runs every tick)
                continue
            level = float(node.attrs.get("cooked", 0.0))
            before = self.cooked.get(k, level)
            if level > before:
                self.cooking_since.setdefault(k, graph.tick - 1)
            elif k in self.cooking_since:
                del self.cooking_since[k]
            self.cooked[k] = level

    def count(self, verb: str, obj: str) -> int:
        return sum(1 for _, v, o, _ in self.done if v == verb and o == obj)

    def first(self, verb: str, obj: str) -> int | None:
        return next((t for t, v, o, _ in self.done if v == verb and o == obj), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "done": [list(d) for d in self.done],
            "cooking_since": dict(self.cooking_since),
            "cooked": dict(self.cooked),
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> History:
        return History(
            [(int(a), str(b), c, e) for a, b, c, e in d["done"]],
            {k: int(v) for k, v in d["cooking_since"].items()},
            {k: float(v) for k, v in d["cooked"].items()},
        )


def question_text(ev: ScheduledEvent) -> str:
    """The user's words for a question or request, from the spec's ``say`` or a template."""
    s = ev.spec
    if s.say:
        return s.say
    a = s.about
    if s.category == "request":
        return f"Tell me when the {a['item']} is done."
    if s.family == "duration":
        return f"How long has the {a['item']} been cooking?"
    if s.family == "count":
        return f"How many times have I {_PAST.get(a['verb'], a['verb'])} the {a['obj']}?"
    if s.family == "recall":
        return f"Did I already {_PAST.get(a['verb'], a['verb'])} the {a['obj']}?"
    b = s.then
    first = f"{_PAST.get(a['verb'], a['verb'])} the {a['obj']}"
    second = f"{_PAST.get(b['verb'], b['verb'])} the {b['obj']}"
    return f"Did I {first} before I {second}?"


def reference_answer(ev: ScheduledEvent, history: History, tick: int) -> int | bool | None:
    """The true answer at ``tick``: a count, a duration in ticks, or yes/no."""
    s, a = ev.spec, ev.spec.about
    if s.family == "duration":
        since = history.cooking_since.get(a["item"])
        return None if since is None else tick - since
    if s.family == "count":
        return history.count(a["verb"], a["obj"])
    if s.family == "recall":
        return history.first(a["verb"], a["obj"]) is not None
    t1 = history.first(a["verb"], a["obj"])
    t2 = history.first(s.then["verb"], s.then["obj"])
    return t1 is not None and (t2 is None or t1 < t2)


class Harness:
    """Fires and resolves a :class:`Schedule`'s events (see the module docstring)."""

    def __init__(self, schedule: Schedule) -> None:
        self.schedule = schedule
        self.states = [EventState() for _ in schedule.events]
        self.holding: int | None = None  # the active error (one at a time)
        self.history = History()

    @property
    def events(self) -> tuple[ScheduledEvent, ...]:
        return self.schedule.events

    def active_error(self) -> ScheduledEvent | None:
        return None if self.holding is None else self.events[self.holding]

    def seizing(self) -> bool:
        """Whether the active error holds the user's queue (a mistake to carry out); an error
        that only makes the user forget steps (``skip``) leaves the queue to the user."""
        ev = self.active_error()
        return ev is not None and bool(ev.spec.actions)

    def step(self, tick: int, graph: SceneGraph, events: Sequence[Event]) -> list[int]:
        """Fire what triggers now and track requests' windows; returns the newly fired."""
        fired: list[int] = []
        for i, ev in enumerate(self.events):
            st = self.states[i]
            if st.status == "active" and ev.spec.category == "request":
                self._track_request(i, tick, graph, events)
            if st.status != "pending":
                continue
            if ev.spec.category in ("error", "question") and self.holding is not None:
                continue
            if ev.trigger.evaluate(graph, events) is not Truth.T:
                continue
            st.status, st.trigger_tick = "active", tick
            fired.append(i)
            if ev.spec.category == "error":
                self.holding = i
            elif ev.spec.category == "question":
                st.data = {
                    "question": question_text(ev),
                    "truth": reference_answer(ev, self.history, tick),
                }
                self._resolve(i, tick, "asked")
            elif ev.spec.category == "request":
                st.data = {"question": question_text(ev), "t_c": None, "h": None}
                self._track_request(i, tick, graph, events)
            else:
                self._resolve(i, tick, "announced")
        return fired

    def _track_request(self, i: int, tick: int, graph: SceneGraph, events: Sequence[Event]) -> None:
        ev, st = self.events[i], self.states[i]
        assert ev.condition is not None
        if st.data["t_c"] is None:
            if ev.condition.evaluate(graph, events) is Truth.T:
                st.data["t_c"] = tick
            return
        end = ev.window_end
        if end is not None and end.evaluate(graph, events) is Truth.T:
            st.data["h"] = tick
            self._resolve(i, tick, "window_closed")

    def progress(
        self, tick: int, graph: SceneGraph, events: Sequence[Event], *, drained: bool, accepted: int
    ) -> bool:
        """Advance the holding error: commit, completion, cancel, timeout.

        ``drained``: the harness's actions are all carried out and the world is idle;
        ``accepted``: how many of them the world has accepted so far. True if it released.
        """
        for j, (other, ost) in enumerate(zip(self.events, self.states, strict=True)):
            # a mistake already under way when the user accepted can still be committed
            if (j != self.holding and other.commit is not None and ost.commit_tick is None
                    and ost.accept_tick is not None
                    and other.commit.evaluate(graph, events) is Truth.T):  # fmt: skip
                ost.commit_tick = tick
        if self.holding is None:
            return False
        i = self.holding
        ev, st = self.events[i], self.states[i]
        assert st.trigger_tick is not None
        if st.commit_tick is None:
            if ev.commit is not None:
                if ev.commit.evaluate(graph, events) is Truth.T:
                    st.commit_tick = tick
            elif ev.spec.actions and accepted >= len(ev.spec.actions):
                st.commit_tick = tick
            elif not ev.spec.actions:
                st.commit_tick = tick  # a forgotten step with no later deadline: skipped now
        if ev.cancel is not None and ev.cancel.evaluate(graph, events) is Truth.T:
            return self._release(i, tick, "cancelled")
        done = ev.complete.evaluate(graph, events) is Truth.T if ev.complete else drained
        if done and st.commit_tick is not None:
            return self._release(i, tick, "completed")
        if tick - st.trigger_tick >= ev.spec.max_duration:
            return self._release(i, tick, "timeout")
        return False

    def accept(self, tick: int) -> bool:
        """The user accepted the assistant's guidance: it gets its queue back."""
        if self.holding is None:
            return False
        self.states[self.holding].accept_tick = tick
        return self._release(self.holding, tick, "accepted")

    def _release(self, i: int, tick: int, why: Resolution) -> bool:
        self._resolve(i, tick, why)
        self.holding = None
        return True

    def _resolve(self, i: int, tick: int, why: Resolution) -> None:
        st = self.states[i]
        st.status, st.resolve_tick, st.resolution = "resolved", tick, why

    def finish(self, tick: int) -> None:
        for i, st in enumerate(self.states):
            if st.status == "pending":
                st.resolution = "not_reached"
            elif st.status == "active":
                self._resolve(i, tick, "episode_end")
        self.holding = None

    def state(self) -> dict[str, Any]:
        return {
            "states": [s.to_json() for s in self.states],
            "holding": self.holding,
            "history": self.history.to_json(),
        }

    def restore(self, d: dict[str, Any]) -> None:
        self.states = [EventState.from_json(s) for s in d["states"]]
        self.holding = d["holding"]
        self.history = History.from_json(d["history"])
