"""The model client's reply checks, re-asks, spend cap and key hygiene (fake server, real HTTP)."""

from __future__ import annotations

import json
import logging
import random
import traceback
from typing import Any

import pytest

from judge.models import Message, ModelCallFailed, OpenAIModel, SpendCapReached, Tool
from judge.models.loopback import (
    Action,
    BadArgs,
    FakeServer,
    Malformed,
    RawJSON,
    Reply,
    ReplyText,
    Status,
    completion,
    tool_message,
)
from tests.judge.client_helpers import Records, profile

ANSWER = Tool(
    "answer",
    "Give the verdict.",
    {
        "type": "object",
        "properties": {
            "verdict": {"enum": ["yes", "no"]},
            "evidence": {"type": "array", "items": {"type": "string", "pattern": "^[TP][0-9]+$"}},
        },
        "required": ["verdict"],
        "additionalProperties": False,
    },
)
GOOD = Reply("answer", {"verdict": "yes", "evidence": ["T03"]})
MESSAGES = [Message("system", "Judge."), Message("user", "Is the cup in the box?")]
KEY = "sk-test-SECRET-123"


def ask(model: OpenAIModel) -> Any:
    return model.call(stage="s", prompt_version="v1", messages=MESSAGES, tools=[ANSWER])


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (Malformed(), "not a chat completion"),
        (ReplyText("I think yes."), "no tool call in the reply"),
        (BadArgs("answer", '{"verdict": '), "not valid JSON"),
        (BadArgs("answer", '{"verdict": "maybe"}'), "$.verdict: 'maybe' is not one of"),
        (Reply("other_tool", {"verdict": "yes"}), "unknown tool 'other_tool'"),
    ],
)
def test_invalid_reply_is_reasked_then_succeeds(bad: Action, error: str) -> None:
    records = Records()
    with FakeServer([bad, GOOD]) as srv:
        call, _ = ask(OpenAIModel(profile(srv), recorder=records, api_key="k"))
        first, second = (r.body for r in srv.chat_requests)
    assert call.arguments == {"verdict": "yes", "evidence": ["T03"]}
    assert [r.ok for r in records] == [False, True]
    assert error in (records[0].error or "")
    added = second["messages"][len(first["messages"]) :]
    if isinstance(bad, Malformed):
        assert added == []  # nothing to quote back: the same request again
    elif isinstance(bad, ReplyText):
        assert added[0] == {"role": "assistant", "content": "I think yes."}
        assert added[-1]["role"] == "user" and error in added[-1]["content"]
    else:  # a tool call is answered by a tool message carrying the error
        assert added[0]["role"] == "assistant" and added[0]["tool_calls"]
        assert added[1]["role"] == "tool" and added[1]["tool_call_id"] == "call_0"
        assert error in added[1]["content"]


def test_two_tool_calls_are_rejected() -> None:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "answer", "arguments": "{}"}}
        for i in range(2)
    ]
    msg = {"role": "assistant", "content": None, "tool_calls": calls}
    records = Records()
    with FakeServer([RawJSON(completion(msg, (5, 5), "m", 0, "tool_calls")), GOOD]) as srv:
        ask(OpenAIModel(profile(srv), recorder=records, api_key="k"))
        second = srv.chat_requests[1].body
    assert "2 tool calls in the reply" in (records[0].error or "")
    assert [m["tool_call_id"] for m in second["messages"] if m["role"] == "tool"] == ["c0", "c1"]


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        (ReplyText("no"), "did not match the answer schema after 3 tries: no tool call"),
        (
            BadArgs("answer", '{"verdict": "yes", "evidence": ["frame 3"]}'),
            "did not match the answer schema after 3 tries: $.evidence[0]: 'frame 3' does not",
        ),
    ],
)
def test_persistent_invalid_replies_fail_bounded(bad: Action, expected: str) -> None:
    records = Records()
    with FakeServer(default=bad) as srv:
        p = profile(srv, schema_retries=2, price_in_per_mtok=1.0)
        model = OpenAIModel(p, recorder=records, api_key="k")
        with pytest.raises(ModelCallFailed) as info:
            ask(model)
        assert len(srv.chat_requests) == 3  # 1 + schema_retries
    assert expected in str(info.value)
    assert not info.value.retryable and info.value.kind == "schema"
    assert len(records) == 3 and not any(r.ok for r in records)
    assert model.spent_usd > 0  # invalid replies that reported usage were billed


def test_truncated_reply_says_so() -> None:
    msg = {
        "role": "assistant",
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "answer", "arguments": '{"ve'}}
        ],
    }
    cut = RawJSON(completion(msg, (5, 4096), "m", 0, "length"))
    with FakeServer(default=cut) as srv, pytest.raises(ModelCallFailed, match="cut at max_out"):
        ask(OpenAIModel(profile(srv, schema_retries=0), api_key="k"))


