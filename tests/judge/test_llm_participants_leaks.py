"""The information boundary with both sides played by models (loopback servers, real HTTP).

A unique string is planted in each private field — the persona's hidden axes, the user's own
queue, each kind of event's instruction (a question, a request, a plan change and its commands,
the scheduled mistake) — and in each part of the assistant's reply that is not its words (note,
progress record, goal change, flag target). Every request body each server received is then
searched: each string reaches its owner's prompt (so the search can fail) and never the other
side's. The stored audit holds exactly those bodies.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judge.models.loopback import FakeServer
from sim.episode import open_scenario
from sim.interact import run_interactive
from sim.users import Persona
from tests.judge.llm_participant_helpers import (
    assistant_script,
    bodies,
    project_with,
    user_script,
)

USER_SIDE = {
    "skill": "zq-skill-1a2b",
    "trust": "zq-trust-3c4d",
    "queue": "zq-queue-5e6f",
    "mistake": "zq-mistake-7a8b",
    "question": "zq-question-9c0d",
    "request": "zq-request-1e2f",
    "plan_say": "zq-plansay-3a4b",
    "plan_cmd": "zq-plancmd-5c6d",
}
ASSISTANT_SIDE = {
    "note": "zq-note-7e8f",
    "progress": "zq-progress-9a0b",
    "goal": "zq-goal-1c2d",
    "target": "zq-target-3e4f",
}


class LeakyPersona(Persona):
    """A persona whose hidden axes' instructions carry planted strings."""

    def instructions(self) -> list[str]:
        skill, trust, *rest = super().instructions()
        return [f"{skill} {USER_SIDE['skill']}", f"{trust} {USER_SIDE['trust']}", *rest]


def _schedule() -> dict[str, Any]:
    m = USER_SIDE

    def cooked(x: float) -> dict[str, Any]:
        return {"attr": ["patty", "cooked", ">=", x]}

    return {
        "format": "workbench-events/1",
        "scenario": "cook-patty",
        "events": [
            {"id": "q", "category": "question", "family": "count",
             "trigger": {"in": ["patty", "pan"]}, "about": {"verb": "pick", "obj": "patty"},
             "say": f"How many times have I picked up the patty? {m['question']}"},
            {"id": "r", "category": "request", "trigger": cooked(0.2),
             "about": {"item": "patty"}, "condition": cooked(1.0), "window_end": cooked(1.5),
             "say": f"Tell me when the patty is done. {m['request']}"},
            {"id": "forget", "category": "error", "type": "forgotten_step",
             "trigger": cooked(0.4), "targets": ["burner"], "skip": 1, "commit": cooked(1.5),
             "mistake": f"You forget to switch the burner off. {m['mistake']}"},
            {"id": "change", "category": "plan_change", "trigger": cooked(0.6),
             "say": f"I will also look at the plate. {m['plan_say']}",
             "plan": [f"pick up the {m['plan_cmd']}", "wait 3"]},
        ],
    }  # fmt: skip


def test_private_strings_stay_on_their_side_and_every_request_is_stored(tmp_path: Path) -> None:
    persona = LeakyPersona(name="leaky", skill="low", trust="low")
    asrv_script = assistant_script(marks=ASSISTANT_SIDE)
    usrv_script = user_script(extra=(f"pick up the {USER_SIDE['queue']}",), echo=False)
    with FakeServer(asrv_script) as asrv, FakeServer(usrv_script) as usrv:
        project = project_with(tmp_path / "p", asst=asrv, usr=usrv)
        ep = run_interactive(bound=open_scenario("cook-patty"), persona=persona,
                             user="llm", user_options={"profile": "usr"},
                             assistant="llm", assistant_options={"profile": "asst"},
                             schedule=_schedule(), project=project)  # fmt: skip
        ep.agent.user.close()  # type: ignore[attr-defined]
        ep.agent.assistant.close()  # type: ignore[attr-defined]
    eid = ep.episode_id
    assert eid is not None
    events = project.episodes.events(eid)
    assert all(e.trigger_tick is not None for e in events), [e.event_id for e in events]
    to_assistant = [json.dumps(b) for b in bodies(asrv)]
    to_user = [json.dumps(b) for b in bodies(usrv)]
    assert len(to_assistant) > 20 and len(to_user) > 10
    for field, mark in USER_SIDE.items():
        assert any(mark in b for b in to_user), f"{field} never reached the user's prompt"
        assert not any(mark in b for b in to_assistant), f"{field} leaked to the assistant"
    assert any("SYSTEM TASK" in b for b in to_user)
    assert not any("SYSTEM TASK" in b for b in to_assistant)
    for hidden in Persona(skill="low", trust="low").instructions()[:2]:  # the real texts too
        assert any(hidden in b for b in to_user) and not any(hidden in b for b in to_assistant)
    assert not any('"skill"' in b or '"trust"' in b or '"queue"' in b for b in to_assistant)
    for field, mark in ASSISTANT_SIDE.items():
        assert any(mark in b for b in to_assistant), f"{field} never reached its own memory"
        assert not any(mark in b for b in to_user), f"the assistant's {field} reached the user"
    assert not any('"flag' in b for b in to_user)
    turns = project.episodes.turns(eid)
    assert any(t.flag_target == ASSISTANT_SIDE["target"] for t in turns)  # it did flag
    # the audit: every request each server received is stored with its exchange, in order
    stored: dict[str, list[Any]] = {"assistant": [], "user": []}
    for x in project.episodes.exchanges(eid):
        stored[x.party].extend(r["messages"] for r in json.loads(x.sent_json)["requests"])
    assert stored["assistant"] == [b["messages"] for b in bodies(asrv)]
    assert stored["user"] == [b["messages"] for b in bodies(usrv)]
    project.close()
