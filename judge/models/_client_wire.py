"""Wire format of the model client: messages out (with images), one checked tool call back.

Kept apart from :mod:`judge.models._client` so the HTTP and budget logic stays readable; nothing
here does I/O.

A reply is the endpoint's to make as long as it likes, and a model's words are repeated back to
it when it is asked again: so a reply over ``LIMITS.reply_bytes`` is invalid whatever it says
(:func:`check`), what is stored of a reply is cut to that limit and says so (:func:`cut_reply`),
and a re-ask quotes at most :data:`EXCERPT_CHARS` of the rejected reply. Without that, one 50 MB
reply became a 52 MB re-ask, then a 105 MB one, and all of it was stored.
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from judge.models._api import FrameImage, Message, Tool, ToolCall
from storage.guard import LIMITS

EXCERPT_CHARS = 2_000  # of a rejected reply, quoted back to the model when it is asked again

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]


class InvalidReplyError(Exception):
    """A reply that is not exactly one valid tool call; ``followups`` re-ask the model."""

    def __init__(self, message: str, followups: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.followups = followups


# ---- request encoding -------------------------------------------------------------------------
def _label(img: FrameImage) -> str:
    roi = "" if img.roi is None else " crop=({:.2f},{:.2f},{:.2f},{:.2f})".format(*img.roi)
    return f"[{img.evidence_id} t={img.time_s:.2f}s{roi}]"


def encode(messages: Sequence[Message]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """Messages for the wire (base64 images) and for the record (evidence ids), image count."""
    wire: list[dict[str, Any]] = []
    record: list[dict[str, Any]] = []
    n_images = 0
    for m in messages:
        if not m.images:
            wire.append({"role": m.role, "content": m.text})
            record.append({"role": m.role, "content": m.text})
            continue
        if m.role != "user":
            raise ValueError(f"only user messages may carry images, not {m.role!r} ones")
        w_parts: list[dict[str, Any]] = []
        r_parts: list[dict[str, Any]] = []
        if m.text:
            w_parts.append({"type": "text", "text": m.text})
            r_parts.append({"type": "text", "text": m.text})
        for img in m.images:
            tag = {"type": "text", "text": _label(img)}
            url = "data:image/jpeg;base64," + base64.b64encode(img.jpeg).decode("ascii")
            w_parts += [tag, {"type": "image_url", "image_url": {"url": url}}]
            r_parts += [tag, {"type": "image", "evidence_id": img.evidence_id}]
        n_images += len(m.images)
        wire.append({"role": "user", "content": w_parts})
        record.append({"role": "user", "content": r_parts})
    return wire, record, n_images


def plain(value: Any) -> Any:
    """A JSON-ready copy (tool schemas may be nested read-only mappings)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def validator(tool: Tool) -> Draft202012Validator:
    """A validator for the tool's schema, built once per distinct schema (checking a schema
    costs ~13 ms, and every call of a run offers the same few tools)."""
    return _validator(json.dumps(plain(tool.parameters), sort_keys=True))


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    schema = json.loads(schema_json)
    Draft202012Validator.check_schema(schema)  # a bad tool schema is a programming error
    return Draft202012Validator(schema)


