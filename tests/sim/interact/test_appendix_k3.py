"""Appendix K trajectories K.3a, K.3b and K.3c re-enacted on the kitchen scenes (IVG spec §7).

See ``test_appendix_k.py`` for how a trajectory becomes a test episode. Each episode is stored
and scored from its trace by :func:`sim.interact.episode_metrics`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sim.interact import episode_inputs, episode_metrics
from sim.metrics import grade_question
from storage import Project
from tests.sim.interact.appendix_k_support import run, said, schedule

# -- K.3a: errors, a question, a proactive request, a plan change ------------------------------
K3A_EVENTS = schedule(
    "cook-patty",
    {"id": "raw-on-plate", "category": "error", "type": "raw_serving",
     "trigger": {"held": "patty"}, "targets": ["patty", "plate"],
     "actions": ["put the patty on the plate"], "commit": {"on": ["patty", "plate"]},
     "max_duration": 120, "mistake": "You put the raw patty straight on the plate."},
    {"id": "picks", "category": "question", "family": "count",
     "trigger": {"attr": ["patty", "cooked", ">=", 0.3]},
     "about": {"verb": "pick", "obj": "patty"}},
    {"id": "patty-done", "category": "request",
     "trigger": {"attr": ["patty", "cooked", ">=", 0.5]}, "about": {"item": "patty"},
     "condition": {"attr": ["patty", "cooked", ">=", 1.0]},
     "window_end": {"attr": ["patty", "cooked", ">=", 1.5]}},
    {"id": "burner-left-on", "category": "error", "type": "forgotten_step",
     "trigger": {"attr": ["patty", "cooked", ">=", 0.9]}, "targets": ["burner"], "skip": 1,
     "commit": {"attr": ["patty", "cooked", ">=", 1.5]},
     "mistake": "You forget to switch the burner off."},
)  # fmt: skip
_TOOK_IT = "right|fixing|doing that"
K3A_CUES: list[dict[str, Any]] = [
    {"text": "The patty on the plate is still raw: pick up the patty, put the patty in the pan.",
     "seen": {"patty": "on plate, raw"}, "flag": "raw_serving", "flag_target": "patty",
     "times": 4, "every": 6, "until_heard": _TOOK_IT},
    {"text": "Twice.", "heard": "how many times"},
    {"text": "Okay, I'll tell you.", "heard": "tell me when"},
    {"text": "The patty is done now.", "seen": {"patty": "cooked"}},
    {"text": "You forgot a step: the burner is still on. Turn off the burner.",
     "seen": {"patty": "cooked", "burner": "on"}, "flag": "forgotten_step",
     "flag_target": "burner", "times": 5, "every": 6, "until_heard": _TOOK_IT},
]  # fmt: skip


@pytest.fixture(scope="module")
def k3a(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, str]:
    project = Project.create(tmp_path_factory.mktemp("k3a") / "p")
    ep = run(project, "cook-patty", "expert", events=K3A_EVENTS, cues=K3A_CUES)
    assert ep.episode_id is not None
    return project, ep.episode_id


def _event(project: Project, eid: str, event_id: str) -> Any:
    return next(e for e in project.episodes.events(eid) if e.event_id == event_id)


def test_k3a_raw_serving_detected_after_commit_and_a_forgotten_step_prevented(
    k3a: tuple[Project, str],
) -> None:
    project, eid = k3a
    raw, burner = _event(project, eid, "raw-on-plate"), _event(project, eid, "burner-left-on")
    flags = {t.flag: t.tick for t in reversed(project.episodes.turns(eid)) if t.flag}
    assert raw.commit_tick is not None and raw.commit_tick < flags["raw_serving"]  # after commit
    assert burner.accept_tick is not None and burner.commit_tick is None  # never burnt
    assert flags["forgotten_step"] <= burner.accept_tick
    grades = {o.event_id: (o.detected, o.prevented) for o in _detection(project, eid)}
    assert grades == {"raw-on-plate": (True, False), "burner-left-on": (True, True)}
    m = episode_metrics(project, eid)
    assert (m["errors_triggered"], m["detection_recall"], m["prevention"]) == (2, 1.0, 0.5)
    assert m["success"] == 1.0  # the raw patty went back in the pan and was cooked


def _detection(project: Project, eid: str) -> Any:
    from sim.metrics import grade_detection

    return grade_detection(episode_inputs(project, eid).detection).outcomes


def test_k3a_a_temporal_question_is_graded_against_the_recorded_state(
    k3a: tuple[Project, str],
) -> None:
    project, eid = k3a
    [q] = episode_inputs(project, eid).questions
    assert q.asked_tick is not None
    picks = [a for a in project.episodes.actions(eid) if a.text == "pick up the patty"
             and a.finished_tick is not None and a.finished_tick <= q.asked_tick]  # fmt: skip
    assert q.truth == len(picks) == 2  # its own pick, and the one fixing the raw serving
    assert q.answer == "Twice." and grade_question(q) == 1.0
    assert grade_question(replace(q, answer="Once.")) == 0.0  # the state decides, not the words
    assert episode_metrics(project, eid)["qa_score"] == 1.0


def test_k3a_a_notification_inside_the_window_scores(k3a: tuple[Project, str]) -> None:
    project, eid = k3a
    [r] = episode_inputs(project, eid).requests
    assert r.complete_tick is not None
    low, high = r.window or (0, None)
    [ack] = said(project, eid, "assistant", "i'll tell you")
    [alert] = said(project, eid, "assistant", "the patty is done now")
    assert r.request_tick <= ack.tick < low <= alert.tick and (high is None or alert.tick < high)
    m = episode_metrics(project, eid)
    assert (m["requests_graded"], m["proactive_score"]) == (1, 1.0)


PLAN_CHANGE = {
    "id": "cheese-to-plate", "category": "plan_change", "trigger": {"on": ["bun", "cutting_board"]},
    "say": "Change of plan: I would like the cheese on the plate instead.",
    "plan": ["pick up the cheese", "put the cheese on the plate"],
    "goal": [{"on": ["bun", "cutting_board"]}, {"on": ["cheese", "plate"]}],
}  # fmt: skip
CALLED_A_MISTAKE = {
    "text": "Careful, that is wrong: the cheese goes on the cutting board. Put the cheese on the "
            "cutting board.", "heard": "change of plan", "times": 3, "every": 6,
}  # fmt: skip


def test_k3a_a_plan_change_is_announced_before_acted_on_and_not_taken_back(
    tmp_path: Path,
) -> None:
    project = Project.create(tmp_path / "p")
    ep = run(project, "prep-board", "novice", events=schedule("prep-board", PLAN_CHANGE),
             cues=[CALLED_A_MISTAKE])  # fmt: skip
    eid = ep.episode_id
    assert eid is not None
    event = _event(project, eid, "cheese-to-plate")
    [announced] = said(project, eid, "user", "change of plan")
    # registered as it is announced (the paper's K.3a logs it one tick later)
    assert event.trigger_tick == event.resolve_tick == announced.tick
    new_plan = [a for a in project.episodes.actions(eid) if a.text == "put the cheese on the plate"]
    assert new_plan and new_plan[0].tick > announced.tick
    # the trusting user does not accept its own decision being called a mistake
    replies = [t for t in said(project, eid, "user") if t.tick > announced.tick and
               any(w.tick == t.tick for w in said(project, eid, "assistant", "wrong"))]  # fmt: skip
    assert replies and all(t.move == "reject" for t in replies), [(t.text, t.move) for t in replies]
    assert not any(a.text == "put the cheese on the cutting board"
                   for a in project.episodes.actions(eid))  # fmt: skip
    m = episode_metrics(project, eid)
    assert (m["plan_changed"], m["success"]) == (1.0, 1.0)  # the changed goal, met


# -- K.3b: a wrong object seizes the queue; acceptance returns it -----------------------------
WRONG_OBJECT = schedule(
    "prep-board",
    {"id": "grabbed-cheese", "category": "error", "type": "wrong_ingredient",
     "trigger": {"on": ["bun", "table"]}, "targets": ["cheese"],
     "actions": ["pick up the cheese", "wait 30 ticks", "put the cheese on the plate"],
     "commit": {"on": ["cheese", "plate"]}, "max_duration": 200,
     "mistake": "You grab the cheese instead of the bun."},
)  # fmt: skip
WRONG_OBJECT_WARNING = {
    "text": "Careful, that is the cheese, not the bun: put the cheese on the table, then pick up "
            "the bun.", "seen": {"cheese": "held"}, "flag": "wrong_ingredient",
    "flag_target": "cheese", "times": 3, "every": 6, "until_heard": _TOOK_IT,
}  # fmt: skip


def test_k3b_a_wrong_object_event_seizes_the_queue_and_returns_it_on_acceptance(
    tmp_path: Path,
) -> None:
    project = Project.create(tmp_path / "p")
    ep = run(project, "prep-board", "balanced", events=WRONG_OBJECT, cues=[WRONG_OBJECT_WARNING])
    eid = ep.episode_id
    assert eid is not None
    event = _event(project, eid, "grabbed-cheese")
    assert event.resolution == "accepted" and event.commit_tick is None
    start, accepted = event.trigger_tick, event.accept_tick
    actions = project.episodes.actions(eid)
    during = [a for a in actions if start <= a.tick < accepted]
    after = [a for a in actions if a.tick > accepted]
    assert [a.source.value for a in during] == ["harness", "harness"]  # grab, stand there
    assert after and {a.source.value for a in after} == {"user"}
    assert after[0].text == "put the cheese on the table"  # the advice, as the user's own
    assert "put the cheese on the plate" not in [a.text for a in actions]  # the queue was freed
    views = [(x.tick, json.loads(x.sent_json)) for x in project.episodes.exchanges(eid, "user")]
    held = {v["controlled_by"] for t, v in views if start <= t < accepted}
    assert held == {"harness"}
    assert {v["controlled_by"] for t, v in views if t > accepted} == {"user"}
    m = episode_metrics(project, eid)
    assert (m["errors_detected"], m["errors_prevented"], m["success"]) == (1.0, 1.0, 1.0)


# -- K.3c: two reversible mistakes; success needs both undone ---------------------------------
TWO_MISTAKES = schedule(
    "prep-board",
    {"id": "bun-moved", "category": "error", "type": "wrong_order",
     "trigger": {"on": ["bun", "cutting_board"]}, "targets": ["bun", "plate"],
     "actions": ["pick up the bun", "put the bun on the plate"],
     "commit": {"on": ["bun", "plate"]},
     "mistake": "You move the bun from the board to the plate."},
    {"id": "cheese-in-pan", "category": "error", "type": "wrong_ingredient",
     "trigger": {"on": ["cheese", "cutting_board"]}, "targets": ["cheese", "pan"],
     "actions": ["pick up the cheese", "put the cheese in the pan"],
     "commit": {"in": ["cheese", "pan"]}, "mistake": "You put the cheese in the pan."},
)  # fmt: skip
UNDO = [
    {"text": "The bun got moved to the plate, which is wrong: pick up the bun, then put the bun "
             "on the cutting board.", "seen": {"bun": "on plate"}, "flag": "wrong_order",
     "flag_target": "bun"},
    {"text": "That put the cheese in the pan, which is wrong: pick up the cheese, then put the "
             "cheese on the cutting board.", "seen": {"cheese": "in pan"},
     "flag": "wrong_ingredient", "flag_target": "cheese"},
]  # fmt: skip


def test_k3c_final_state_success_requires_the_reversible_mistakes_to_be_undone(
    tmp_path: Path,
) -> None:
    project = Project.create(tmp_path / "p")
    # action–response timing: every reply takes 0 ticks (measured, latency 0)
    silent = run(project, "prep-board", "novice", events=TWO_MISTAKES, timing="measured")
    undone = run(project, "prep-board", "novice", events=TWO_MISTAKES, cues=UNDO,
                 timing="measured")  # fmt: skip
    assert silent.episode_id is not None and undone.episode_id is not None
    left = episode_metrics(project, silent.episode_id)
    assert (left["errors_triggered"], left["success"]) == (2, 0.0)  # both changes still there
    fixed = episode_metrics(project, undone.episode_id)
    assert (fixed["errors_triggered"], fixed["errors_detected"], fixed["success"]) == (2, 2, 1.0)
    # each warning is delivered in the tick it was asked for, and the user answers in that tick
    for t in said(project, undone.episode_id, "assistant"):
        assert json.loads(t.meta_json)["asked"] == t.tick
        reply = [u for u in said(project, undone.episode_id, "user") if u.tick == t.tick]
        assert [u.move for u in reply] == ["accept"]
