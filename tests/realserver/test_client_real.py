"""The model client against a real llama.cpp server: what it honours, measured, then used.

Each test names the failure it guards, seen first against this server (issue 25): the output
cap sent in a field the server ignores, a re-ask the server refuses with HTTP 500, several
tools offered with a ``tool_choice`` the server ignores, images sent to a text-only model.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from judge.models import (
    FrameImage,
    Message,
    ModelCallFailed,
    OpenAIModel,
    Tool,
    encode_jpeg,
    probe_capabilities,
)
from storage import RunCall
from tests.realserver.conftest import real_profile

STORY = Tool(
    "tell",
    "Tell the story.",
    {"type": "object", "properties": {"story": {"type": "string"}}, "required": ["story"],
     "additionalProperties": False},
)  # fmt: skip
# A bound a grammar built from the schema does not enforce: the model breaks it, and the client
# must re-ask (the path whose assistant message carried content null).
EXACT = Tool(
    "answer",
    "Give the number.",
    {"type": "object", "properties": {"value": {"type": "integer", "minimum": 1000,
                                                "maximum": 1000}},
     "required": ["value"], "additionalProperties": False},
)  # fmt: skip


def _tools(*names: str) -> list[Tool]:
    schema: dict[str, Any] = {"type": "object", "properties": {"what": {"type": "string"}},
                              "required": ["what"], "additionalProperties": False}  # fmt: skip
    return [Tool(n, f"Use {n}.", schema) for n in names]


def test_the_probe_measures_the_servers_quirks(real_url: str) -> None:
    caps = probe_capabilities(real_profile(real_url))
    assert caps.probed
    # llama-cpp-python 0.3.x: applies max_tokens only, honours a tool named in tool_choice,
    # ignores "required", cannot render image parts, refuses content null beside tool_calls
    assert caps.output_cap == "max_tokens"
    assert caps.named_tool and not caps.required_tool and caps.tool_forcing == "wrapped"
    assert not caps.images and not caps.null_content
    assert any("max_completion_tokens is ignored" in n for n in caps.notes)


def test_the_output_cap_is_one_the_server_applies(real_url: str) -> None:
    """A runaway reply once held the server 201 s: the cap went in max_completion_tokens."""
    seen: list[RunCall] = []
    profile = real_profile(real_url, max_output_tokens=12, schema_retries=0)
    with OpenAIModel(profile, recorder=seen.append) as model, pytest.raises(ModelCallFailed):
        model.call(
            stage="cap",
            prompt_version="t",
            tools=[STORY],
            messages=[
                Message("user", "Write a very long story of at least 500 words about a robot.")
            ],
        )
    assert seen and all(r.tokens_out <= 12 for r in seen), [r.tokens_out for r in seen]


def test_a_reask_after_a_schema_mistake_is_accepted(real_url: str) -> None:
    """The re-ask once sent content null beside tool_calls: HTTP 500, retried, episode over."""
    seen: list[RunCall] = []
    profile = real_profile(real_url, schema_retries=2, max_retries=0)
    with OpenAIModel(profile, recorder=seen.append) as model:
        try:
            call, _ = model.call(stage="reask", prompt_version="t", tools=[EXACT],
                                 messages=[Message("user", "Say the number 7.")])  # fmt: skip
            assert call.arguments["value"] == 1000
        except ModelCallFailed as err:
            assert err.kind == "schema", err  # still wrong after the re-asks: not a 500
    assert len(seen) >= 2, "the model was right the first time; the re-ask was not exercised"
    assert all("HTTP 5" not in (r.error or "") for r in seen), [r.error for r in seen]
    reask = seen[1].request["messages"]
    assert all(m.get("content") is not None for m in reask)


def test_one_of_several_tools_is_called_although_required_is_ignored(real_url: str) -> None:
    """The tool agent never acted: with five tools the server ignored tool_choice "required"."""
    profile = real_profile(real_url)
    probed = profile.model_copy(update={"capabilities": probe_capabilities(profile)})
    names = ("pick", "place", "open", "close", "wait")
    seen: list[RunCall] = []
    with OpenAIModel(probed, recorder=seen.append) as model:
        call, usage = model.call(stage="act", prompt_version="t", tools=_tools(*names),
                                 messages=[Message("user", "Pick up the cup.")])  # fmt: skip
    assert call.name in names and isinstance(call.arguments.get("what"), str)
    assert usage.tokens_out > 0
    assert seen[-1].request["tool_choice"]["function"]["name"] == "call_one_tool"


def test_images_to_a_text_only_model_fail_at_once_in_words(real_url: str) -> None:
    """A text-only model got images; the job said "template crash" and retried it 15 times."""
    frame = FrameImage("T01", 0, 0.0, encode_jpeg(np.full((32, 32, 3), 90, np.uint8), roi=None,
                                                  max_side=32, quality=80))  # fmt: skip
    msg = [Message("user", "Is the cup in the box?", images=(frame,))]
    seen: list[RunCall] = []
    unprobed = real_profile(real_url, max_retries=3)
    with (
        OpenAIModel(unprobed, recorder=seen.append) as model,
        pytest.raises(ModelCallFailed) as info,
    ):
        model.call(stage="gate", prompt_version="t", messages=msg, tools=[EXACT])
    assert info.value.kind == "unsupported_content" and not info.value.retryable
    assert "images" in str(info.value)
    probed = unprobed.model_copy(update={"capabilities": probe_capabilities(unprobed)})
    before = len(seen)
    with (
        OpenAIModel(probed, recorder=seen.append) as model,
        pytest.raises(ModelCallFailed, match="takes no images"),
    ):
        model.call(stage="gate", prompt_version="t", messages=msg, tools=[EXACT])
    assert len(seen) == before  # refused before anything was sent
