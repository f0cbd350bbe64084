"""Appendix K trajectories K.1, K.2a and K.2b re-enacted on the kitchen scenes (IVG spec §7).

Our worlds are tabletop kitchens, not VHSim or CookSim maps, so each test re-enacts a
trajectory's *mechanics* — stale guidance under latency, late alerts, trust against warnings —
with the rule-based user and a scripted assistant, stores the episode, and scores it with
:func:`sim.interact.episode_metrics` from the stored trace. Our actions take 20–30 ticks (the
paper's 1–6), so delays that make guidance stale are longer than the paper's where noted.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from sim.assistants import delay_ticks
from sim.interact import episode_metrics, replay_interactive
from sim.metrics import is_readiness_claim
from sim.users import Persona
from storage import Project
from tests.sim.interact.appendix_k_support import run, said, schedule

#: K.1's user follows a stale instruction at once; the rule-based user does that with high trust
QUICK_TRUSTING = Persona(name="k1", trust="high", speed="quick", interruption="necessary-only")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path / "p")


# -- K.1: stale guidance under latency -------------------------------------------------------
def test_k1_fixed_twelve_tick_replies_arrive_at_t_plus_12_while_the_world_moves_on(
    project: Project,
) -> None:
    # "a response generated from tick 55 with a 12-tick delay is delivered at tick 67": with
    # k = 12 the assistant is asked every 12 ticks (one request in flight), so a line due from
    # tick 55 is generated at the next query, 60, and delivered at 72.
    stale = {"text": "Careful: put the patty in the pan.", "at": 55}
    ep = run(project, "cook-patty", QUICK_TRUSTING, events=schedule("cook-patty"), cues=[stale],
             fixed_delay=12)  # fmt: skip
    eid = ep.episode_id
    assert eid is not None
    asked = project.episodes.exchanges(eid, "assistant")
    assert asked and all(x.due_tick == x.tick + 12 for x in asked)
    assert all(b.tick - a.tick >= 12 for a, b in itertools.pairwise(asked))
    replies = said(project, eid, "assistant")
    assert [json.loads(t.meta_json)["asked"] for t in replies] == [60]
    assert [t.tick for t in replies] == [72]
    # the world kept running meanwhile: the patty was put in the pan between 60 and 72 ...
    hashes = project.episodes.hashes(eid)
    assert hashes[60] != hashes[72]
    actions = project.episodes.actions(eid)
    placed = next(a for a in actions if a.text == "put the patty in the pan")
    assert placed.finished_tick is not None and 60 < placed.finished_tick <= 72
    # ... so the user followed a stale instruction: rejected, and the user was told why
    followed = [a for a in actions if a.tick >= 72 and not a.accepted]
    assert [a.text for a in followed] == ["put the patty in the pan"]
    told = [json.loads(x.sent_json)["feedback"] for x in project.episodes.exchanges(eid, "user")]
    assert any("rejected" in f for fb in told for f in fb)
    assert replay_interactive(project, eid).identical  # the stored config says k = 12


@pytest.mark.parametrize(("latency_s", "d"), [(1.2, 12), (1.21, 13), (0.6, 6), (99.0, 360)])
def test_k1_measured_latency_becomes_d_ticks(project: Project, latency_s: float, d: int) -> None:
    # d = min(⌈ℓ/Δ⌉, cap) with Δ = 0.1 s and the 36 s cap = 360 ticks
    cue = {"text": "Careful: the burner is off.", "at": 10, "latency_s": latency_s}
    ep = run(project, "cook-patty", QUICK_TRUSTING, cues=[cue], timing="measured")
    eid = ep.episode_id
    assert eid is not None
    asked = project.episodes.exchanges(eid, "assistant")
    assert all(x.due_tick == x.tick + delay_ticks(x.latency_s or 0.0, 0.1, 360) for x in asked)
    [reply] = said(project, eid, "assistant")
    generated = json.loads(reply.meta_json)["asked"]
    assert generated == 10 and reply.tick == generated + d
    assert not any(x.tick in range(generated + 1, generated + d) for x in asked)  # one in flight


def test_k1_a_stale_instruction_is_rejected_with_feedback(project: Project) -> None:
    # Window 1 with our action lengths: generated while the burner was still off, delivered
    # 40 ticks later (ℓ = 4 s), after the user had turned it on; the user follows it anyway.
    stale = {"text": "Careful: turn on the burner.", "seen": {"patty": "in pan", "burner": "off"},
             "latency_s": 4.0}  # fmt: skip
    ep = run(project, "cook-patty", QUICK_TRUSTING, cues=[stale], timing="measured")
    eid = ep.episode_id
    assert eid is not None
    [reply] = said(project, eid, "assistant")
    asked = json.loads(reply.meta_json)["asked"]
    assert reply.tick == asked + 40
    actions = project.episodes.actions(eid)
    turned_on = [a for a in actions if a.text == "turn on the burner"]
    first, again = turned_on
    assert first.accepted and asked < (first.finished_tick or 0) <= reply.tick
    assert not again.accepted and again.tick >= reply.tick  # stale: the burner is already on
    feedback = [
        (x.tick, f)
        for x in project.episodes.exchanges(eid, "user")
        for f in json.loads(x.sent_json)["feedback"]
    ]
    assert [(t, f) for t, f in feedback if "already on" in f] == [
        (again.tick + 1, "turn on the burner: rejected (burner is already on)")
    ]


def test_k1_a_users_premature_done_claim_is_never_ground_truth(project: Project) -> None:
    # The shipped schedule makes the user forget the burner; with a silent assistant it says
    # it is done while the burner is on. The metrics read the final state, not the claim.
    ep = run(project, "cook-patty", QUICK_TRUSTING)
    eid = ep.episode_id
    assert eid is not None
    [claim] = said(project, eid, "user", "that's everything")
    assert is_readiness_claim(claim.text, ("patty",))  # words that *would* read as an alert
    assert ep.runner.result is not None and claim.tick < ep.runner.result.ticks
    m = episode_metrics(project, eid)
    assert m["success"] == 0.0 and m["goal_completion"] == pytest.approx(2 / 3)
    # the user's "Done" is not the assistant's notification: the request scores 0, not 1
    assert m["requests_graded"] == 1 and m["proactive_score"] == 0.0
    assert (m["errors_triggered"], m["errors_detected"]) == (1.0, 0.0)


# -- K.2a: novice vs expert; a late proactive alert -------------------------------------------
def _late_alert_events() -> dict[str, Any]:
    """A request whose window closes when the patty overcooks (cooked 1.2), and a forgotten
    burner that keeps it on the heat past that until it burns (cooked 1.5)."""
    return schedule(
        "cook-patty",
        {"id": "patty-done", "category": "request",
         "trigger": {"attr": ["patty", "cooked", ">=", 0.2]}, "about": {"item": "patty"},
         "condition": {"attr": ["patty", "cooked", ">=", 1.0]},
         "window_end": {"attr": ["patty", "cooked", ">=", 1.2]}},
        {"id": "burner-left-on", "category": "error", "type": "unattended_cooking",
         "trigger": {"attr": ["patty", "cooked", ">=", 0.9]}, "targets": ["burner", "patty"],
         "skip": 1, "commit": {"attr": ["patty", "cooked", ">=", 1.5]},
         "mistake": "You forget to switch the burner off."},
    )  # fmt: skip


def _window(project: Project, eid: str) -> tuple[int, int]:
    [req] = [e for e in project.episodes.events(eid) if e.category == "request"]
    data = json.loads(req.data_json)
    return int(data["t_c"]), int(data["h"])


def test_k2a_a_late_alert_and_an_acknowledgement_score_nothing(project: Project) -> None:
    silent = run(project, "cook-patty", "expert", events=_late_alert_events())
    assert silent.episode_id is not None
    t_c, h = _window(project, silent.episode_id)
    ack = {"text": "I'll watch the patty for you.", "heard": "tell me when"}
    scores = {}
    for label, alert_at in (("ack only", None), ("late", h), ("in time", t_c)):
        cues = [ack] + ([] if alert_at is None else
                        [{"text": "The patty is done now.", "at": alert_at}])  # fmt: skip
        ep = run(project, "cook-patty", "expert", events=_late_alert_events(), cues=cues)
        eid = ep.episode_id
        assert eid is not None
        assert _window(project, eid) == (t_c, h)  # the same cooking, whatever was said
        assert said(project, eid, "assistant", "watch")  # the acknowledgement was delivered
        scores[label] = episode_metrics(project, eid)["proactive_score"]
    # ≥ H is late (H exclusive); an acknowledgement is no readiness claim
    assert scores == {"ack only": 0.0, "late": 0.0, "in time": 1.0}


def test_k2a_the_novice_asks_for_guidance_more_often_than_the_expert(project: Project) -> None:
    asks = {}
    for who in ("novice", "expert"):
        ep = run(project, "cheeseburger", who, seed=13)  # same seed, schedule and scene
        assert ep.episode_id is not None
        turns = project.episodes.turns(ep.episode_id)
        asks[who] = sum(1 for t in turns if t.move == "request_guidance")
    assert asks["novice"] > asks["expert"]
    assert asks["novice"] >= 3


# -- K.2b: reactions to disputed guidance; unattended cooking ---------------------------------
def _walk_away() -> dict[str, Any]:
    """The harness makes the user leave the patty on the heat (ten-tick waits, so taking the
    advice stops it after the current one) until it burns at cooked 1.4."""
    return schedule(
        "cook-patty",
        {"id": "walked-away", "category": "error", "type": "unattended_cooking",
         "trigger": {"attr": ["patty", "cooked", ">=", 0.9]}, "targets": ["patty", "burner"],
         "actions": ["wait 10 ticks"] * 12, "commit": {"attr": ["patty", "cooked", ">=", 1.4]},
         "mistake": "You walk away from the pan and leave the patty on the heat."},
    )  # fmt: skip


WARNING = {
    "text": "Careful, the patty is done and still on the heat: turn off the burner.",
    "seen": {"patty": "cooked", "burner": "on"}, "flag": "unattended_cooking",
    "flag_target": "burner", "times": 5, "every": 6, "until_heard": "right|fixing|doing that",
}  # fmt: skip


def test_k2b_trust_sets_how_many_warnings_the_user_needs(project: Project) -> None:
    needed = {}
    for trust in ("high", "medium", "low"):
        who = Persona(name=f"trust-{trust}", skill="high", trust=trust)
        ep = run(project, "cook-patty", who, events=_walk_away(), cues=[WARNING])
        eid = ep.episode_id
        assert eid is not None
        [event] = project.episodes.events(eid)
        assert event.resolution == "accepted" and event.accept_tick is not None
        warned = [t for t in said(project, eid, "assistant", "careful")
                  if t.tick <= event.accept_tick]  # fmt: skip
        needed[trust] = len(warned)
        m = episode_metrics(project, eid)
        assert (m["errors_detected"], m["errors_prevented"]) == (1.0, 1.0)
        assert m["success"] == 1.0
        # taking the advice covers the plan's own "turn off the burner": it is not redone
        assert m["action_validity"] == 1.0, [a.text for a in project.episodes.actions(eid)
                                              if not a.accepted]  # fmt: skip
    assert needed == {"high": 1, "medium": 2, "low": 3}


def test_k2b_unattended_cooking_unwarned_burns_and_is_not_detected(project: Project) -> None:
    ep = run(project, "cook-patty", Persona(name="t", skill="high"), events=_walk_away())
    eid = ep.episode_id
    assert eid is not None
    [event] = project.episodes.events(eid)
    assert event.commit_tick is not None and event.resolution == "completed"
    m = episode_metrics(project, eid)
    assert (m["errors_triggered"], m["errors_detected"], m["detection_recall"]) == (1, 0, 0.0)
    assert m["prevention"] == 0.0


def test_k2b_a_low_trust_user_pushes_back_on_a_false_claim(project: Project) -> None:
    # "That is the cheese crate" when it is not: a sceptic asks why and does not change course
    false_claim = {"text": "Careful, that's the cheese, not the bun: put the bun back on the "
                   "table.", "seen": {"bun": "held"}}  # fmt: skip
    ep = run(project, "prep-board", "expert", events=schedule("prep-board"), cues=[false_claim])
    eid = ep.episode_id
    assert eid is not None
    [claim] = said(project, eid, "assistant", "cheese")
    reply = next(t for t in said(project, eid, "user") if t.tick == claim.tick)
    assert reply.move == "request_explanation"
    assert episode_metrics(project, eid)["success"] == 1.0
    assert all(a.accepted for a in project.episodes.actions(eid))
