"""The OpenAI-compatible model client: one validated tool call per call, audited and capped.

Transport faults (HTTP 408/409/429/5xx, dropped connections, timeouts) are retried by the openai
client itself, which honours ``Retry-After``; a reply that is not exactly one valid tool call is
re-asked here, with the validation error, up to ``schema_retries`` times. Before every request the
worst-case cost is reserved against the spend cap, so the cap holds even if the model writes
``max_output_tokens`` every time. Every request, good or bad, goes to the recorder with images
replaced by their evidence ids. The API key reaches the HTTP header and nothing else: records,
log lines and exception messages are scrubbed of it.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from annotation import redact
from judge.models._api import (
    CallFailed,
    CallRecorder,
    Message,
    Tool,
    ToolCall,
    Usage,
    call_record,
)
from judge.models._budget import Budget, Prices
from judge.models._capabilities import ASSUMED, OutputCap
from judge.models._client_wire import (
    InvalidReplyError,
    called_tool,
    check,
    cut_reply,
    encode,
    usage_of,
    validator,
)
from judge.models._forcing import choose, structured_reply
from judge.models._profiles import NO_KEY, ModelProfile, keyring_service, resolve_api_key

if TYPE_CHECKING:
    import httpx2
    import openai

log = logging.getLogger("judge.client")

_CAP_FIELDS: tuple[OutputCap, OutputCap] = ("max_tokens", "max_completion_tokens")
# A chat template that cannot render image parts fails inside the server: a 5xx that no retry
# will change (llama-cpp-python: "can only concatenate str (not "list") to str").
_TEMPLATE_ON_LIST = re.compile(r"concatenate str|valid string|image|vision|multimodal", re.I)


class ModelCallFailed(CallFailed):
    """A :class:`CallFailed` that says whether trying the same call later may succeed.

    ``kind`` is one of: connection, timeout, rate_limit, server, auth, not_found, bad_request,
    unsupported_content (images to a model that takes none), schema, no_key, client.
    """

    def __init__(self, message: str, *, retryable: bool, kind: str) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.kind = kind


class OpenAIModel:
    """A :class:`judge.models.ModelAPI` over any OpenAI-compatible chat-completions endpoint.

    Create one per video: its spend cap and ``spent_usd`` cover every call it makes.

    Args:
        profile: endpoint, model, limits and prices.
        recorder: receives a :class:`storage.RunCall` for every request sent (and each rejected
            one).
        spend_cap_usd: overrides ``profile.spend_cap_usd``.
        api_key: overrides :func:`resolve_api_key` (environment, then OS keyring).
        http_client: an ``httpx2.Client`` for the openai client (proxies, custom transports).

    Raises:
        ModelCallFailed: no API key could be found (``kind="no_key"``).
    """

    def __init__(
        self,
        profile: ModelProfile,
        *,
        recorder: CallRecorder | None = None,
        spend_cap_usd: float | None = None,
        api_key: str | None = None,
        http_client: httpx2.Client | None = None,
    ) -> None:

        self.profile = profile
        self._recorder = recorder
        self._budget = Budget(profile.spend_cap_usd if spend_cap_usd is None else spend_cap_usd)
        self._prices = Prices(
            profile.price_in_per_mtok, profile.price_out_per_mtok, profile.tokens_per_image
        )
        if api_key is not None:
            key, self._key_source = api_key, "argument"
        else:
            try:
                key = resolve_api_key(profile)
            except CallFailed as err:
                raise ModelCallFailed(str(err), retryable=False, kind="no_key") from None
            self._key_source = "none" if key == NO_KEY else "env_or_keyring"
        # Keys shorter than 6 characters are not scrubbed: replacing "k" everywhere would
        # mangle every message, and so short a key protects nothing anyway.
        self._secrets = [key] if len(key) >= 6 and key != NO_KEY else []
        #: what the endpoint honours (probed, or the safe assumptions): the cap's field, how
        #: to force a tool call, whether images may be sent
        self.capabilities = profile.capabilities or ASSUMED
        # The field that caps a reply; switched once when a server refuses it by name (400).
        self._cap_field = self.capabilities.output_cap
        self._cap_switched = False
        self._sending_images = False
        self._client: openai.OpenAI = _openai_class()(
            self._certain_failure,
            base_url=profile.base_url,
            api_key=key,
            timeout=profile.timeout_s,
            max_retries=profile.max_retries,
            default_headers=dict(profile.extra_headers) or None,
            http_client=http_client,
        )

    # ---- ModelAPI ---------------------------------------------------------------------------
    @property
    def spent_usd(self) -> float:
        """What this client has spent so far, invalid-but-billed replies included."""
        return self._budget.spent_usd

    def call(
        self,
        *,
        stage: str,
        prompt_version: str,
        messages: Sequence[Message],
        tools: Sequence[Tool],
    ) -> tuple[ToolCall, Usage]:
        """Return exactly one validated tool call; see :class:`judge.models.ModelAPI`.

        Raises:
            SpendCapReached: the worst case of the next request does not fit in the cap.
            ModelCallFailed: transport failure after retries, refused request, or no valid
                reply after ``schema_retries`` re-asks; ``retryable`` says if later may work.
            ValueError: no tools, or images on a non-user message (programming errors);
                ``jsonschema.SchemaError`` likewise for a tool whose schema is invalid.
        """
        if not tools:
            raise ValueError("call() needs at least one tool")
        forcing = choose(tools, self.capabilities)
        offered = {t.name: (t, validator(t)) for t in forcing.checked}
        wire, record, n_images = encode(messages)
        if n_images and not self.capabilities.images:
            raise ModelCallFailed(
                f"model {self.profile.model!r} at {self.profile.base_url} takes no images (its "
                f"probe, {self.capabilities.probed_at}, found it text-only); this call sends "
                f"{n_images}: choose a vision model for profile {self.profile.name!r}",
                retryable=False,
                kind="unsupported_content",
            )
        self._sending_images = n_images > 0
        base: dict[str, Any] = {"model": self.profile.model, **forcing.fields}
        if self.profile.temperature is not None:
            base["temperature"] = self.profile.temperature
        if self.profile.reasoning_effort is not None:
            base["reasoning_effort"] = self.profile.reasoning_effort
        tries = self.profile.schema_retries + 1
        label = "/".join(offered)
        for attempt in range(1, tries + 1):
            chars = len(json.dumps({**base, "messages": record}))
            worst = self._prices.worst_case(chars, n_images, self.profile.max_output_tokens)
            held = self._budget.reserve(worst)
            cost = 0.0
            try:
                log.debug(
                    "call stage=%s attempt=%d/%d model=%s images=%d worst_case=$%.5f",
                    stage, attempt, tries, self.profile.model, n_images, worst,
                )  # fmt: skip
                request, text, latency = self._post(stage, prompt_version, base, wire, record)
                if forcing.way == "json_schema":
                    text = structured_reply(text)
                tokens_in, tokens_out, billed = usage_of(text)
                cost = self._prices.cost(tokens_in, tokens_out)
                if not billed and self._prices.cost(1, 1) > 0:
                    # A priced endpoint that reports no usage is booked at the worst case,
                    # or the cap would never trigger.
                    log.warning("reply carried no token usage; booking the worst case")
                    cost = worst
                elif cost > worst:
                    log.warning("a call cost $%.5f, above its $%.5f estimate", cost, worst)
                usage = Usage(tokens_in, tokens_out, cost, latency)
                try:
                    result = forcing.unwrap(check(text, offered))
                except InvalidReplyError as bad:
                    error = self._scrub(str(bad))
                    self._record(stage, prompt_version, request, text, False, error, usage)
                    log.debug("invalid reply (attempt %d/%d): %s", attempt, tries, error)
                    if attempt == tries:
                        tool = called_tool(text, offered) or label
                        raise ModelCallFailed(
                            f"model reply did not match the {tool} schema after {tries} tries: "
                            f"{error}",
                            retryable=False,
                            kind="schema",
                        ) from None
                    wire = [*wire, *bad.followups]
                    record = [*record, *bad.followups]
                    continue
                self._record(stage, prompt_version, request, text, True, None, usage)
                log.debug(
                    "reply ok tool=%s tokens=%d/%d cost=$%.5f latency=%.2fs",
                    result.name, tokens_in, tokens_out, cost, latency,
                )  # fmt: skip
                return result, usage
            finally:
                self._budget.settle(held, cost)
        raise AssertionError("unreachable")  # the loop returns or raises

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def __enter__(self) -> OpenAIModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- one HTTP exchange (with the openai client's own retries) ------------------------------
    def _post(
        self,
        stage: str,
        prompt_version: str,
        base: dict[str, Any],
        wire: list[dict[str, Any]],
        record: list[dict[str, Any]],
    ) -> tuple[dict[str, Any], str, float]:
        """Send one request; return (request as recorded, reply body, latency)."""
        import openai

        while True:
            param: str = self._cap_field
            limit = {param: self.profile.max_output_tokens}
            request = {**base, **limit, "messages": record}
            start = time.monotonic()
            failure: ModelCallFailed | None = None
            reply = ""
            try:
                kwargs: dict[str, Any] = {**base, **limit, "messages": wire}
                raw = self._client.chat.completions.with_raw_response.create(**kwargs)
                return request, raw.http_response.text, time.monotonic() - start
            except openai.BadRequestError as err:
                reply = self._scrub(err.response.text)[:4000]
                if not self._cap_switched and re.search(rf"\b{param}\b", err.response.text):
                    # The server refuses this cap field by name (OpenAI's reasoning models
                    # refuse max_tokens, old servers max_completion_tokens): use the other.
                    self._cap_switched = True
                    self._cap_field = next(f for f in _CAP_FIELDS if f != param)
                    note = f"rejected {param}; retrying with {self._cap_field}"
                    usage = Usage(latency_s=time.monotonic() - start)
                    self._record(stage, prompt_version, request, reply, False, note, usage)
                    log.debug(note)
                    continue
                failure = self._failure(err)
            except openai.APIStatusError as err:
                reply = self._scrub(err.response.text)[:4000]
                failure = self._failure(err)
            except openai.OpenAIError as err:
                failure = self._failure(err)
            usage = Usage(latency_s=time.monotonic() - start)
            self._record(stage, prompt_version, request, reply, False, str(failure), usage)
            log.debug("request failed: %s", failure)
            # Raised outside the except block so no openai exception (whose text may quote the
            # server's reply) is chained into tracebacks.
            raise failure

    def _certain_failure(self, status: int, body: str) -> bool:
        """A server error no retry will change: a chat template that cannot render the images
        sent (the openai client would otherwise resend it ``max_retries`` times)."""
        return status >= 500 and self._sending_images and bool(_TEMPLATE_ON_LIST.search(body))

    def _failure(self, err: Exception) -> ModelCallFailed:
        """An actionable, key-free error for an openai exception."""
        import openai

        p, n = self.profile, self.profile.max_retries
        where = p.base_url
        if isinstance(err, openai.APITimeoutError):
            msg = f"no reply within {p.timeout_s:g} s from {where} (still none after {n} retries)"
            return ModelCallFailed(msg, retryable=True, kind="timeout")
        if isinstance(err, openai.APIConnectionError):
            cause = err.__cause__
            detail = f"{type(cause).__name__}: {cause}" if cause else str(err)
            if type(cause).__name__ in ("ConnectError", "ConnectTimeout"):
                msg = f"cannot reach {where}: is the server running? ({detail})"
            else:
                msg = f"lost the connection to {where} before a reply ({detail}; {n} retries)"
            return ModelCallFailed(self._scrub(msg), retryable=True, kind="connection")
        if not isinstance(err, openai.APIStatusError):
            detail = self._scrub(f"{type(err).__name__}: {err}")[:300]
            return ModelCallFailed(f"model client error: {detail}", retryable=False, kind="client")
        code, said = err.status_code, self._server_says(err)
        if code in (401, 403):
            if self._key_source == "none":
                hint = f"this endpoint needs a key: set api_key_env in profile {p.name!r}"
            elif self._key_source == "argument":
                hint = "check the API key given to the client"
            else:
                hint = (
                    f"check {p.api_key_env} (or the OS keyring entry service "
                    f"{keyring_service(p)!r}, user {p.name!r})"
                )
            msg = f"the endpoint refused the API key (HTTP {code}); {hint}. Server said: {said}"
            return ModelCallFailed(msg, retryable=False, kind="auth")
        if code == 404:
            msg = (
                f"model {p.model!r} not found at {where} (HTTP 404: {said}); check the model "
                "name, and that the base URL is the API root (it usually ends in /v1)"
            )
            return ModelCallFailed(msg, retryable=False, kind="not_found")
        if code == 429:
            msg = f"rate limited: still HTTP 429 after {n} retries ({said})"
            return ModelCallFailed(msg, retryable=True, kind="rate_limit")
        if code >= 500 and self._sending_images and _TEMPLATE_ON_LIST.search(said):
            msg = (
                f"model {p.model!r} at {where} could not take the images it was sent (HTTP "
                f"{code}: {said}); it is probably text-only: probe the profile "
                f"(`workbench judge profile probe {p.name}`) or choose a vision model"
            )
            return ModelCallFailed(msg, retryable=False, kind="unsupported_content")
        if code >= 500 or code in (408, 409):
            msg = f"server error at {where}: still HTTP {code} after {n} retries ({said})"
            return ModelCallFailed(msg, retryable=True, kind="server")
        msg = f"the endpoint rejected the request (HTTP {code}): {said}"
        return ModelCallFailed(msg, retryable=False, kind="bad_request")

    def _server_says(self, err: openai.APIStatusError) -> str:
        body = err.body
        if isinstance(body, Mapping) and isinstance(body.get("message"), str):
            text = str(body["message"])
        elif body is not None:
            text = json.dumps(body) if isinstance(body, dict | list) else str(body)
        else:
            text = err.response.text or "(empty body)"
        return self._scrub(text)[:300]

    def _scrub(self, text: str) -> str:
        """The one redaction (``annotation.redact``): this profile's key and anything key-like."""
        return redact(text, self._secrets)

    def _scrub_all(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._scrub(value)
        if isinstance(value, Mapping):
            return {k: self._scrub_all(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._scrub_all(v) for v in value]
        return value

    def _record(
        self,
        stage: str,
        prompt_version: str,
        request: Mapping[str, Any],
        reply: str,
        ok: bool,
        error: str | None,
        usage: Usage,
    ) -> None:
        if self._recorder is None:
            return
        # The request is scrubbed too: a re-ask quotes the model's reply, which could be anything.
        clean = self._scrub_all(request)
        kept = cut_reply(self._scrub(reply))  # scrubbed whole, then cut to LIMITS.reply_bytes
        self._recorder(call_record(stage, prompt_version, clean, kept, ok, error, usage))


@functools.cache
def _openai_class() -> Callable[..., openai.OpenAI]:
    """The openai client, told which failures are certain (built lazily: importing openai
    costs ~0.5 s). Its retry policy is otherwise its own: 408/409/429/5xx, Retry-After."""
    import openai

    class Client(openai.OpenAI):
        def __init__(self, certain: Callable[[int, str], bool], **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._certain = certain

        def _should_retry(self, response: Any) -> bool:
            try:
                body = response.read().decode("utf-8", "replace")
            except Exception:  # a body that cannot be read decides nothing
                body = ""
            if self._certain(response.status_code, body):
                return False
            return bool(super()._should_retry(response))

    return Client
