"""Answer the video judge's OpenAI-format requests with a scripted judge (for loopback servers).

The fake server (:mod:`judge.models.loopback`) only sees HTTP bodies; this rebuilds what the
model would see (the stage, the offered tools and their schemas) and asks a scripted judge
(:func:`judge.scripted_judge`) for the reply. Import it explicitly, as the server: ``import
judge`` loads neither.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from judge.models import Responder, Tool
from judge.models.loopback import Reply, body_messages
from judge.video._scripts import perfect_judge

__all__ = ["STAGES", "stage_of", "wire_responder"]

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


def wire_responder(judge: Responder | None = None) -> Callable[[dict[str, Any], int], Reply]:
    """A FakeServer responder that plays ``judge`` (default: all-yes, two subgoals) on the
    request's stage, tools and message texts."""
    play = judge or perfect_judge()

    def respond(body: dict[str, Any], _n: int) -> Reply:
        stage, tools = stage_of(body)
        call = play(stage, body_messages(body), tools)
        return Reply(call.name, dict(call.arguments))

    return respond
