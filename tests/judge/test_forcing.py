"""One tool call out of a server whatever it honours (judge/models/_forcing.py), over HTTP.

A server that ignores ``tool_choice: "required"`` (llama.cpp) gets several tools behind one
tool forced by name; one that ignores tool choice altogether but constrains output (Ollama)
gets the same choice as a JSON schema; either way the caller sees the tool it offered.
"""

from __future__ import annotations

import json
from typing import Any

from judge.models import Capabilities, Message, OpenAIModel, Tool
from judge.models.loopback import FakeServer, Reply, ReplyText
from tests.judge.client_helpers import Records, profile

SCHEMA: dict[str, Any] = {"type": "object", "properties": {"what": {"type": "string"}},
                          "required": ["what"], "additionalProperties": False}  # fmt: skip
TOOLS = [Tool(n, f"Use {n}.", SCHEMA) for n in ("pick", "place", "wait")]
PROBED = "2026-12-06T00:00:00Z"


def _ask(model: OpenAIModel) -> Any:
    return model.call(stage="act", prompt_version="t", tools=TOOLS,
                      messages=[Message("user", "Pick up the cup.")])  # fmt: skip


def test_required_honoured_offers_the_tools_as_they_are() -> None:
    with FakeServer([Reply("place", {"what": "cup"})]) as srv:
        call, _ = _ask(OpenAIModel(profile(srv), api_key="k"))
        body = srv.chat_requests[0].body
    assert call.name == "place" and body["tool_choice"] == "required"
    assert [t["function"]["name"] for t in body["tools"]] == ["pick", "place", "wait"]


def test_required_ignored_wraps_the_tools_in_one_named_tool() -> None:
    caps = Capabilities(probed_at=PROBED, required_tool=False)
    records = Records()
    reply = Reply("call_one_tool", {"tool": "pick", "arguments": {"what": "cup"}})
    with FakeServer([reply]) as srv:
        call, _ = _ask(OpenAIModel(profile(srv, capabilities=caps), recorder=records,
                                   api_key="k"))  # fmt: skip
        body = srv.chat_requests[0].body
    assert call.name == "pick" and call.arguments == {"what": "cup"}
    assert body["tool_choice"] == {"type": "function", "function": {"name": "call_one_tool"}}
    (wrapper,) = body["tools"]
    branches = wrapper["function"]["parameters"]["oneOf"]
    assert [b["properties"]["tool"]["const"] for b in branches] == ["pick", "place", "wait"]
    assert records[-1].ok  # the audit keeps the request as sent: the wrapper


def test_a_wrapped_call_to_an_unknown_tool_is_reasked() -> None:
    caps = Capabilities(probed_at=PROBED, required_tool=False)
    bad = Reply("call_one_tool", {"tool": "fly", "arguments": {"what": "cup"}})
    good = Reply("call_one_tool", {"tool": "wait", "arguments": {"what": "now"}})
    with FakeServer([bad, good]) as srv:
        call, _ = _ask(OpenAIModel(profile(srv, capabilities=caps), api_key="k"))
        reask = srv.chat_requests[1].body["messages"]
    assert call.name == "wait"
    assert reask[-2]["role"] == "assistant" and reask[-2]["content"] == ""  # never null
    assert reask[-1]["role"] == "tool"


def test_no_tool_choice_at_all_asks_for_the_choice_as_a_json_schema() -> None:
    caps = Capabilities(probed_at=PROBED, named_tool=False, required_tool=False, json_schema=True)
    content = json.dumps({"tool": "place", "arguments": {"what": "box"}})
    with FakeServer([ReplyText(content)]) as srv:
        call, _ = _ask(OpenAIModel(profile(srv, capabilities=caps), api_key="k"))
        body = srv.chat_requests[0].body
    assert call.name == "place" and call.arguments == {"what": "box"}
    assert "tools" not in body and body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "call_one_tool"


def test_large_length_bounds_stay_off_the_wire_and_are_still_checked() -> None:
    """llama.cpp unrolled a 2,000-character maxLength into a grammar it could not parse, and
    the server died; the bound is the client's to check."""
    note = Tool("note", "Write a note.", {
        "type": "object", "properties": {"text": {"type": "string", "maxLength": 2000},
                                         "tag": {"type": "string", "maxLength": 8}},
        "required": ["text"], "additionalProperties": False})  # fmt: skip
    with FakeServer([Reply("note", {"text": "x" * 2001}), Reply("note", {"text": "ok"})]) as srv:
        call, _ = OpenAIModel(profile(srv), api_key="k").call(
            stage="n", prompt_version="t", tools=[note], messages=[Message("user", "Note.")]
        )
        sent = srv.chat_requests[0].body["tools"][0]["function"]["parameters"]
    assert "maxLength" not in sent["properties"]["text"]  # off the wire
    assert sent["properties"]["tag"]["maxLength"] == 8  # a small bound a grammar can hold
    assert call.arguments == {"text": "ok"} and len(srv.chat_requests) == 2  # still enforced
