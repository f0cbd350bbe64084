"""How a request gets exactly one tool call out of a server, whatever it honours.

Three ways, chosen from the profile's :class:`~judge.models.Capabilities`:

- ``tool_choice``: the tools as offered, one of them forced by name, or ``"required"`` for
  several (OpenAI, vLLM ≥ 0.8.3);
- ``wrapped``: several tools behind one tool forced by name, ``call_one_tool`` whose arguments
  are ``{"tool": <name>, "arguments": {…}}`` with one ``oneOf`` branch per tool, so a grammar-
  constrained server (llama.cpp) writes a call to one of them even though it ignores
  ``"required"``; the reply is unwrapped into that tool's call;
- ``json_schema``: no tools at all, the same ``{tool, arguments}`` object asked for through
  ``response_format`` (for a server that ignores ``tool_choice`` but constrains output, such as
  Ollama), read back from the reply's content.

The request as sent is what the call record keeps, so an audit shows which way was used.

Schemas go on the wire without large length bounds (``maxLength`` over
:data:`WIRE_MAX_LENGTH`, ``maxItems`` over :data:`WIRE_MAX_ITEMS`): a grammar-constrained server
unrolls each into one nested rule per character (llama.cpp: a 2,000-character note made a
grammar it failed to parse, and the server died). The bounds still hold: every reply is checked
against the tool's own schema, and one that breaks them is re-asked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from judge.models._api import Tool, ToolCall
from judge.models._capabilities import Capabilities
from judge.models._client_wire import plain

WRAPPER = "call_one_tool"
WIRE_MAX_LENGTH = 64
WIRE_MAX_ITEMS = 16
Way = Literal["tool_choice", "wrapped", "json_schema"]


@dataclass(frozen=True)
class Forcing:
    """The request fields that force one call, and what the reply is checked against."""

    way: Way
    fields: Mapping[str, Any]
    checked: tuple[Tool, ...]  # the tools the reply's call is validated against
    tools: tuple[Tool, ...]  # the tools the caller offered (what an unwrapped call must name)

    def unwrap(self, call: ToolCall) -> ToolCall:
        """The caller's tool call inside a wrapped or structured reply."""
        if self.way == "tool_choice":
            return call
        return ToolCall(name=str(call.arguments["tool"]), arguments=call.arguments["arguments"])


def choose(tools: Sequence[Tool], caps: Capabilities) -> Forcing:
    """The way to force one call of ``tools`` on a server with ``caps``."""
    offered = tuple(tools)
    several = len(offered) > 1
    if (
        (not several and caps.named_tool)
        or (several and caps.required_tool)
        or not (caps.named_tool or caps.json_schema)
    ):
        return Forcing("tool_choice", _tool_choice(offered), offered, offered)
    wrapper = _wrapper(offered)
    if caps.named_tool:
        return Forcing("wrapped", _tool_choice((wrapper,)), (wrapper,), offered)
    schema = {"name": WRAPPER, "schema": dict(wrapper.parameters), "strict": True}
    return Forcing("json_schema", {"response_format": {"type": "json_schema",
                                                       "json_schema": schema}},
                   (wrapper,), offered)  # fmt: skip


def _tool_choice(tools: tuple[Tool, ...]) -> dict[str, Any]:
    return {
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": wire_schema(t.parameters),
                },
            }
            for t in tools
        ],
        # One tool: force it by name, so the model cannot answer in prose instead.
        "tool_choice": (
            {"type": "function", "function": {"name": tools[0].name}}
            if len(tools) == 1
            else "required"
        ),
    }


def _wrapper(tools: tuple[Tool, ...]) -> Tool:
    branches = [
        {
            "type": "object",
            "properties": {"tool": {"const": t.name}, "arguments": wire_schema(t.parameters)},
            "required": ["tool", "arguments"],
            "additionalProperties": False,
        }
        for t in tools
    ]
    listing = "\n".join(f"- {t.name}: {t.description}" for t in tools)
    return Tool(
        WRAPPER,
        "Call exactly one of these tools: name it in `tool` and give its arguments in "
        f"`arguments`.\n{listing}",
        {"oneOf": branches},
    )


def wire_schema(schema: Any) -> Any:
    """``schema`` as sent to the server: a JSON-ready copy without large length bounds."""
    value = plain(schema)
    if isinstance(value, dict):
        out = {k: wire_schema(v) for k, v in value.items()}
        if isinstance(out.get("maxLength"), int) and out["maxLength"] > WIRE_MAX_LENGTH:
            del out["maxLength"]
        if isinstance(out.get("maxItems"), int) and out["maxItems"] > WIRE_MAX_ITEMS:
            del out["maxItems"]
        return out
    if isinstance(value, list):
        return [wire_schema(v) for v in value]
    return value


def structured_reply(text: str) -> str:
    """A ``json_schema`` reply rewritten as a tool call to :data:`WRAPPER`, so one checker
    reads every way; a body it cannot read is returned as it came."""
    try:
        data = json.loads(text)
        message = data["choices"][0]["message"]
        content = message.get("content")
        if not isinstance(content, str) or message.get("tool_calls"):
            return text
        message["tool_calls"] = [
            {"id": "structured", "type": "function",
             "function": {"name": WRAPPER, "arguments": content}}
        ]  # fmt: skip
        return json.dumps(data)
    except (ValueError, LookupError, TypeError, AttributeError):
        return text
