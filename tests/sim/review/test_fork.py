"""Forking a recorded interactive episode at a tick: the fork's prefix is the parent's, tick for
tick; a person takes the seat at the fork and the branches diverge after it; the fork is an
ordinary episode that replays exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.episode import open_scenario
from sim.interact import SeatUser, replay_interactive, run_interactive
from sim.review import LiveRun, first_divergence, fork_build, load_timeline
from sim.users import PROFILES
from storage import EpisodeError, Project
from tests.sim.review.test_live import wait_for


def test_fork_at_a_tick_then_a_person_takes_over(tmp_path: Path) -> None:
    root = tmp_path / "p"
    with Project.create(root) as p:
        parent = run_interactive(bound=open_scenario("cook-patty"), persona=PROFILES["novice"],
                                 project=p).episode_id  # fmt: skip
        assert parent is not None
        build = fork_build(p, parent, 120)
    live = LiveRun(root, build)
    try:
        assert live.ready.wait(30) and live.error is None
        live.run_to(120)
        wait_for(lambda: live.tick == 120)
        seat = live.extra.agent.user
        assert isinstance(seat, SeatUser)
        seat.take()
        seat.human.say("I'll do it my own way.")
        seat.human.do("turn off the burner")  # too early: the patty is not cooked yet
        seat.human.done()
        live.play(speed=0)
        wait_for(lambda: live.finished)
        fork = live.extra.sink.db.episode_id
    finally:
        live.stop()
    with Project.open(root) as p:
        f, par = p.episodes.get(fork), p.episodes.get(parent)
        assert (f.parent_id, f.fork_tick) == (par.id, 120)
        d = first_divergence(p.episodes.hashes(par.id), p.episodes.hashes(f.id))
        assert d is not None and d > 120  # the same world up to the fork, then not
        assert p.episodes.metrics(par.id)["success"] == 1.0
        assert p.episodes.metrics(f.id)["success"] == 0.0  # the person turned it off too soon
        assert replay_interactive(p, f.id).identical
        tl = load_timeline(p, f.id)  # the fork opens with its parent, on one time base
        assert tl.parent is not None and tl.parent.episode.id == par.id
        assert tl.diverges_at == d


def test_only_interactive_episodes_fork_with_a_seat(tmp_path: Path) -> None:
    from sim.episode import run_episode

    with Project.create(tmp_path / "p") as p:
        eid = run_episode(open_scenario("stack-two"), mode="symbolic", project=p).episode_id
        assert eid is not None
        with pytest.raises(EpisodeError, match="no simulated user"):
            fork_build(p, eid, 3)


def test_an_engine_fork_opens_with_its_parents_prefix(tmp_path: Path) -> None:
    from sim.episode import fork_episode, run_episode

    with Project.create(tmp_path / "p") as p:
        eid = run_episode(open_scenario("stack-two"), mode="symbolic", project=p).episode_id
        assert eid is not None
        fork = fork_episode(p, eid, 10).episode_id
        assert fork is not None
        tl = load_timeline(p, fork)  # it stored only what followed tick 10
        assert tl.graphs.ticks[0] == 0 and tl.parent is not None
        assert tl.diverges_at is None  # the same decisions: the same world throughout


def test_first_divergence() -> None:
    assert first_divergence(["a", "b"], ["a", "b"]) is None
    assert first_divergence(["a", "b", "c"], ["a", "x", "c"]) == 1
    assert first_divergence(["a", "b"], ["a", "b", "c"]) == 2
