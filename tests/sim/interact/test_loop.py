"""The interactive loop: determinism, timing, the information boundary, events, replay."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from sim.episode import open_scenario
from sim.interact import ScheduleError, parse_schedule, replay_interactive, run_interactive
from sim.users import PROFILES, Persona
from storage import Project


def _run(name: str, persona: str = "balanced", **kw: Any) -> Any:
    return run_interactive(bound=open_scenario(name), persona=PROFILES[persona], **kw)


def test_same_seed_same_episode_and_personas_differ() -> None:
    a, b = _run("cook-patty", "novice"), _run("cook-patty", "novice")
    assert a.runner.hashes == b.runner.hashes
    assert a.agent.tables.turns == b.agent.tables.turns
    expert = _run("cook-patty", "expert")
    assert expert.runner.result.ticks != a.runner.result.ticks  # speed moves the pace


def test_forgotten_step_is_detected_and_prevented_by_the_oracle() -> None:
    ep = _run("cook-patty", "balanced")
    h = ep.agent.harness
    states = {e.id: s for e, s in zip(h.events, h.states, strict=True)}
    forgot = states["burner-left-on"]
    assert forgot.trigger_tick is not None and forgot.resolution == "accepted"
    assert forgot.commit_tick is None  # the patty never burnt: prevented
    flags = [t for t in ep.agent.tables.turns if t["flag"] == "forgotten_step"]
    assert flags and flags[0]["tick"] >= forgot.trigger_tick
    assert ep.runner.result.metrics["success"] == 1.0
    # the question's reference answer comes from what the user did: one pick of the patty
    assert states["picks"].data["truth"] == 1


def test_trust_sets_how_many_warnings_a_user_needs() -> None:
    def warnings_before_accept(persona: str) -> int:
        ep = _run("cook-patty", persona)
        turns = ep.agent.tables.turns
        accept = next(t["tick"] for t in turns if t["speaker"] == "user" and t["move"] == "accept")
        return sum(1 for t in turns if t["flag"] == "forgotten_step" and t["tick"] <= accept)

    high, medium, low = (
        warnings_before_accept(p) for p in ("novice", "balanced", "expert")
    )  # novice trusts most, the expert least
    assert high < medium < low


def test_measured_latency_delivers_replies_d_ticks_later_while_the_world_runs() -> None:
    ep = _run("cook-patty", "balanced", timing="measured",
              assistant_options={"latency_s": 1.25})  # fmt: skip
    asked = [x for x in ep.agent.tables.exchanges if x["party"] == "assistant"]
    assert asked and all(x["due_tick"] == x["tick"] + 13 for x in asked)  # ⌈1250 / 100⌉
    delivered = {
        t["meta"]["asked"]: t["tick"] for t in ep.agent.tables.turns if "asked" in t["meta"]
    }
    assert delivered and all(tick == asked_at + 13 for asked_at, tick in delivered.items())
    # one request in flight: the next query is never before the last reply arrived
    ticks = [x["tick"] for x in asked]
    assert all(b - a >= 13 for a, b in itertools.pairwise(ticks))


LEAKS = ("LEAK-MISTAKE-7f3a", "LEAK-SAY-91bc", "LEAK-PLAN-c0de")


def _leaky_schedule() -> dict[str, Any]:
    return {
        "format": "workbench-events/1",
        "scenario": "cook-patty",
        "events": [
            {"id": "burner", "category": "error", "type": "forgotten_step", "skip": 1,
             "trigger": {"attr": ["patty", "cooked", ">=", 0.9]}, "targets": ["burner"],
             "commit": {"attr": ["patty", "cooked", ">=", 1.5]},
             "mistake": f"You forget the burner. {LEAKS[0]}"},
            {"id": "q", "category": "question", "family": "count",
             "trigger": {"in": ["patty", "pan"]}, "about": {"verb": "pick", "obj": "patty"},
             "say": f"How many times have I picked up the patty? {LEAKS[1]}"},
        ],
    }  # fmt: skip


def test_private_fields_never_reach_the_assistant_and_flags_never_reach_the_user() -> None:
    persona = Persona(name="leaky", skill="high", trust="high", speed="quick")
    ep = run_interactive(bound=open_scenario("cook-patty"), persona=persona,
                         schedule=_leaky_schedule())  # fmt: skip
    sent_to_assistant = json.dumps([x["sent"] for x in ep.agent.tables.exchanges
                                    if x["party"] == "assistant"])  # fmt: skip
    assert LEAKS[0] not in sent_to_assistant  # the mistake line (event instruction)
    assert "SYSTEM TASK" not in sent_to_assistant
    for hidden in persona.instructions()[:2]:  # skill and trust instructions
        assert hidden not in sent_to_assistant
    assert '"skill"' not in sent_to_assistant and '"trust"' not in sent_to_assistant
    assert '"queue"' not in sent_to_assistant and '"state"' not in sent_to_assistant
    # the question was *said*, so the assistant hears the user's words (only utterances cross)
    assert LEAKS[1] in sent_to_assistant
    sent_to_user = json.dumps([x["sent"] for x in ep.agent.tables.exchanges
                               if x["party"] == "user"])  # fmt: skip
    flags = [t for t in ep.agent.tables.turns if t["flag"]]
    assert flags  # the assistant flagged the mistake, and the user is never told it did:
    assert '"flag' not in sent_to_user and "flag_target" not in sent_to_user
    assert "task_progress" not in sent_to_user and '"memory"' not in sent_to_user
    assert LEAKS[0] in sent_to_user  # the user does get its own private task


def test_a_bad_schedule_is_refused_naming_the_field() -> None:
    bad = _leaky_schedule()
    bad["events"][0]["targets"] = ["burnr"]
    with pytest.raises(ScheduleError, match=r"events\[0\]\.targets\[0\]: unknown object 'burnr'"):
        _run("cook-patty", schedule=bad)
    bad = _leaky_schedule()
    bad["events"][1]["family"] = "colour"
    with pytest.raises(ScheduleError, match=r"events\.1\.family"):
        _run("cook-patty", schedule=bad)
    with pytest.raises(ScheduleError, match="this schedule is for 'cook-patty'"):
        parse_schedule(_leaky_schedule(), open_scenario("cheeseburger"), set())


def test_a_stored_interactive_episode_replays_tick_for_tick(tmp_path: Any) -> None:
    project = Project.create(tmp_path / "p")
    ep = _run("cheeseburger", "expert", project=project)
    eid = ep.episode_id
    assert eid is not None
    turns = project.episodes.turns(eid)
    events = project.episodes.events(eid)
    assert [t.text for t in turns] == [t["text"] for t in ep.agent.tables.turns]
    assert {e.event_id for e in events} == {"cook-time", "patty-done", "cheese-first"}
    actions = project.episodes.actions(eid)
    assert {a.source.value for a in actions} == {"user", "harness"}
    report = replay_interactive(project, eid)
    assert report.identical and report.compared == ep.runner.result.ticks + 1
