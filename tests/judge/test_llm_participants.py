"""The LLM assistant and the LLM simulated user through the real client against the loopback
server (real HTTP): whole stored episodes that replay tick for tick, the audit of every request
sent, repairs of malformed replies, the client's retries, and the options the registry takes."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from annotation import UserError
from judge import Capabilities, LLMAssistant, LLMUser, ModelParticipantError
from judge.models.loopback import Action, BadArgs, FakeServer, Reply, Status, Unauthorized
from sim.episode import open_scenario
from sim.interact import (
    ASSISTANTS,
    USERS,
    AssistantView,
    Frame,
    Line,
    ParticipantError,
    Setup,
    UserTurn,
    UserView,
    make_assistant,
    make_user,
    replay_interactive,
    run_interactive,
)
from sim.users import PROFILES
from storage import ProfileNotFoundError, Project
from tests.judge.client_helpers import profile
from tests.judge.llm_participant_helpers import (
    assistant_script,
    bodies,
    data_of,
    project_with,
    user_script,
)


def _stored_requests(project: Project, eid: str, party: str) -> list[dict[str, Any]]:
    out = []
    for x in project.episodes.exchanges(eid):
        if x.party == party:
            out.extend(json.loads(x.sent_json).get("requests", []))
    return out


def test_llm_assistant_episode_is_audited_stored_and_replayed_tick_for_tick(
    tmp_path: Path,
) -> None:
    with FakeServer(assistant_script()) as srv:
        project = project_with(tmp_path / "p", asst=srv)
        ep = run_interactive(bound=open_scenario("cook-patty"), persona=PROFILES["balanced"],
                             assistant="llm", assistant_options={"profile": "asst"},
                             timing="measured", project=project)  # fmt: skip
        ep.agent.assistant.close()  # type: ignore[attr-defined]
    eid = ep.episode_id
    assert eid is not None and ep.runner.result is not None
    sent = bodies(srv)
    asked = [x for x in project.episodes.exchanges(eid) if x.party == "assistant"]
    assert len(asked) == len(sent) > 20  # one request per query: no repair was needed
    # the audit: each stored exchange holds the messages exactly as the server received them
    for x, body in zip(asked, sent, strict=True):
        (req,) = json.loads(x.sent_json)["requests"]
        assert req["messages"] == body["messages"] and req["ok"]
        assert req["tools"] == ["respond"] and req["params"]["model"] == "fake-model"
        assert x.latency_s is not None and x.latency_s > 0  # measured, and what set the delay
        assert x.due_tick == x.tick + -(-round(x.latency_s * 1000) // 100)
    # the model's warning is a flagged turn; the rule user came round and switched it off
    turns = project.episodes.turns(eid)
    assert any(t.flag == "forgotten_step" and t.flag_target == "burner" for t in turns)
    events = {e.event_id: e for e in project.episodes.events(eid)}
    assert events["burner-left-on"].resolution == "accepted"
    assert ep.runner.result.metrics["success"] == 1.0
    # the frames sent are the last 8 observations, as scene text (symbolic: no images)
    last = data_of(sent[-1]["messages"][2])
    assert len(last["frames"]) == 8 and all("scene" in f for f in last["frames"])
    report = replay_interactive(project, eid)  # no model: the recorded replies and latencies
    assert report.identical and report.compared == ep.runner.result.ticks + 1
    project.close()


def test_llm_user_episode_with_the_oracle_is_stored_and_replayed_exactly(tmp_path: Path) -> None:
    with FakeServer(user_script()) as srv:
        project = project_with(tmp_path / "p", usr=srv)
        ep = run_interactive(bound=open_scenario("cook-patty"), persona=PROFILES["balanced"],
                             user="llm", user_options={"profile": "usr"},
                             project=project)  # fmt: skip
        ep.agent.user.close()  # type: ignore[attr-defined]
    eid = ep.episode_id
    assert eid is not None and ep.runner.result is not None
    stored = _stored_requests(project, eid, "user")
    assert [r["messages"] for r in stored] == [b["messages"] for b in bodies(srv)]
    assert all(r["tools"] == ["user_turn"] for r in stored)
    turns = project.episodes.turns(eid)
    moves = [(t.speaker, t.move) for t in turns]
    assert ("user", "ask") in moves and ("user", "request") in moves and ("user", "accept") in moves
    said = [t.text for t in turns if t.speaker == "user"]
    assert "How many times have I picked up the patty?" in said  # its SYSTEM TASK, in its words
    assert "Once, 1 time." in [t.text for t in turns if t.speaker == "assistant"]
    events = {e.event_id: e for e in project.episodes.events(eid)}
    assert events["burner-left-on"].resolution == "accepted"
    assert ep.runner.result.metrics["success"] == 1.0
    report = replay_interactive(project, eid)
    assert report.identical and report.compared == ep.runner.result.ticks + 1
    project.close()


# ---- one participant, one call -----------------------------------------------------------------
def _view(**kw: Any) -> AssistantView:
    base: dict[str, Any] = dict(
        tick=6, seconds=0.6, instruction="Cook the patty.", steps=("pick up the patty",),
        preferences={"speed": "balanced", "interruption": "moderate"},
        conversation=(Line(2, "user", "Hi"),),
        frames=tuple(Frame(t, {"patty": f"on table, raw {t}"}) for t in range(0, 7, 2)),
        memory={"text": "", "progress": {"current": "pick up the patty"}, "note": "n"},
    )  # fmt: skip
    return AssistantView(**{**base, **kw})


def _user_view(**kw: Any) -> UserView:
    base: dict[str, Any] = dict(
        tick=3, reason="idle", instruction="Cook the patty.", persona=("p1", "p2", "p3", "p4"),
        preferences={"speed": "balanced"}, holding=None, current=None, queue=(),
        controlled_by="user", feedback=(), done_steps=0, conversation=(), system_task=None,
    )  # fmt: skip
    return UserView(**{**base, **kw})


GOOD = Reply("respond", {"text": "Pick up the patty.", "flag": None, "note": "told"})


def test_a_malformed_reply_is_repaired_once_then_the_assistant_stays_silent() -> None:
    script: list[Action] = [
        BadArgs("respond", '{"text": '),
        GOOD,  # repaired by the re-ask
        Reply("respond", {"text": "x", "flag": "burnt"}),
        BadArgs("respond", "nope"),
    ]
    with FakeServer(script) as srv:
        assistant = LLMAssistant(profile(srv, api_key_env="", schema_retries=1))
        view = _view()
        reply, latency = assistant.respond(view)
        assert reply.text == "Pick up the patty." and latency > 0
        first, second = view.requests
        assert not first["ok"] and "not valid JSON" in first["error"]
        assert second["ok"] and second["messages"][-1]["role"] == "tool"  # the correction
        assert "not valid JSON" in second["messages"][-1]["content"]
        view2 = _view(tick=8)
        reply2, _ = assistant.respond(view2)  # bad enum, then not JSON: silence, memory kept
        assert reply2.text == "" and reply2.flag is None
        assert reply2.progress == {"current": "pick up the patty"}
        assert [r["ok"] for r in view2.requests] == [False, False]
        assert "'burnt' is not one of" in view2.requests[0]["error"]
        assert len(srv.chat_requests) == 4
        assistant.close()


def test_a_malformed_user_reply_is_repaired_once_then_the_user_waits_silently() -> None:
    bad_move = Reply("user_turn", {"utterance": "hm", "move": "shrug", "plan": "retain"})
    good = Reply(
        "user_turn",
        {
            "utterance": "Okay.",
            "move": "accept",
            "plan": "append",
            "commands": ["pick up the patty"],
            "error_call": None,
        },
    )
    with FakeServer([bad_move, good, bad_move, bad_move]) as srv:  # fmt: skip
        user = LLMUser(profile(srv, api_key_env="", schema_retries=1))
        turn = user.turn(_user_view())
        assert turn == UserTurn("Okay.", "accept", "append", ("pick up the patty",))
        view = _user_view(tick=4)
        assert user.turn(view) == UserTurn()  # continue, queue retained
        assert [r["ok"] for r in view.requests] == [False, False]
        user.close()


def test_a_server_error_is_retried_by_the_client_and_the_exact_request_resent() -> None:
    with FakeServer([Status(500, retry_after=0.01), GOOD]) as srv:
        assistant = LLMAssistant(profile(srv, api_key_env="", max_retries=2))
        view = _view()
        reply, _ = assistant.respond(view)
        assert reply.text == "Pick up the patty."
        a, b = srv.chat_requests
        assert a.body == b.body  # the same request, resent by the client
        (req,) = view.requests  # one request in the audit: what the model answered
        assert req["ok"] and req["messages"] == b.body["messages"]
        assistant.close()


def test_endpoint_failures_are_user_errors_naming_the_profile() -> None:
    with FakeServer([Unauthorized()]) as srv:
        assistant = LLMAssistant(profile(srv, name="asst", api_key_env="", max_retries=0))
        with pytest.raises(ModelParticipantError, match=r"'asst'.*refused the API key") as e:
            assistant.respond(_view())
        assert isinstance(e.value, UserError) and not e.value.retryable
    with FakeServer([Status(503, no_retry=True)]) as srv:
        user = LLMUser(profile(srv, name="usr", api_key_env="", max_retries=0))
        with pytest.raises(ModelParticipantError, match=r"simulated user llm.*'usr'") as e:
            user.turn(_user_view())
        assert e.value.retryable and e.value.kind == "server"


def test_frames_with_images_are_sent_as_images_and_audited_by_sha256() -> None:
    _ok, buf = cv2.imencode(".jpg", np.full((8, 8, 3), 90, np.uint8))
    jpeg = bytes(buf.tobytes())
    sha = "ab" * 32
    frames = (
        Frame(2, {"patty": "on table, raw"}),
        Frame(4, {"patty": "held"}, image=sha),
        Frame(6, {"patty": "held"}, image="cd" * 32),
    )  # this one's image is not available
    with FakeServer([GOOD]) as srv:  # fmt: skip
        assistant = LLMAssistant(profile(srv, api_key_env=""), window=2,
                                 images=lambda s: jpeg if s == sha else None)  # fmt: skip
        view = _view(frames=frames)
        assistant.respond(view)
        body = srv.chat_requests[0].body
        assistant.close()
    parts = body["messages"][2]["content"]
    urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
    assert urls == ["data:image/jpeg;base64," + base64.b64encode(jpeg).decode()]
    sent = data_of(body["messages"][2])["frames"]
    assert sent == [{"tick": 4, "seconds": 0.4, "image": "F1"},  # the window: the last two
                    {"tick": 6, "seconds": 0.6, "scene": {"patty": "held"}}]  # fmt: skip
    (req,) = view.requests
    audited = req["messages"][2]["content"]
    assert {"type": "image", "evidence_id": "F1", "sha256": sha} in audited
    assert "base64" not in json.dumps(view.to_json())  # the stored form holds no pixels


def test_forked_assistant_sends_the_same_next_request() -> None:
    replies = [Reply("respond", {"text": "", "flag": None, "note": f"note {i}"}) for i in range(3)]
    with FakeServer(replies) as srv:
        a = LLMAssistant(profile(srv, api_key_env=""), memory=1)
        a.respond(_view(tick=2))
        a.respond(_view(tick=4))
        b = LLMAssistant(profile(srv, api_key_env=""), memory=1)
        b.restore(json.loads(json.dumps(a.state())))
        assert b.messages(_view(tick=6)) == a.messages(_view(tick=6))
        msgs, _ = a.messages(_view(tick=6))
        memory = data_of({"content": msgs[2].text})["memory"]
        assert [n["note"] for n in memory["earlier_notes"]] == ["note 0"]  # capped at 1
        a.close()
        b.close()


# ---- the registry and its options --------------------------------------------------------------
def test_llm_participants_are_registered_and_refuse_bad_options(tmp_path: Path) -> None:
    assert "llm" in ASSISTANTS and "llm" in USERS
    bound = open_scenario("cook-patty")
    with FakeServer([Reply("respond", {"text": "", "flag": None})]) as srv:
        project = project_with(tmp_path / "p", asst=srv)

        def setup(**options: Any) -> Setup:
            return Setup(bound, PROFILES["balanced"], 1, options, project.root)

        with pytest.raises(ParticipantError, match="option profile"):
            make_assistant("llm", setup())
        with pytest.raises(ParticipantError, match="unknown option 'windw'"):
            make_assistant("llm", setup(profile="asst", windw=3))
        with pytest.raises(ParticipantError, match=r"option window: expected 1\.\.32, not 0"):
            make_assistant("llm", setup(profile="asst", window=0))
        with pytest.raises(ParticipantError, match="option temperature"):
            make_assistant("llm", setup(profile="asst", temperature=9))
        with pytest.raises(ProfileNotFoundError, match="'nope'"):
            make_user("llm", setup(profile="nope"))
        with pytest.raises(ParticipantError, match="needs a project"):
            make_user("llm", Setup(bound, PROFILES["balanced"], 1, {"profile": "asst"}))
        a = make_assistant("llm", setup(profile="asst", window="3", temperature=0.3))
        assert isinstance(a, LLMAssistant) and a.window == 3
        a.respond(_view())
        body = srv.chat_requests[0].body
        assert body["temperature"] == 0.3 and len(data_of(body["messages"][2])["frames"]) == 3
        a.close()
        project.close()


def test_a_text_only_model_gets_the_words_without_the_frames() -> None:
    """A model that refuses image parts (llama.cpp's template: HTTP 500 on list content) is
    asked again without them, and from then on never sent them; a probed text-only profile
    is never sent any."""
    _ok, buf = cv2.imencode(".jpg", np.full((8, 8, 3), 90, np.uint8))
    jpeg, sha = bytes(buf.tobytes()), "ab" * 32
    frames = (Frame(2, {"patty": "on table, raw"}), Frame(4, {"patty": "held"}, image=sha))

    def text_only(body: dict[str, Any], _n: int) -> Any:
        if any(isinstance(m.get("content"), list) for m in body["messages"]):
            return Status(500, 'can only concatenate str (not "list") to str')
        return GOOD

    with FakeServer(text_only) as srv:
        assistant = LLMAssistant(profile(srv, api_key_env="", max_retries=3), window=2,
                                 images=lambda s: jpeg if s == sha else None)  # fmt: skip
        first, second = _view(frames=frames), _view(frames=frames)
        reply, _ = assistant.respond(first)
        assistant.respond(second)
        assistant.close()
        lists = [any(isinstance(m.get("content"), list) for m in r.body["messages"])
                 for r in srv.chat_requests]  # fmt: skip
    assert reply.text  # the episode goes on: the words were enough
    assert lists == [True, False, False]  # one refusal, never retried, never sent again
    caps = Capabilities(probed_at="2026-12-06T00:00:00Z", images=False)
    with FakeServer(text_only) as srv:
        assistant = LLMAssistant(profile(srv, api_key_env="", capabilities=caps), window=2,
                                 images=lambda s: jpeg)  # fmt: skip
        assistant.respond(_view(frames=frames))
        assistant.close()
        assert len(srv.chat_requests) == 1
        assert all(not isinstance(m.get("content"), list)
                   for m in srv.chat_requests[0].body["messages"])  # fmt: skip
