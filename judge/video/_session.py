"""One run's conversation with the model: calls, re-asks, accounting, stop and progress."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TypeVar

from judge.models import Message, ModelAPI, Tool, ToolCall
from judge.video._config import (
    PROMPT_VERSION,
    JudgeCancelled,
    JudgeConfig,
    PipelineError,
    ReplyProblem,
)

T = TypeVar("T")

Progress = Callable[[float, str], None]
StopCheck = Callable[[], bool]


class Session:
    """Wraps a :class:`ModelAPI` for one video.

    The provider validates the schema and records every call; the session adds what only the
    pipeline knows: rules beyond the schema (a broken one is put to the model again, up to
    ``config.reply_retries`` times, the problem stated), token totals, the caller's stop
    request (checked before every call) and the spend-cap message.
    """

    def __init__(
        self,
        api: ModelAPI,
        config: JudgeConfig,
        *,
        should_stop: StopCheck | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.api = api
        self.config = config
        self._should_stop = should_stop or (lambda: False)
        self._progress = progress or (lambda _f, _n: None)
        self._spent0 = api.spent_usd
        self.calls = 0
        self.tokens_in = 0
        self.tokens_out = 0
        self.images_sent = 0
        self.notes: list[str] = []

    @property
    def spent_usd(self) -> float:
        return self.api.spent_usd - self._spent0

    def progress(self, fraction: float, note: str) -> None:
        self._progress(min(max(fraction, 0.0), 1.0), note)

    def inspection_affordable(self) -> bool:
        """Whether inspecting still leaves room for the submits to come (see JudgeConfig)."""
        return self.spent_usd < self.config.inspect_budget_share * self.config.spend_cap_usd

    def ask(
        self,
        stage: str,
        messages: Sequence[Message],
        tools: Sequence[Tool],
        parse: Callable[[ToolCall], T],
    ) -> T:
        """One validated reply, parsed; a reply breaking a rule is re-asked with the reason.

        Raises:
            SpendCapReached: From the provider; no request was sent.
            CallFailed: From the provider (after its own retry policy).
            PipelineError: The replies kept breaking a rule.
            JudgeCancelled: The caller asked to stop.
        """
        extra: list[Message] = []
        names = [t.name for t in tools]
        problem = ""
        for _attempt in range(self.config.reply_retries + 1):
            if self._should_stop():
                raise JudgeCancelled("cancelled")
            msgs = [*messages, *extra]
            # SpendCapReached passes through as the provider said it: only the provider knows
            # whether the cap is spent or the next call's worst case no longer fits in it.
            call, usage = self.api.call(
                stage=stage, prompt_version=PROMPT_VERSION, messages=msgs, tools=tools
            )
            self.calls += 1
            self.tokens_in += usage.tokens_in
            self.tokens_out += usage.tokens_out
            self.images_sent += sum(len(m.images) for m in msgs)
            try:
                if call.name not in names:
                    raise ReplyProblem(f"call one of {', '.join(names)}, not {call.name}")
                return parse(call)
            except ReplyProblem as exc:
                problem = str(exc)
            except (KeyError, TypeError, ValueError) as exc:  # a provider that skipped the schema
                problem = f"arguments do not match the schema ({exc!r})"
            self.notes.append(f"{stage}: reply rejected: {problem}")
            reply = json.dumps({"name": call.name, "arguments": call.arguments}, default=str)
            extra = [
                Message("assistant", reply),
                Message(
                    "user",
                    f"That reply was not accepted: {problem}. "
                    f"Call {' or '.join(names)} again with corrected arguments.",
                ),
            ]
        raise PipelineError(
            f"{stage}: the model's reply broke a rule {self.config.reply_retries + 1} time(s); "
            f"last problem: {problem}"
        )
