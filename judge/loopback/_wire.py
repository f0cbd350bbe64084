"""Answer the judge's OpenAI-format requests with a scripted judge (for loopback servers).

The fake server only sees HTTP bodies; this rebuilds what the model would see (the offered
tools and their schemas) and asks a scripted judge from ``judge._scripted`` for the reply.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from judge._api import Message, Tool
from judge._scripted import Responder, perfect_judge
from judge.loopback._server import Reply

STAGES = {
    "submit_plan_task": "plan_task",
    "submit_plan_physics": "plan_physics",
    "submit_dependencies": "review",
    "submit_vqa": "vqa",
}


def stage_of(body: dict[str, Any]) -> tuple[str, list[Tool]]:
    tools = [Tool(t["function"]["name"], "", t["function"]["parameters"]) for t in body["tools"]]
    names = [t.name for t in tools]
    if "submit_gate" in names:
        gate = tools[names.index("submit_gate")].parameters["properties"]["gate"]["const"]
        return f"gate:{gate}", tools
    return STAGES[names[0]], tools


def body_messages(body: dict[str, Any]) -> list[Message]:
    """The texts of an OpenAI-format request, as Messages (images left out)."""
    out = []
    for m in body["messages"]:
        content = m.get("content") or ""
        if isinstance(content, list):
            content = "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
        out.append(Message(m["role"], str(content)))
    return out


def wire_responder(judge: Responder | None = None) -> Callable[[dict[str, Any], int], Reply]:
    """A FakeServer responder that plays ``judge`` (default: all-yes, two subgoals) on the
    request's stage, tools and message texts."""
    play = judge or perfect_judge()

    def respond(body: dict[str, Any], _n: int) -> Reply:
        stage, tools = stage_of(body)
        call = play(stage, body_messages(body), tools)
        return Reply(call.name, dict(call.arguments))

    return respond
