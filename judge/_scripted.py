"""A scripted model provider: answers from a Python callable, for tests and offline demos.

:class:`ScriptedModel` behaves like a real provider where the pipeline can tell: it checks the
reply against the offered tools' JSON schemas, enforces a spend cap before "sending" (so spent
never exceeds the cap), and reports every call, failed ones too, to a recorder. It also keeps
every request it saw, so tests can assert on the exact messages.

:func:`scripted_judge` builds a plausible, self-consistent responder (plans of N subgoals,
answers per gate and subgoal, optional inspections); :func:`perfect_judge` answers yes throughout.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judge._api import (
    CallFailed,
    CallRecord,
    CallRecorder,
    Message,
    SpendCapReached,
    Tool,
    ToolCall,
    Usage,
)
from judge._client_wire import validator

Responder = Callable[[str, Sequence[Message], Sequence[Tool]], ToolCall]
UsageFn = Callable[[str, Sequence[Message], Sequence[Tool]], Usage]
AnswerSpec = Mapping[str, Mapping[str, str] | str] | Callable[[str, str], str]


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
    """A :class:`judge._api.ModelAPI` whose replies come from ``respond``.

    Args:
        respond: ``(stage, messages, tools) -> ToolCall``; may raise CallFailed to simulate an
            endpoint failure.
        usage: The Usage of every call, or a function of the call giving it. The cost is known
            before the call, so the cap check is exact (a real client uses a worst case).
        spend_cap_usd: Refuse (SpendCapReached, nothing recorded as spent) any call that would
            take spending past this.
        recorder: Receives a CallRecord for every call, successful or not.
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
            self._record(CallRecord(stage, prompt_version, request, "", False, err))
            raise SpendCapReached(err)
        self.seen.append(SeenCall(stage, tuple(messages), tuple(tools)))
        try:
            call = self._respond(stage, messages, tools)
            problem = _schema_problem(call, tools)
        except CallFailed as exc:
            self._record(CallRecord(stage, prompt_version, request, "", False, str(exc)))
            raise
        reply = json.dumps({"name": call.name, "arguments": call.arguments}, default=str)
        self._spent += usage.cost_usd  # a reply was produced, so it is paid for
        if problem is not None:
            err = f"{stage}: reply does not match the schema: {problem}"
            self._record(CallRecord(stage, prompt_version, request, reply, False, err, usage))
            raise CallFailed(err)
        self._record(CallRecord(stage, prompt_version, request, reply, True, None, usage))
        return call, usage

    def _record(self, record: CallRecord) -> None:
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


# ---- a plausible responder ------------------------------------------------------------------
def offered(tools: Sequence[Tool], name: str) -> Tool | None:
    return next((t for t in tools if t.name == name), None)


def live_ids(tools: Sequence[Tool]) -> list[str]:
    """The subgoal ids a gate call asks about (the enum of its submit_gate row ids)."""
    tool = offered(tools, "submit_gate") or offered(tools, "submit_dependencies")
    assert tool is not None
    return list(tool.parameters["properties"]["rows"]["items"]["properties"]["id"]["enum"])


def visible_frames(messages: Sequence[Message]) -> list[tuple[str, float]]:
    """(evidence id, source time) of every video frame in the messages, in order."""
    return [(i.evidence_id, i.time_s) for m in messages for i in m.images if i.frame_index >= 0]


def scripted_judge(
    *,
    task_subgoals: int = 2,
    physics_windows: int = 2,
    answers: AnswerSpec | None = None,
    inspections: Mapping[str, int] | None = None,
    inspect_args: Mapping[str, Any] | None = None,
    vqa: tuple[int, int | None] = (3, 4),
) -> Responder:
    """A consistent scripted judge.

    Args:
        task_subgoals: Subgoals in the Task plan (S1..SN).
        physics_windows: Windows in the Physics plan.
        answers: Per gate, either one code for every subgoal or ``{sid: code}``; or a function
            ``(gate, sid) -> code``. Codes: ``yes``, ``no``, ``NA``, ``?`` (answer no, flagged
            unresolved). Anything not given is ``yes``.
        inspections: Per gate, how many ``inspect_video`` calls to make before submitting
            (only while the tool is offered).
        inspect_args: Arguments of those calls (default: the first second, 12 frames).
        vqa: (task, physics) of the Simple VQA reply.
    """
    done: Counter[str] = Counter()
    wanted = dict(inspections or {})
    look = dict(inspect_args or {"start_s": 0.0, "end_s": 1.0})
    look.setdefault("question", "Is the contact visible before the object moves?")
    look.setdefault("expected_evidence", "The fingers closing on the object first.")

    def code(gate: str, sid: str) -> str:
        if answers is None:
            return "yes"
        if callable(answers):
            return answers(gate, sid)
        spec = answers.get(gate, "yes")
        return spec if isinstance(spec, str) else spec.get(sid, "yes")

    def plan(n: int, reason_key: str) -> dict[str, Any]:
        items = [
            {"id": f"S{k}", "source": f"object {k}", "target": "tray", "action": "place",
             "end_state": f"object {k} rests on the tray", "requires": [], reason_key: "stated"}
            for k in range(1, n + 1)
        ]  # fmt: skip
        return {"subgoals": items}

    def respond(stage: str, messages: Sequence[Message], tools: Sequence[Tool]) -> ToolCall:
        if stage == "plan_task":
            return ToolCall("submit_plan_task", plan(task_subgoals, "reason"))
        if stage == "plan_physics":
            return ToolCall("submit_plan_physics", plan(physics_windows, "rationale"))
        if stage == "review":
            deps = [{"id": i, "requires": [], "reason": "independent"} for i in live_ids(tools)]
            return ToolCall("submit_dependencies", {"rows": deps})
        if stage == "vqa":
            return ToolCall("submit_vqa", {"task": vqa[0], "physics": vqa[1],
                                           "reasoning": "scripted", "task_windows": [],
                                           "physics_windows": []})  # fmt: skip
        gate = stage.removeprefix("gate:")
        if offered(tools, "inspect_video") and done[gate] < wanted.get(gate, 0):
            done[gate] += 1
            return ToolCall("inspect_video", look)
        frames = visible_frames(messages)
        cite = frames[-1] if frames else None
        rows: list[dict[str, Any]] = []
        for sid in live_ids(tools):
            c = code(gate, sid)
            rows.append({"id": sid, "answer": "no" if c == "?" else c, "unresolved": c == "?",
                         "evidence_ids": [cite[0]] if cite else [],
                         "timestamps_s": [round(cite[1], 3)] if cite else [],
                         "note": f"scripted {c}"})  # fmt: skip
        return ToolCall("submit_gate", {"gate": gate, "rows": rows})

    return respond


def perfect_judge(task_subgoals: int = 2, physics_windows: int = 2) -> Responder:
    """A judge that plans N subgoals and answers yes at every gate (T = P = S = 100)."""
    return scripted_judge(task_subgoals=task_subgoals, physics_windows=physics_windows)
