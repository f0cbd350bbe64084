"""An idle user that says when it next acts (``UserTurn.wake``) is not asked again before then
unless something happens; the episode's actions and words are what they were when it was asked
every idle tick, and a fork restores the wake."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

from sim.episode import open_scenario
from sim.interact import RuleUser, UserTurn, run_interactive
from sim.users import PROFILES
from storage import Project


def test_no_idle_call_before_the_wake(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        ep = run_interactive(bound=open_scenario("cook-patty"), persona=PROFILES["novice"],
                             project=p)  # fmt: skip
        assert ep.episode_id is not None
        calls = [(x.tick, json.loads(x.sent_json)["reason"], json.loads(str(x.received_json)))
                 for x in p.episodes.exchanges(ep.episode_id, party="user")]  # fmt: skip
    wakes = [c for c in calls if "wake" in c[2]]
    assert wakes, "a paced novice says when it next acts"
    for (_t, _r, said), (nxt, reason, _) in pairwise(calls):
        if "wake" in said and reason == "idle":
            assert nxt >= said["wake"], (said, nxt)


def test_wake_survives_json_and_fork_state() -> None:
    turn = UserTurn(wake=42)
    assert UserTurn.from_json(turn.to_json()).wake == 42
    assert "wake" not in UserTurn().to_json()  # rows of users that never say stay as they were
    assert UserTurn.from_json({"wake": True}).wake is None  # garbage is silence, not an error
    bound = open_scenario("cook-patty")
    ep = run_interactive(bound=bound, persona=PROFILES["novice"])
    state = ep.agent.state()
    assert "user_wake" in state
    assert isinstance(ep.agent.user, RuleUser)
