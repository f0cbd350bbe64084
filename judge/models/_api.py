"""Contracts between the judge pipeline, model providers and the job runner.

A *model provider* (the OpenAI-compatible client, or a scripted one in tests) answers one call
with exactly one tool call whose arguments validate against that tool's JSON schema. The
pipeline never sees HTTP; the client never sees rubric logic. Every call, successful or not, is
reported to a :class:`CallRecorder` as a :class:`storage.RunCall` (the one record of a model
call, kept in ``judge_calls``) so a run can be audited and re-scored without new calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from storage import RunCall


@dataclass(frozen=True)
class FrameImage:
    """A video frame sent to the model, with the evidence id the model cites it by."""

    evidence_id: str  # e.g. T03, P17, I2-05
    frame_index: int  # presentation order in the source video
    time_s: float  # source time
    jpeg: bytes  # resized to 512 px on the longest side
    roi: tuple[float, float, float, float] | None = None  # crop in 0..1, if any
    origin: str = ""  # uniform_task | uniform_physics | inspect:N


@dataclass(frozen=True)
class Message:
    role: Literal["system", "user", "assistant"]
    text: str
    images: tuple[FrameImage, ...] = ()


@dataclass(frozen=True)
class Tool:
    """A function the model may call; ``parameters`` is its JSON schema."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class Usage:
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0


def call_record(
    stage: str,
    prompt_version: str,
    request: Mapping[str, Any],
    reply: str,
    ok: bool,
    error: str | None,
    usage: Usage = Usage(),
) -> RunCall:
    """The record of one request/response (images appear as evidence ids): ``storage``'s
    :class:`~storage.RunCall`, what ``judge_calls`` stores."""
    return RunCall(stage, prompt_version, request, reply, ok, error, usage.latency_s,
                   usage.tokens_in, usage.tokens_out, usage.cost_usd)  # fmt: skip


class CallRecorder(Protocol):
    def __call__(self, record: RunCall, /) -> None: ...


class CallFailed(Exception):  # noqa: N818 - reads as what happened: "except CallFailed"
    """A call that failed for good (after the retry policy); the message says what to do.

    ``retryable`` says whether a later attempt could succeed (timeouts, rate limits, 5xx);
    the job runner uses it to decide between a retry with backoff and a permanent failure.
    """

    retryable: bool = False


class SpendCapReached(CallFailed):
    """The next call could cost more than what is left of the per-video spend cap."""


class ModelAPI(Protocol):
    """What the pipeline calls. Implementations enforce the spend cap and record every call."""

    def call(
        self,
        *,
        stage: str,
        prompt_version: str,
        messages: Sequence[Message],
        tools: Sequence[Tool],
    ) -> tuple[ToolCall, Usage]:
        """Return exactly one tool call (one of ``tools``) with validated arguments.

        Raises:
            SpendCapReached: the worst-case cost of this call exceeds the remaining budget;
                no request was sent.
            CallFailed: the endpoint could not give a valid reply within the retry policy.
        """
        ...

    @property
    def spent_usd(self) -> float:
        """What this provider has spent so far (for this video)."""
        ...