# ---- spend cap --------------------------------------------------------------------------------
PRICE_OUT = 0.8 / 4096 * 1e6  # a full 4096-token reply costs exactly $0.80


def test_third_call_hits_the_cap_without_a_request() -> None:
    with FakeServer(default=Reply("answer", {"verdict": "yes"}, usage=(10, 4096))) as srv:
        p = profile(srv, price_out_per_mtok=PRICE_OUT, spend_cap_usd=2.0)
        model = OpenAIModel(p, api_key="k")
        ask(model)
        ask(model)
        assert model.spent_usd == pytest.approx(1.6)
        with pytest.raises(SpendCapReached, match="no request was sent"):
            ask(model)
        assert len(srv.chat_requests) == 2
    assert model.spent_usd <= 2.0


def test_spend_never_exceeds_the_cap_over_many_calls() -> None:
    rng = random.Random(7)

    def responder(body: dict[str, Any], n: int) -> Action:
        if rng.random() < 0.2:
            return BadArgs("answer", "{}", usage=(rng.randint(0, 60), rng.randint(0, 4096)))
        return Reply("answer", {"verdict": "no"}, usage=(rng.randint(0, 60), rng.randint(0, 4096)))

    with FakeServer(responder) as srv:
        p = profile(srv, price_in_per_mtok=30.0, price_out_per_mtok=PRICE_OUT, spend_cap_usd=3.0)
        model = OpenAIModel(p, spend_cap_usd=1.5, api_key="k")  # the argument wins
        for _ in range(200):
            try:
                ask(model)
            except SpendCapReached:
                break
            except ModelCallFailed:
                pass
            assert model.spent_usd <= 1.5
        else:
            pytest.fail("the cap was never reached")
        sent = len(srv.chat_requests)
    assert model.spent_usd <= 1.5 and sent >= 2


def test_reply_without_usage_is_booked_at_the_worst_case() -> None:
    body = completion(tool_message("answer", '{"verdict": "yes"}', 0), None, "m", 0, "stop")
    with FakeServer([RawJSON(body)]) as srv:
        model = OpenAIModel(profile(srv, price_out_per_mtok=PRICE_OUT), api_key="k")
        _, usage = ask(model)
    assert usage.cost_usd == pytest.approx(0.8)  # no input price: 4096 output tokens
    assert model.spent_usd == usage.cost_usd


def test_cap_reserves_images_at_their_worst_case() -> None:
    from judge.models import FrameImage

    frames = tuple(FrameImage(f"P{i:02d}", i, i / 10, b"jpeg") for i in range(24))
    with FakeServer(default=GOOD) as srv:
        # 24 images x 800 tokens at $100/Mtok = $1.92 worst case > $1.50 cap
        p = profile(srv, price_in_per_mtok=100.0, spend_cap_usd=1.5)
        with pytest.raises(SpendCapReached):
            OpenAIModel(p, api_key="k").call(
                stage="s",
                prompt_version="v",
                messages=[Message("user", "x", frames)],
                tools=[ANSWER],
            )
        assert srv.chat_requests == []


# ---- the key goes to the Authorization header and nowhere else ---------------------------------
def test_key_reaches_the_server_but_no_record_log_or_error(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:

    caplog.set_level(logging.DEBUG)  # every logger, the openai and HTTP libraries' too
    monkeypatch.setenv("WB_SECRET_KEY", KEY)
    echo = {"error": {"message": f"upstream said: Authorization: Bearer {KEY} bad", "type": "x"}}
    script: list[Action] = [
        GOOD,
        BadArgs("answer", '{"verdict": 1}'),
        ReplyText(f"here is your key {KEY}"),
        Reply("answer", {"verdict": "no"}),
        Status(500, echo, retry_after=0.01),
    ]
    records = Records()
    errors: list[BaseException] = []
    with FakeServer(script, expected_key=KEY) as srv:
        p = profile(srv, api_key_env="WB_SECRET_KEY", max_retries=0)
        model = OpenAIModel(p, recorder=records)
        ask(model)  # ok
        ask(model)  # two invalid replies (one quoting the key), then ok
        with pytest.raises(ModelCallFailed) as info:
            ask(model)  # a 500 whose body echoes the Authorization header
        errors.append(info.value)
        srv.expected_key = "sk-other"
        with pytest.raises(ModelCallFailed) as info:
            ask(model)  # a 401 whose body echoes the key we sent
        errors.append(info.value)
        auth = [r.authorization for r in srv.chat_requests]
    assert auth and all(a == f"Bearer {KEY}" for a in auth)
    assert len(records) == 6
    for rec in records:
        assert KEY not in json.dumps(rec.request) + rec.reply + (rec.error or "")
    for log_record in caplog.records:
        assert KEY not in log_record.getMessage()
    for err in errors:
        text = "".join(traceback.format_exception(err)) + repr(err)
        assert KEY not in text
