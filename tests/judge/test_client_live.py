"""One tiny call against a real endpoint; runs only with WB_LIVE_BASE_URL and WB_LIVE_MODEL set
(``make test-real`` sets them to its llama.cpp server; point them at any endpoint of yours).

The key comes from the usual place (``WB_LIVE_API_KEY_ENV`` names the variable, default
OPENAI_API_KEY; set it to an empty string for endpoints that need no key).
"""

from __future__ import annotations

import os

import pytest

from judge.models import Message, ModelProfile, OpenAIModel, Tool
from tests.judge.client_helpers import Records

pytestmark = pytest.mark.live


@pytest.mark.skipif(
    not (os.environ.get("WB_LIVE_BASE_URL") and os.environ.get("WB_LIVE_MODEL")),
    reason="set WB_LIVE_BASE_URL and WB_LIVE_MODEL to run against a real endpoint",
)
def test_one_tiny_live_call() -> None:
    profile = ModelProfile(
        name="live-test",
        base_url=os.environ["WB_LIVE_BASE_URL"],
        model=os.environ["WB_LIVE_MODEL"],
        api_key_env=os.environ.get("WB_LIVE_API_KEY_ENV", "OPENAI_API_KEY"),
        max_output_tokens=256,
        timeout_s=60,
        spend_cap_usd=0.05,
    )
    tool = Tool(
        "answer",
        "Answer the arithmetic question.",
        {
            "type": "object",
            "properties": {"value": {"type": "integer"}},
            "required": ["value"],
            "additionalProperties": False,
        },
    )
    records = Records()
    with OpenAIModel(profile, recorder=records) as model:
        call, usage = model.call(
            stage="live",
            prompt_version="live-1",
            messages=[Message("user", "What is 2 + 3? Call the answer tool.")],
            tools=[tool],
        )
    # The workbench's promise, not the model's: one schema-checked call, recorded with its
    # tokens. Whether the value is 5 is the model's business (CI's 135M model often says 2).
    assert call.name == "answer" and isinstance(call.arguments["value"], int)
    assert records and records[-1].ok and usage.latency_s > 0
    assert usage.tokens_in > 0 and usage.tokens_out > 0 and records[-1].tokens_out > 0
