"""Measure what an endpoint honours: one short call per feature (see ``_capabilities``).

Each probe is a real request with a small output cap; a feature that errors, is ignored or
answers in the wrong shape counts as unsupported, with a note in words. The probe never
retries (``max_retries=0``): a server that is down fails the probe with the client's message
instead of being measured as lacking everything.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from judge.models._capabilities import Capabilities, OutputCap
from judge.models._client import ModelCallFailed, OpenAIModel
from judge.models._images import encode_jpeg
from judge.models._profiles import ModelProfile, load_profile, save_profile

if TYPE_CHECKING:
    from storage import Project

_VALUE = {
    "type": "object",
    "properties": {"value": {"type": "integer"}},
    "required": ["value"],
    "additionalProperties": False,
}
_COUNT = "Count from 1 to 60, separated by spaces. Do not stop early."
_ASK = [{"role": "user", "content": "What is 2 + 3? Answer with the value."}]
Post = Callable[[dict[str, Any]], tuple[int, dict[str, Any] | None, str]]


def _tool(name: str) -> dict[str, Any]:
    function = {"name": name, "description": "Give the value.", "parameters": _VALUE}
    return {"type": "function", "function": function}


def probe_capabilities(profile: ModelProfile, *, api_key: str | None = None) -> Capabilities:
    """Probe ``profile``'s endpoint; returns what it honours.

    Raises:
        ModelCallFailed: the endpoint cannot be reached or refuses the key or the model (the
            probe cannot tell anything then).
    """
    model = OpenAIModel(profile.model_copy(update={"max_retries": 0}), api_key=api_key)
    try:
        post = _poster(model)
        notes: list[str] = []
        status, _, said = post({"messages": _ASK, "max_tokens": 8})
        if status in (401, 403, 404) or status == 0:
            raise ModelCallFailed(f"probe of {profile.base_url}: {said}", retryable=status == 0,
                                  kind="connection" if status == 0 else "auth")  # fmt: skip
        caps = Capabilities(
            probed_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            server=_server(model),
            output_cap=_output_cap(post, notes),
            named_tool=_named_tool(post, notes),
            required_tool=_required_tool(post, notes),
            json_schema=_json_schema(post, notes),
            images=_images(post, notes),
            null_content=_null_content(post, notes),
            notes=tuple(notes),
        )
    finally:
        model.close()
    return caps


def _poster(model: OpenAIModel) -> Post:
    """``post(fields) -> (status, body or None, what it said)``; status 0: no HTTP answer."""
    import openai

    client = model._client  # the probe is the client's own business: same key, URL, headers

    def post(fields: dict[str, Any]) -> tuple[int, dict[str, Any] | None, str]:
        try:
            raw = client.chat.completions.with_raw_response.create(
                model=model.profile.model, **fields
            )
            text = raw.http_response.text
            return raw.http_response.status_code, json.loads(text), ""
        except openai.APIStatusError as err:  # the first line says it; the rest is a trace
            said = model._server_says(err).strip().splitlines()
            return err.status_code, None, (said[0] if said else "")[:160]
        except openai.OpenAIError as err:
            return 0, None, str(model._failure(err))
        except ValueError:
            return 200, None, "the reply is not JSON"

    return post


def _server(model: OpenAIModel) -> str | None:
    try:
        for entry in model._client.models.list().data:
            owner = getattr(entry, "owned_by", None)
            if owner:
                return str(owner)
    except Exception:  # /models is optional; the chat probes decide
        return None
    return None


def _message(body: Mapping[str, Any] | None) -> dict[str, Any]:
    try:
        message = body["choices"][0]["message"]  # type: ignore[index]
        return message if isinstance(message, dict) else {}
    except (LookupError, TypeError):
        return {}


def _applied(post: Post, field: str) -> bool | None:
    """Whether ``field`` caps the reply: True, False (ignored) or None (refused)."""
    status, body, _ = post({"messages": [{"role": "user", "content": _COUNT}], field: 4})
    if status != 200 or body is None:
        return None
    usage = body.get("usage") or {}
    out = usage.get("completion_tokens")
    finish = (body.get("choices") or [{}])[0].get("finish_reason")
    return (isinstance(out, int) and out <= 4) or finish == "length"


def _output_cap(post: Post, notes: list[str]) -> OutputCap:
    legacy, newer = _applied(post, "max_tokens"), _applied(post, "max_completion_tokens")
    if newer is False:
        notes.append("max_completion_tokens is ignored (the reply ran past it)")
    if legacy:
        return "max_tokens"
    if newer:
        return "max_completion_tokens"
    notes.append("neither max_tokens nor max_completion_tokens capped a reply")
    return "max_tokens"


def _called(body: Mapping[str, Any] | None, names: set[str]) -> bool:
    calls = _message(body).get("tool_calls") or []
    try:
        fn = calls[0]["function"]
        return fn["name"] in names and isinstance(json.loads(fn["arguments"]), dict)
    except (LookupError, TypeError, ValueError):
        return False


def _named_tool(post: Post, notes: list[str]) -> bool:
    status, body, said = post({
        "messages": _ASK, "tools": [_tool("answer")], "max_tokens": 64,
        "tool_choice": {"type": "function", "function": {"name": "answer"}},
    })  # fmt: skip
    ok = status == 200 and _called(body, {"answer"})
    if not ok:
        notes.append(f"a tool forced by name was not called ({said or 'answered in prose'})")
    return ok


def _required_tool(post: Post, notes: list[str]) -> bool:
    status, body, said = post({
        "messages": _ASK, "tools": [_tool("answer"), _tool("reply")], "max_tokens": 64,
        "tool_choice": "required",
    })  # fmt: skip
    ok = status == 200 and _called(body, {"answer", "reply"})
    if not ok:
        notes.append(f'tool_choice "required" was not honoured ({said or "answered in prose"})')
    return ok


def _json_schema(post: Post, notes: list[str]) -> bool:
    status, body, said = post({
        "messages": _ASK, "max_tokens": 64,
        "response_format": {"type": "json_schema",
                            "json_schema": {"name": "answer", "schema": _VALUE, "strict": True}},
    })  # fmt: skip
    try:
        value = json.loads(_message(body).get("content") or "")
        ok = status == 200 and isinstance(value, dict) and isinstance(value.get("value"), int)
    except ValueError:
        ok = False
    if not ok:
        notes.append(
            f"response_format json_schema did not constrain the reply ({said or 'free text'})"
        )
    return ok


def _images(post: Post, notes: list[str]) -> bool:
    grey = np.full((16, 16, 3), 128, dtype=np.uint8)  # the smallest image any model decodes
    jpeg = encode_jpeg(grey, roi=None, max_side=16, quality=90)
    url = "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")
    status, _, said = post({
        "max_tokens": 8,
        "messages": [{"role": "user", "content": [
            {"type": "text", "text": "What colour is this image?"},
            {"type": "image_url", "image_url": {"url": url}},
        ]}],
    })  # fmt: skip
    if status != 200:
        notes.append(f"images are refused (HTTP {status}: {said}): the model is text-only here")
    return status == 200


def _null_content(post: Post, notes: list[str]) -> bool:
    call = {"id": "call_1", "type": "function",
            "function": {"name": "answer", "arguments": '{"value": 4}'}}  # fmt: skip
    status, _, said = post({
        "max_tokens": 8, "tools": [_tool("answer")],
        "messages": [*_ASK, {"role": "assistant", "content": None, "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": "call_1", "content": "Wrong: try again."}],
    })  # fmt: skip
    if status != 200:
        notes.append(f"an assistant message with content null is refused (HTTP {status}: {said})")
    return status == 200


def probe_and_save(project: Project, name: str, *, api_key: str | None = None) -> ModelProfile:
    """Probe the project's profile ``name`` and keep what it found with the profile.

    Raises:
        ProfileNotFoundError: no such profile.
        ModelCallFailed: the endpoint could not be probed (see :func:`probe_capabilities`).
    """
    profile = load_profile(project.profiles, name)
    caps = probe_capabilities(profile, api_key=api_key)
    probed = profile.model_copy(update={"capabilities": caps})
    save_profile(project.profiles, probed)
    return probed
