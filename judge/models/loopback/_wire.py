"""What a loopback server's responder reads from an OpenAI-format request body."""

from __future__ import annotations

from typing import Any

from judge.models._api import Message


def body_messages(body: dict[str, Any]) -> list[Message]:
    """The texts of an OpenAI-format request, as Messages (images left out)."""
    out = []
    for m in body["messages"]:
        content = m.get("content") or ""
        if isinstance(content, list):
            content = "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
        out.append(Message(m["role"], str(content)))
    return out
