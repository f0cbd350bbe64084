"""A scripted model provider: answers from a Python callable, for tests and offline demos.

:class:`ScriptedModel` behaves like a real provider where the pipeline can tell: it checks the
reply against the offered tools' JSON schemas, enforces a spend cap before "sending" (so spent
never exceeds the cap), and reports every call, failed ones too, to a recorder. It also keeps
every request it saw, so tests can assert on the exact messages.

The video judge's scripts (a plausible, self-consistent judge, and one that answers yes
throughout) are the video judge's: :mod:`judge.video._scripts`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from judge.models._api import (
    CallFailed,
    CallRecorder,
    Message,
    SpendCapReached,
    Tool,
    ToolCall,
    Usage,
    call_record,
)
from judge.models._client_wire import validator
from storage import RunCall

Responder = Callable[[str, Sequence[Message], Sequence[Tool]], ToolCall]
UsageFn = Callable[[str, Sequence[Message], Sequence[Tool]], Usage]


_FREE = Usage()


@dataclass(frozen=True)
class SeenCall:
    stage: str
    messages: tuple[Message, ...]
    tools: tuple[Tool, ...]


def request_json(messages: Sequence[Message], tools: Sequence[Tool]) -> dict[str, Any]:
    """A request as stored in ``judge_calls``: texts in full, images as evidence ids."""
    return {
        "messages": [
            {"role": m.role, "text": m.text, "images": [i.evidence_id for i in m.images]}
            for m in messages
        ],
        "tools": [{"name": t.name, "parameters": dict(t.parameters)} for t in tools],
    }


class ScriptedModel:
    """A :class:`judge.models.ModelAPI` whose replies come from ``respond``.

    Args:
        respond: ``(stage, messages, tools) -> ToolCall``; may raise CallFailed to simulate an
            endpoint failure.
        usage: The Usage of every call, or a function of the call giving it. The cost is known
            before the call, so the cap check is exact (a real client uses a worst case).
        spend_cap_usd: Refuse (SpendCapReached, nothing recorded as spent) any call that would
            take spending past this.
        recorder: Receives a :class:`storage.RunCall` for every call, successful or not.
        model: The model name reported to the run.
    """

    def __init__(
        self,
        respond: Responder,
        *,
        usage: Usage | UsageFn = _FREE,
        spend_cap_usd: float | None = None,
        recorder: CallRecorder | None = None,
        model: str = "scripted",
    ) -> None:
        self._respond = respond
        self._usage = usage
        self._cap = spend_cap_usd
        self._recorder = recorder
        self.model = model
        self._spent = 0.0
        self.seen: list[SeenCall] = []

    @property
    def spent_usd(self) -> float:
        return self._spent

    def call(
        self,
        *,
        stage: str,
        prompt_version: str,
        messages: Sequence[Message],
        tools: Sequence[Tool],
    ) -> tuple[ToolCall, Usage]:
        request = request_json(messages, tools)
        usage = self._usage(stage, messages, tools) if callable(self._usage) else self._usage
        if self._cap is not None and self._spent + usage.cost_usd > self._cap + 1e-12:
            left = max(0.0, self._cap - self._spent)
            err = (
                f"spend cap reached: the next call costs ${usage.cost_usd:.4f} but only "
                f"${left:.4f} of the ${self._cap:.2f} cap is left (spent ${self._spent:.4f}); "
                "no request was sent"
            )
            self._record(call_record(stage, prompt_version, request, "", False, err))
            raise SpendCapReached(err)
        self.seen.append(SeenCall(stage, tuple(messages), tuple(tools)))
        try:
            call = self._respond(stage, messages, tools)
            problem = _schema_problem(call, tools)
        except CallFailed as exc:
            self._record(call_record(stage, prompt_version, request, "", False, str(exc)))
            raise
        reply = json.dumps({"name": call.name, "arguments": call.arguments}, default=str)
        self._spent += usage.cost_usd  # a reply was produced, so it is paid for
        if problem is not None:
            err = f"{stage}: reply does not match the schema: {problem}"
            self._record(call_record(stage, prompt_version, request, reply, False, err, usage))
            raise CallFailed(err)
        self._record(call_record(stage, prompt_version, request, reply, True, None, usage))
        return call, usage

    def _record(self, record: RunCall) -> None:
        if self._recorder is not None:
            self._recorder(record)


def _schema_problem(call: ToolCall, tools: Sequence[Tool]) -> str | None:
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

    tool = next((t for t in tools if t.name == call.name), None)
    if tool is None:
        return f"{call.name} is not one of the offered tools ({', '.join(t.name for t in tools)})"
    error = best_match(validator(tool).iter_errors(dict(call.arguments)))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(arguments)"
    return f"{call.name} {where}: {error.message}"
