"""Every reply the LLM assistant's schema allows is stored (issue 25: a finished episode was
lost at its commit because the schema lets a model send ``flag: null`` with a ``flag_target``,
which storage refuses). The one rule, :class:`sim.interact.AssistantReply`'s: a target belongs
to a flag, so a reply without a flag keeps no target; storage enforces the same rule.

Each shape goes through the real path: the loopback server's reply, the client's schema check,
the assistant, the interactive loop and storage — as the episode runs, and whole at the end as
a batch job commits it."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from judge.agents._llm_assistant import REPLY_SCHEMA
from judge.models.loopback import FakeServer, Reply
from sim.episode import open_scenario
from sim.interact import ERROR_TYPES, build_interactive, run_interactive
from sim.users import PROFILES
from storage import Project
from tests.judge.llm_participant_helpers import project_with

ABSENT = object()  # the field left out of the reply (only text and flag are required)
FLAGS: list[Any] = [*ERROR_TYPES, None]
TARGETS: list[Any] = ["burner", None, ABSENT]
TEXTS = ["", "Mind the burner."]
PROGRESS: list[Any] = [
    ABSENT, {}, {"completed": ["pick up the patty"], "current": "cook", "future": ["serve"],
                 "pending_requests": ["tell me when it is done"]},
    {"current": "", "seen_by_me": 3},  # the progress object takes keys of the model's own
]  # fmt: skip
GOALS: list[Any] = [ABSENT, "", "two patties instead of one"]
NOTES: list[Any] = [ABSENT, "", "the burner is on"]


def shapes() -> list[dict[str, Any]]:
    """Every flag × target, the other fields' shapes cycled through them."""
    out = []
    others = zip(itertools.cycle(TEXTS), itertools.cycle(PROGRESS), itertools.cycle(GOALS),
                 itertools.cycle(NOTES), strict=False)  # fmt: skip
    for (flag, target), (text, progress, goal, note) in zip(
        itertools.product(FLAGS, TARGETS), others, strict=False
    ):
        reply = {"text": text, "flag": flag, "flag_target": target, "progress": progress,
                 "goal_change": goal, "note": note}  # fmt: skip
        out.append({k: v for k, v in reply.items() if v is not ABSENT})
    return out


def test_the_shapes_are_the_schemas_own() -> None:
    check = Draft202012Validator(REPLY_SCHEMA)
    got = shapes()
    assert len(got) == len(FLAGS) * len(TARGETS)
    for reply in got:
        check.validate(reply)  # nothing here is a reply the schema refuses
    assert any(r["flag"] is None and r.get("flag_target") == "burner" for r in got)


@pytest.mark.parametrize("deferred", [False, True], ids=["as-it-runs", "whole-at-the-end"])
def test_every_reply_shape_the_schema_allows_is_stored(tmp_path: Path, deferred: bool) -> None:
    pending, served = shapes(), []

    def respond(_body: dict[str, Any], _n: int) -> Reply:
        reply = pending.pop(0) if pending else {"text": "", "flag": None}
        served.append(reply)
        return Reply("respond", reply)

    stored: list[str] = []
    with FakeServer(respond) as srv:
        project = project_with(tmp_path / "p", asst=srv)
        while pending:  # as many episodes as it takes to serve every shape
            kwargs: dict[str, Any] = dict(
                bound=open_scenario("cook-patty"), persona=PROFILES["balanced"],
                assistant="llm", assistant_options={"profile": "asst"},
            )  # fmt: skip
            if deferred:
                ep = build_interactive(**kwargs, defer=True, project_root=project.root)
                ep.runner.run()
                ep.runner.world.close()
                assert ep.sink is not None
                with project.transaction():  # as a batch job stores its episode
                    stored.append(ep.sink.deferred().commit(project))
            else:
                done = run_interactive(**kwargs, project=project)
                assert done.episode_id is not None
                stored.append(done.episode_id)
            ep_assistant = (ep if deferred else done).agent.assistant
            ep_assistant.close()  # type: ignore[attr-defined]
    with project:
        received = []
        for eid in stored:
            assert project.episodes.get(eid).status.value == "completed"
            received += [json.loads(str(x.received_json))
                         for x in project.episodes.exchanges(eid, "assistant")]  # fmt: skip
            for t in project.episodes.turns(eid):
                assert t.flag_target is None or t.flag is not None
    assert len(received) == len(served)
    for sent, got in zip(served, received, strict=True):
        flag = sent["flag"]
        assert got["flag"] == flag
        assert got["flag_target"] == (sent.get("flag_target") if flag else None)
        assert got["text"] == sent["text"].strip()
    flagged = [(t.flag, t.flag_target) for eid in stored for t in _turns(tmp_path, eid)]
    assert ("forgotten_step", "burner") in flagged  # a flag keeps its target


def _turns(tmp_path: Path, eid: str) -> list[Any]:
    with Project.open(tmp_path / "p") as p:
        return [t for t in p.episodes.turns(eid) if t.flag is not None]
