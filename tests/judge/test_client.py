"""The model client over real HTTP against the fake server: requests, usage, transport faults."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
import time
from typing import Any

import pytest

from judge.models import (
    CallFailed,
    Capabilities,
    FrameImage,
    Message,
    ModelCallFailed,
    ModelProfile,
    OpenAIModel,
    Tool,
)
from judge.models.loopback import Action, Delay, Drop, FakeServer, Reply, Status
from tests.judge.client_helpers import Records, profile

ANSWER = Tool(
    "answer",
    "Give the verdict.",
    {
        "type": "object",
        "properties": {"verdict": {"enum": ["yes", "no"]}, "evidence": {"type": "array"}},
        "required": ["verdict"],
        "additionalProperties": False,
    },
)
JPEG = b"\xff\xd8\xff\xe0fake-jpeg-bytes"
FRAMES = (
    FrameImage("T03", 30, 1.0, JPEG, origin="uniform_task"),
    FrameImage("P07", 96, 3.21, JPEG + b"2", roi=(0.1, 0.2, 0.5, 0.6), origin="inspect:1"),
)
MESSAGES = [
    Message("system", "You are a strict judge."),
    Message("user", "Was the cup placed in the box?", FRAMES),
]


def ask(model: OpenAIModel, tools: list[Tool] | None = None) -> Any:
    return model.call(
        stage="task.T1", prompt_version="v1", messages=MESSAGES, tools=tools or [ANSWER]
    )


def test_happy_path_validates_counts_and_records_without_images() -> None:
    records = Records()
    with FakeServer([Reply("answer", {"verdict": "yes"}, usage=(1000, 200))]) as srv:
        p = profile(srv, price_in_per_mtok=2.0, price_out_per_mtok=10.0)
        with OpenAIModel(p, recorder=records, api_key="k") as model:
            call, usage = ask(model)
        sent = srv.chat_requests[0].body

    assert call.name == "answer" and call.arguments == {"verdict": "yes"}
    assert (usage.tokens_in, usage.tokens_out) == (1000, 200)
    assert usage.cost_usd == pytest.approx(1000 * 2 / 1e6 + 200 * 10 / 1e6)
    assert model.spent_usd == pytest.approx(usage.cost_usd) and usage.latency_s > 0
    # what went over the wire
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "answer"}}
    assert sent["tools"][0]["function"]["parameters"] == dict(ANSWER.parameters)
    # never probed: the cap every local server applies (see judge/models/_capabilities.py)
    assert sent["max_tokens"] == 4096 and "max_completion_tokens" not in sent
    assert "temperature" not in sent and "reasoning_effort" not in sent
    parts = sent["messages"][1]["content"]
    assert parts[0] == {"type": "text", "text": "Was the cup placed in the box?"}
    assert parts[1] == {"type": "text", "text": "[T03 t=1.00s]"}
    assert parts[2]["image_url"]["url"] == "data:image/jpeg;base64," + base64.b64encode(
        JPEG
    ).decode("ascii")
    assert parts[3]["text"].startswith("[P07 t=3.21s")
    # what was recorded: one record, images as evidence ids, never the base64
    (rec,) = records
    assert rec.ok and rec.error is None and rec.stage == "task.T1" and rec.prompt_version == "v1"
    assert (rec.tokens_in, rec.tokens_out, rec.cost_usd, rec.latency_s) == (
        usage.tokens_in,
        usage.tokens_out,
        usage.cost_usd,
        usage.latency_s,
    )
    text = json.dumps(rec.request)
    assert "base64" not in text and base64.b64encode(JPEG).decode("ascii") not in text
    rparts = rec.request["messages"][1]["content"]
    assert {"type": "image", "evidence_id": "T03"} in rparts
    assert {"type": "image", "evidence_id": "P07"} in rparts
    assert json.loads(rec.reply)["choices"][0]["message"]["tool_calls"][0]["id"]


def test_optional_settings_and_several_tools() -> None:
    other = Tool("inspect_video", "Look closer.", {"type": "object"})
    with FakeServer([Reply("inspect_video", {"t0": 1})]) as srv:
        p = profile(srv, temperature=0.2, reasoning_effort="low", extra_headers={"X-Title": "wb"})
        call, _ = ask(OpenAIModel(p, api_key="k"), [ANSWER, other])
        req = srv.chat_requests[0]
    assert call.name == "inspect_video"
    assert req.body["tool_choice"] == "required"
    assert req.body["temperature"] == 0.2 and req.body["reasoning_effort"] == "low"
    assert {k.lower(): v for k, v in req.headers.items()}["x-title"] == "wb"


def test_429_retry_after_is_honoured_then_success() -> None:
    script: list[Action] = [Status(429, retry_after=1.0), Reply("answer", {"verdict": "no"})]
    records = Records()
    with FakeServer(script) as srv:
        call, _ = ask(OpenAIModel(profile(srv), recorder=records, api_key="k"))
        first, second = srv.chat_requests
    assert call.arguments == {"verdict": "no"}
    # The client's own backoff would wait 0.5–0.8 s; waiting the server's 1 s shows it obeyed.
    assert second.at - first.at >= 0.95
    assert len(records) == 1 and records[0].ok  # transport retries are inside one attempt


def test_500_twice_then_success() -> None:
    fail = Status(500, retry_after=0.02)
    with FakeServer([fail, fail, Reply("answer", {"verdict": "yes"})]) as srv:
        call, _ = ask(OpenAIModel(profile(srv, max_retries=4), api_key="k"))
        assert len(srv.chat_requests) == 3
    assert call.arguments == {"verdict": "yes"}


@pytest.mark.parametrize(
    ("code", "expected"),
    [(503, "still HTTP 503 after 2 retries"), (429, "rate limited: still HTTP 429 after 2")],
)
def test_persistent_server_errors_fail_retryable(code: int, expected: str) -> None:
    records = Records()
    with FakeServer(default=Status(code, "overloaded", retry_after=0.01)) as srv:
        model = OpenAIModel(profile(srv, max_retries=2), recorder=records, api_key="k")
        with pytest.raises(ModelCallFailed, match=expected) as info:
            ask(model)
        assert len(srv.chat_requests) == 3  # 1 + max_retries, bounded
    assert info.value.retryable and "overloaded" in str(info.value)
    assert isinstance(info.value, CallFailed)
    (rec,) = records
    assert not rec.ok and rec.error == str(info.value) and "overloaded" in rec.reply


def test_dropped_connection_is_retried_then_fails_retryable() -> None:
    with FakeServer(default=Drop()) as srv:
        with pytest.raises(ModelCallFailed, match="lost the connection") as info:
            ask(OpenAIModel(profile(srv, max_retries=1), api_key="k"))
        assert len(srv.chat_requests) == 2
    assert info.value.retryable and info.value.kind == "connection"


def test_timeout_fails_retryable_naming_the_limit() -> None:
    with FakeServer(default=Delay(30, Reply("answer", {"verdict": "yes"}))) as srv:
        start = time.monotonic()
        with pytest.raises(ModelCallFailed, match=r"no reply within 0.5 s") as info:
            ask(OpenAIModel(profile(srv, timeout_s=0.5, max_retries=0), api_key="k"))
        assert time.monotonic() - start < 20  # not a speed check: the server would take 30 s
    assert info.value.retryable and info.value.kind == "timeout"


def test_401_is_not_retryable_and_names_the_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WB_TEST_KEY", "sk-wrong-0000")
    with FakeServer(expected_key="sk-right-1111") as srv:
        model = OpenAIModel(profile(srv, api_key_env="WB_TEST_KEY"))
        with pytest.raises(ModelCallFailed, match=r"refused the API key \(HTTP 401\)") as info:
            ask(model)
        assert len(srv.chat_requests) == 1  # auth failures are never retried
    assert "WB_TEST_KEY" in str(info.value) and not info.value.retryable
    assert "sk-wrong-0000" not in str(info.value)


def test_404_names_the_model() -> None:
    with (
        FakeServer(models=["real-model"]) as srv,
        pytest.raises(ModelCallFailed, match="model 'gpt-nope' not found at") as info,
    ):
        ask(OpenAIModel(profile(srv, model="gpt-nope"), api_key="k"))
    assert not info.value.retryable and info.value.kind == "not_found"


def test_unreachable_port_says_cannot_reach() -> None:
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = ModelProfile(name="x", base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=0)
    with pytest.raises(ModelCallFailed, match=r"cannot reach http://127.0.0.1:\d+/v1") as info:
        ask(OpenAIModel(p, api_key="k"))
    assert info.value.retryable and "is the server running?" in str(info.value)


def test_max_completion_tokens_falls_back_to_max_tokens_once() -> None:
    """A profile probed as taking max_completion_tokens whose server then refuses it by name
    switches to max_tokens once and keeps it."""

    def responder(body: dict[str, Any], n: int) -> Any:
        if "max_completion_tokens" in body:
            msg = "Unrecognized request argument supplied: max_completion_tokens"
            return Status(400, {"error": {"message": msg, "type": "invalid_request_error"}})
        return Reply("answer", {"verdict": "yes"})

    records = Records()
    caps = Capabilities(probed_at="2026-12-06T00:00:00Z", output_cap="max_completion_tokens")
    with FakeServer(responder) as srv:
        model = OpenAIModel(profile(srv, capabilities=caps), recorder=records, api_key="k")
        ask(model)
        ask(model)
        bodies = [r.body for r in srv.chat_requests]
    assert ["max_completion_tokens" in b for b in bodies] == [True, False, False]
    assert bodies[1]["max_tokens"] == 4096
    assert [r.ok for r in records] == [False, True, True]


def test_a_server_refusing_max_tokens_gets_max_completion_tokens() -> None:
    """OpenAI's reasoning models refuse max_tokens by name: the other field, once."""

    def responder(body: dict[str, Any], n: int) -> Any:
        if "max_tokens" in body:
            msg = ("Unsupported parameter: 'max_tokens' is not supported with this model. "
                   "Use 'max_completion_tokens' instead.")  # fmt: skip
            return Status(400, {"error": {"message": msg, "type": "invalid_request_error"}})
        return Reply("answer", {"verdict": "yes"})

    with FakeServer(responder) as srv:
        model = OpenAIModel(profile(srv), api_key="k")
        ask(model)
        ask(model)
        bodies = [r.body for r in srv.chat_requests]
    assert ["max_tokens" in b for b in bodies] == [True, False, False]
    assert [b.get("max_completion_tokens") for b in bodies[1:]] == [4096, 4096]


def test_other_400_is_not_retryable() -> None:
    with FakeServer(default=Status(400, "image too large")) as srv:
        with pytest.raises(ModelCallFailed, match=r"rejected the request \(HTTP 400\): image"):
            ask(OpenAIModel(profile(srv), api_key="k"))
        assert len(srv.chat_requests) == 1


def test_importing_judge_does_not_import_openai() -> None:
    code = "import sys, judge, judge.models._client; print('openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
