"""Recorded episodes for review: the graph at any tick equals what the world said at that tick,
in any seek order; the timeline's items are the trace's rows on one time base."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from sim.episode import open_scenario
from sim.interact import run_interactive
from sim.review import GraphCursor, load_timeline
from sim.users import PROFILES
from storage import Project


class Recorder:
    """A sink that keeps what the scene graph said at every tick (relations and attributes)."""

    def __init__(self) -> None:
        self.seen: dict[int, tuple[Any, Any]] = {}

    def start(self, runner: Any) -> None:
        self.record(runner)

    def record(self, runner: Any, *_: Any) -> None:
        g = runner.world.graph
        self.seen[g.tick] = (sorted(g.relations), {k: (dict(n.attrs), n.visible)
                                                    for k, n in g.nodes.items()})  # fmt: skip

    def finish(self, runner: Any, result: Any) -> None:
        pass


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, str, Recorder]:
    from sim.interact import build_interactive

    project = Project.create(tmp_path_factory.mktemp("review") / "p")
    ep = build_interactive(open_scenario("cheeseburger"), persona=PROFILES["expert"],
                           project=project, timing="measured",
                           assistant_options={"latency_s": 0.8})  # fmt: skip
    rec = Recorder()
    ep.runner.sinks.append(rec)
    ep.runner.run()
    ep.runner.world.close()
    assert ep.sink is not None and ep.sink.db.episode_id is not None
    return project, ep.sink.db.episode_id, rec


def test_graph_at_any_tick_in_any_order(stored: tuple[Project, str, Recorder]) -> None:
    project, eid, rec = stored
    cursor = GraphCursor.load(project, eid)
    ticks = sorted(rec.seen)
    order = ticks + random.Random(3).sample(ticks, len(ticks)) + ticks[::-1]
    for t in order:
        g = cursor.graph_at(t)
        got = (sorted(g.relations), {k: (dict(n.attrs), n.visible) for k, n in g.nodes.items()})
        assert got == rec.seen[t], f"tick {t}"
    assert cursor.graph_at(10**6).tick == ticks[-1]  # past the end: the last tick


def test_timeline_items_are_the_trace(stored: tuple[Project, str, Recorder]) -> None:
    project, eid, _ = stored
    tl = load_timeline(project, eid)
    actions = project.episodes.actions(eid)
    spans = tl.on("actions")
    assert [(s.start, s.label) for s in spans] == [(a.tick, a.text) for a in actions if a.accepted]
    assert all(s.end >= s.start for s in spans)
    assert {s.kind for s in spans} >= {"user", "harness"}
    rejected = [a for a in actions if not a.accepted and json.loads(a.failed_json)]
    assert [m.start for m in tl.on("rejections")] == [a.tick for a in rejected]
    # replies: from the tick generated to the tick heard, ⌈0.8 / 0.1⌉ = 8 ticks apart
    replies = tl.on("replies")
    assert replies and all(r.end - r.start == 8 for r in replies)
    stale = [r for r in replies if r.kind == "stale"]
    fresh = [r for r in replies if r.kind == "fresh"]
    assert stale and fresh  # the world moved under some replies, not under all
    for r in stale:  # stale means the graph really changed in between
        before, after = tl.graphs.graph_at(r.start), tl.graphs.graph_at(r.end)
        assert (before.relations, {k: n.attrs for k, n in before.nodes.items()}) != (
            after.relations, {k: n.attrs for k, n in after.nodes.items()},
        ) or any(tl.graphs.diff(k) for k in range(r.start + 1, r.end + 1))  # fmt: skip
    ev = project.episodes.events(eid)
    marks = {(m.start, m.kind) for m in tl.on("events")}
    for e in ev:
        if e.trigger_tick is not None:
            assert (e.trigger_tick, "trigger") in marks
        if e.resolve_tick is not None:
            assert (e.resolve_tick, "resolve") in marks
    assert any(m.kind == "hold" for m in tl.on("events"))
    assert [w.start for w in tl.on("windows")] == [
        json.loads(e.data_json)["t_c"] for e in ev if e.category == "request"
    ]
    flags = [m for m in tl.on("assistant") if m.kind == "flag"]
    assert flags and all(tl.turns[m.ref].flag for m in flags)
    # the transcript's row and the contract at a tick
    k = tl.turn_at(flags[0].start)
    assert k is not None and tl.turns[k].tick <= flags[0].start
    assert tl.turn_at(-1) is None
    assert [c[1] for c in tl.contract_at(tl.ticks)] == [
        c.witness_tick is not None for c in tl.conditions
    ]


def test_an_episode_without_dialogue_opens_with_its_tracks(tmp_path: Path) -> None:
    from sim.episode import run_episode

    with Project.create(tmp_path / "p") as p:
        ep = run_episode(open_scenario("stack-two"), mode="symbolic", project=p)
        assert ep.episode_id is not None
        tl = load_timeline(p, ep.episode_id)
        assert tl.on("actions") and not tl.on("user") and not tl.on("replies")
        assert len(tl.on("contract")) == len(tl.conditions)


def test_interactive_helper_still_matches(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        ep = run_interactive(bound=open_scenario("cook-patty"), persona=PROFILES["novice"],
                             project=p)  # fmt: skip
        assert ep.episode_id is not None
        assert load_timeline(p, ep.episode_id).on("user")


def test_conditions_are_drawn_where_they_held(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        ep = run_interactive(bound=open_scenario("cook-patty"), persona=PROFILES["balanced"],
                             project=p)  # fmt: skip
        assert ep.episode_id is not None
        tl = load_timeline(p, ep.episode_id)
        actions = p.episodes.actions(ep.episode_id)
    on = next(a for a in actions if a.accepted and a.text == "turn on the burner")
    off = next(a for a in actions if a.accepted and a.text == "turn off the burner")
    k = next(i for i, c in enumerate(tl.conditions) if c.text == "burner switched off")
    assert tl.holds is not None
    runs = tl.holds[k]
    # off at the start, on while cooking, off again at the end
    assert runs[0][0] == 0 and len(runs) == 2 and runs[-1][1] == tl.ticks
    assert on.tick < runs[0][1] <= on.finished_tick and off.tick < runs[1][0] <= off.finished_tick
    falls = [i for i in tl.on("contract") if i.kind == "false" and i.ref == k]
    assert [f.start for f in falls] == [runs[0][1]]
    mid = (runs[0][1] + runs[1][0]) // 2
    assert tl.contract_at(mid)[k][1] is False and tl.contract_at(tl.ticks)[k][1] is True
    assert tl.contract_at(tl.ticks)[k][2] == runs[1][0]
