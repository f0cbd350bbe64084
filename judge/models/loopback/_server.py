"""A scripted, fault-injecting OpenAI-compatible server on 127.0.0.1.

Tests, ``bench/judge`` and the docs' screenshots use it instead of a hosted model; lab IT can
use it to check an install end to end without a network.

Usage::

    with FakeServer([Status(429, retry_after=0.2), Reply("answer", {"x": 1})]) as srv:
        model = OpenAIModel(profile.model_copy(update={"base_url": srv.base_url}), ...)
        ...
        assert len(srv.chat_requests) == 2

Behaviour per chat request is an :data:`Action`, taken from a queue (a sequence of actions) or
returned by a ``responder(request_json, call_index)``. Before the script is consulted the server
answers 401 when ``expected_key`` is set and the bearer token differs, and 404 when ``models`` is
set and the requested model is not in it. Every request (method, path, headers, parsed body,
arrival time) is recorded in :attr:`FakeServer.requests`.

It never hangs a test: sockets time out, ``Delay`` waits on the stop event, handler threads are
daemons, and :meth:`FakeServer.stop` does not wait for them.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeAlias

# ---- actions ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """A chat completion with exactly one tool call."""

    tool_name: str
    arguments: Mapping[str, Any]
    usage: tuple[int, int] = (100, 20)


@dataclass(frozen=True)
class ReplyText:
    """A chat completion with text and no tool call."""

    text: str
    usage: tuple[int, int] = (100, 20)


@dataclass(frozen=True)
class BadArgs:
    """A tool call whose ``arguments`` string is given raw (not JSON, or schema-violating)."""

    tool_name: str
    raw_arguments: str
    usage: tuple[int, int] = (100, 20)


@dataclass(frozen=True)
class RawJSON:
    """A 200 reply with this exact JSON body (e.g. two tool calls, no usage)."""

    body: Mapping[str, Any]


@dataclass(frozen=True)
class Malformed:
    """HTTP 200 with a body that is not JSON."""

    raw_body: str = '{"choices": [ this is not json'


@dataclass(frozen=True)
class Status:
    """An error status with an OpenAI-style error body (or ``body`` verbatim)."""

    code: int
    body: Mapping[str, Any] | str | None = None
    retry_after: float | None = None
    no_retry: bool = False  # send `x-should-retry: false`, which the openai client obeys


@dataclass(frozen=True)
class Delay:
    """Wait ``seconds`` (or until the server stops), then do ``then``."""

    seconds: float
    then: Action


@dataclass(frozen=True)
class Drop:
    """Close the connection without sending any response."""


@dataclass(frozen=True)
class Unauthorized:
    """HTTP 401, as for a wrong key (the body echoes the key it got, as some servers do)."""


@dataclass(frozen=True)
class ModelNotFound:
    """HTTP 404 ``model_not_found`` for the requested model."""


Action: TypeAlias = (
    Reply
    | ReplyText
    | BadArgs
    | RawJSON
    | Malformed
    | Status
    | Delay
    | Drop
    | Unauthorized
    | ModelNotFound
)
Responder = Callable[[dict[str, Any], int], Action]


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when it is not JSON
    at: float = field(default_factory=time.monotonic)

    @property
    def authorization(self) -> str | None:
        return next((v for k, v in self.headers.items() if k.lower() == "authorization"), None)


def completion(
    message: Mapping[str, Any], usage: tuple[int, int] | None, model: str, n: int, finish: str
) -> dict[str, Any]:
    """An OpenAI chat-completion body around ``message``."""
    body: dict[str, Any] = {
        "id": f"chatcmpl-fake-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": dict(message), "finish_reason": finish}],
    }
    if usage is not None:
        body["usage"] = {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
        }
    return body


def tool_message(name: str, raw_arguments: str, n: int) -> dict[str, Any]:
    fn = {"name": name, "arguments": raw_arguments}
    call = {"id": f"call_{n}", "type": "function", "function": fn}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


# ---- server -------------------------------------------------------------------------------------


class FakeServer:
    """A real HTTP server on 127.0.0.1 (random port) that follows a script.

    Args:
        script: a sequence of actions (one per chat request, in order) or a responder.
        expected_key: when set, requests without ``Authorization: Bearer <expected_key>`` get 401.
        models: when set, chat requests for other models get 404; ``GET /v1/models`` lists them.
        default: the action once a queue is exhausted (default: HTTP 500 "script exhausted",
            with ``x-should-retry: false`` so clients fail fast instead of looping).
        socket_timeout: per-connection read timeout of the handler, in seconds.
    """

    def __init__(
        self,
        script: Sequence[Action] | Responder | None = None,
        *,
        expected_key: str | None = None,
        models: Iterable[str] | None = None,
        default: Action | None = None,
        socket_timeout: float = 10.0,
    ) -> None:
        self.expected_key = expected_key
        self.models = list(models) if models is not None else None
        self.default = default
        self.requests: list[RecordedRequest] = []
        self.answered: list[tuple[int, int]] = []  # usage of every completion delivered
        self._queue: deque[Action] = deque()
        self._responder: Responder | None = None
        if callable(script):
            self._responder = script
        elif script is not None:
            self._queue.extend(script)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._chat_count = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._socket_timeout = socket_timeout

    # ---- lifecycle ----------------------------------------------------------------------------
    def start(self) -> FakeServer:
        handler = type("_Handler", (_Handler,), {"fake": self, "timeout": self._socket_timeout})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False  # stop() must not wait for a handler stuck in a Delay
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # ---- script -------------------------------------------------------------------------------
    def push(self, *actions: Action) -> None:
        """Append actions to the queue."""
        with self._lock:
            self._queue.extend(actions)

    def billed_usd(self, price_in_per_mtok: float, price_out_per_mtok: float) -> float:
        """What the delivered completions cost at these prices: the provider's invoice."""
        with self._lock:
            return sum(i * price_in_per_mtok / 1e6 + o * price_out_per_mtok / 1e6
                       for i, o in self.answered)  # fmt: skip

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path.rstrip("/").endswith("/chat/completions")]

    def _next_action(self, request: RecordedRequest) -> tuple[Action, int]:
        with self._lock:
            n = self._chat_count
            self._chat_count += 1
            body = request.body if isinstance(request.body, dict) else {}
            if self.expected_key is not None and request.authorization != (
                f"Bearer {self.expected_key}"
            ):
                return Unauthorized(), n
            if self.models is not None and body.get("model") not in self.models:
                return ModelNotFound(), n
            if self._responder is not None:
                return self._responder(body, n), n
            if self._queue:
                return self._queue.popleft(), n
            return self.default or Status(500, "fake server: script exhausted", no_retry=True), n

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; False if the server is stopping (used by ``Delay``)."""
        return not self._stop.wait(seconds)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeServer
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes; without this, Nagle's algorithm and the
        # client's delayed ACK add ~40 ms to every request on a kept-alive connection.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def _record(self) -> RecordedRequest:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        rec = RecordedRequest(self.command, self.path, dict(self.headers.items()), body)
        with self.fake._lock:
            self.fake.requests.append(rec)
        return rec

    def do_GET(self) -> None:
        self._record()
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            models = self.fake.models or ["fake-model"]
            data = [{"id": m, "object": "model", "owned_by": "fake"} for m in models]
            self._send(200, {"object": "list", "data": data})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        rec = self._record()
        if not rec.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        action, n = self.fake._next_action(rec)
        self._act(action, rec, n)

    def _act(self, action: Action, rec: RecordedRequest, n: int) -> None:
        body = rec.body if isinstance(rec.body, dict) else {}
        model = str(body.get("model", "fake-model"))
        if isinstance(action, Delay):
            if self.fake.wait(action.seconds):
                self._act(action.then, rec, n)
            return
        if isinstance(action, Drop):
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        if isinstance(action, Reply):
            args = json.dumps(dict(action.arguments))
            msg = tool_message(action.tool_name, args, n)
            self._bill(
                action.usage, self._send(200, completion(msg, action.usage, model, n, "tool_calls"))
            )
        elif isinstance(action, BadArgs):
            msg = tool_message(action.tool_name, action.raw_arguments, n)
            self._bill(
                action.usage, self._send(200, completion(msg, action.usage, model, n, "tool_calls"))
            )
        elif isinstance(action, ReplyText):
            msg = {"role": "assistant", "content": action.text}
            self._bill(
                action.usage, self._send(200, completion(msg, action.usage, model, n, "stop"))
            )
        elif isinstance(action, RawJSON):
            self._send(200, dict(action.body))
        elif isinstance(action, Malformed):
            self._send_raw(200, action.raw_body.encode(), {})
        elif isinstance(action, Unauthorized):
            got = (rec.authorization or "").removeprefix("Bearer ")
            err = {"message": f"Incorrect API key provided: {got}", "code": "invalid_api_key"}
            self._send(401, {"error": {**err, "type": "invalid_request_error"}})
        elif isinstance(action, ModelNotFound):
            err = {"message": f"The model `{model}` does not exist", "code": "model_not_found"}
            self._send(404, {"error": {**err, "type": "invalid_request_error"}})
        elif isinstance(action, Status):
            headers = {}
            if action.retry_after is not None:
                headers["Retry-After"] = f"{action.retry_after:g}"
            payload = action.body
            if payload is None or isinstance(payload, str):
                text = payload or f"fake status {action.code}"
                payload = {"error": {"message": text, "type": "server_error", "code": None}}
            if action.no_retry:
                headers["x-should-retry"] = "false"
            self._send(action.code, dict(payload), headers)
        else:  # pragma: no cover - a new Action type without a branch
            raise TypeError(f"unknown action {action!r}")

    def _bill(self, usage: tuple[int, int], sent: bool) -> None:
        """A completion with usage that reached the client is a call the provider bills."""
        if sent:
            with self.fake._lock:
                self.fake.answered.append(usage)

    def _send(
        self, code: int, payload: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> bool:
        return self._send_raw(code, json.dumps(payload).encode(), headers or {})

    def _send_raw(self, code: int, data: bytes, headers: Mapping[str, str]) -> bool:
        """Send a response; False if the client was gone."""
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            self.close_connection = True  # the client gave up (timeout); nothing to do
            return False
        return True