# ---- reply checking ---------------------------------------------------------------------------
def utf8_size(text: str) -> int:
    """The reply's size in UTF-8 bytes (encoded only when it is not plain ASCII)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def cut_reply(text: str, limit: int | None = None) -> str:
    """``text`` as it may be stored: whole, or its first ``limit`` bytes and a note that it
    was cut (and how long it was)."""
    limit = LIMITS.reply_bytes if limit is None else limit
    size = utf8_size(text)
    if size <= limit:
        return text
    head = text.encode("utf-8", "surrogatepass")[:limit].decode("utf-8", "ignore")
    return f"{head}\n[cut by the workbench: the reply was {size:,} bytes; {limit:,} are kept]"


def usage_of(text: str) -> tuple[int, int, bool]:
    """(prompt tokens, completion tokens, whether the reply reported usage at all)."""
    try:
        usage = json.loads(text)["usage"]
        return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0), True
    except (ValueError, LookupError, AttributeError, TypeError):
        return 0, 0, False


def called_tool(text: str, offered: Mapping[str, Any]) -> str | None:
    try:
        calls = json.loads(text)["choices"][0]["message"]["tool_calls"]
        name = calls[0]["function"]["name"]
        return str(name) if name in offered else None
    except (ValueError, LookupError, TypeError):
        return None


def check(text: str, offered: Mapping[str, tuple[Tool, Draft202012Validator]]) -> ToolCall:
    """The one valid tool call in a reply body, or :class:`InvalidReplyError` with a re-ask."""
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

    names = ", ".join(offered)
    hint = f"Reply with exactly one call to one of [{names}] whose arguments match its schema."
    size, limit = utf8_size(text), LIMITS.reply_bytes
    if size > limit:  # nothing of it is quoted back: the re-ask stays as small as the ask
        correction = (f"Your reply was rejected: it was {size:,} bytes, more than the "
                      f"{limit:,} an answer may take. {hint}")  # fmt: skip
        error = f"the reply is {size:,} bytes; the limit is {limit:,}"
        raise InvalidReplyError(error, [{"role": "user", "content": correction}])
    try:
        data = json.loads(text)
        choice = data["choices"][0]
        message = choice["message"]
        assert isinstance(message, dict)
    except (ValueError, LookupError, TypeError, AssertionError):
        # Nothing the model said can be quoted back; asking again as-is is all we can do.
        raise InvalidReplyError("the reply is not a chat completion (malformed body)", []) from None
    content = message.get("content") if isinstance(message.get("content"), str) else None
    calls = message.get("tool_calls") or []
    length = choice.get("finish_reason") == "length"
    cut = " (the reply was cut at max_output_tokens)" if length else ""

    def invalid(error: str) -> InvalidReplyError:
        correction = f"Your reply was rejected: {error}. {hint}"
        said_all = (content or "") + (json.dumps(calls, ensure_ascii=False) if calls else "")
        if len(said_all) > EXCERPT_CHARS:  # quoted back cut, as plain text
            excerpt = said_all[:EXCERPT_CHARS] + f"… [cut: {len(said_all):,} characters]"
            said = [{"role": "assistant", "content": excerpt}]
            return InvalidReplyError(error + cut, [*said, {"role": "user", "content": correction}])
        ids = [c.get("id") for c in calls if isinstance(c, dict)]
        if calls and all(isinstance(i, str) and i for i in ids) and len(ids) == len(calls):
            # Tool calls must be answered by tool messages, one per call id.
            # content "" rather than null beside tool_calls: OpenAI documents null there, but
            # pydantic-validated servers (llama-cpp-python) refuse it with an HTTP 500.
            assistant = {"role": "assistant", "content": content or "", "tool_calls": calls}
            replies = [{"role": "tool", "tool_call_id": i, "content": correction} for i in ids]
            return InvalidReplyError(error + cut, [assistant, *replies])
        said = [{"role": "assistant", "content": content}] if content else []
        return InvalidReplyError(error + cut, [*said, {"role": "user", "content": correction}])

    if not isinstance(calls, list) or not calls:
        raise invalid(f"no tool call in the reply (expected exactly one of: {names})")
    if len(calls) != 1:
        raise invalid(f"{len(calls)} tool calls in the reply (expected exactly one)")
    fn = calls[0].get("function") if isinstance(calls[0], dict) else None
    name = fn.get("name") if isinstance(fn, dict) else None
    if not isinstance(fn, dict) or name not in offered:
        raise invalid(f"unknown tool {name!r:.80} (offered: {names})")
    raw_args = fn.get("arguments")
    try:
        args = json.loads(raw_args) if isinstance(raw_args, str) else raw_args
    except ValueError as err:
        raise invalid(f"the arguments of {name} are not valid JSON ({err})") from None
    if not isinstance(args, dict):
        raise invalid(f"the arguments of {name} are not a JSON object")
    error = best_match(offered[str(name)][1].iter_errors(args))
    if error is not None:
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.path)
        raise invalid(f"{path}: {error.message[:300]}")
    return ToolCall(name=str(name), arguments=args)
