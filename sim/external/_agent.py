"""``ExternalAgent``: an agent under test living in its own process, driven over a transport.

It implements the engine's ``Agent`` protocol. It asks the external process to decide under
the same rule as the scripted agent — when the world is idle and nothing is queued — or every
tick if the agent asked for that, and never before a ``wait`` it sent has run out. Verdicts and
finished actions are gathered between questions, so an agent asked only when idle still learns
how each of its actions went. Everything that crosses the boundary goes to ``record``.

The process keeps its own memory, so an episode with it cannot be rewound: ``restore`` refuses,
and forks of such episodes replay the recorded decisions (the engine's ReplayAgent) instead.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt

import sim.external._protocol as p  # not `from sim.external import`: that imports the package back
from sim.external._protocol import ExternalAgentError, MessageError, Ready
from sim.external._sink import EndSink
from sim.external._socket import SocketTransport
from sim.external._transport import ProcessTransport, Transport, TransportClosedError
from sim.world import Action, Outcome, Verdict, World

if TYPE_CHECKING:  # sim.episode will import this package to offer it: no import back at runtime
    from sim.episode import Observation
    from sim.scenario import BoundScenario

#: called with direction ("sent" | "received"), tick and the message, for every message
Recorder = Callable[[str, int, dict[str, Any]], None]
Render = Callable[[str, int, int], npt.NDArray[np.uint8]]  # camera, width, height → RGB image
EXCERPT_BYTES = 2_000  # of a refused message, kept with the episode
T = TypeVar("T")


@dataclass(frozen=True)
class Utterance:
    """Something the agent said with an ``act`` (stored with the episode, never executed)."""

    tick: int
    text: str


class ExternalAgent:
    """The ``Agent`` for a process speaking ``workbench-agent/1``; see the module docstring."""

    name = "external"
    source = "agent"

    def __init__(
        self,
        transport: Transport,
        scenario: BoundScenario,
        world: World,
        *,
        timeout: float = 30.0,
        record: Recorder | None = None,
        render: Render | None = None,
        cameras: Sequence[str] | None = None,
    ) -> None:
        self.transport = transport
        self.scenario = scenario
        self.world = world
        self.timeout = timeout
        self._record = record
        self._render: Render = render or world.render
        self.cameras = tuple(world.cameras if cameras is None else cameras)
        self.ready: Ready | None = None
        self.claim: str | None = None  # what `done` said, for the record: never scored
        self.utterances: list[Utterance] = []
        self._done = False
        self._ended = False
        self._closed = False
        self._exchanges = 0  # observation → reply round trips
        self._received = 0  # messages received, for error messages ("message 3")
        self._next_ask = 0
        self._tick = 0  # the last tick it was shown
        self._verdicts: list[Verdict] = []
        self._finished: list[Outcome] = []

    @classmethod
    def spawn(
        cls,
        argv: Sequence[str],
        scenario: BoundScenario,
        world: World,
        *,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        stderr_log: str | Path | None = None,
        timeout: float = 30.0,
        record: Recorder | None = None,
        render: Render | None = None,
        cameras: Sequence[str] | None = None,
    ) -> ExternalAgent:
        """Start ``argv`` and speak over its stdin/stdout; ``env`` adds to this environment."""
        transport = ProcessTransport(argv, cwd=cwd, env=env, stderr_log=stderr_log)
        return cls(transport, scenario, world, timeout=timeout, record=record, render=render,
                   cameras=cameras)  # fmt: skip

    @classmethod
    def listen(
        cls,
        address: str | int | Path,
        scenario: BoundScenario,
        world: World,
        *,
        connect_timeout: float | None = None,
        timeout: float = 30.0,
        record: Recorder | None = None,
        render: Render | None = None,
        cameras: Sequence[str] | None = None,
    ) -> ExternalAgent:
        """Listen on a Unix socket path or a 127.0.0.1 port (0: any free one, see ``address``);
        the agent connects before the first observation, within ``connect_timeout`` seconds
        (default: ``timeout``)."""
        wait = timeout if connect_timeout is None else connect_timeout
        transport = SocketTransport(address, connect_timeout=wait)
        return cls(transport, scenario, world, timeout=timeout, record=record, render=render,
                   cameras=cameras)  # fmt: skip

    # -- what the caller may read ------------------------------------------------------------
    @property
    def address(self) -> str | int | None:
        return self.transport.address if isinstance(self.transport, SocketTransport) else None

    @property
    def returncode(self) -> int | None:
        t = self.transport
        return t.returncode if isinstance(t, ProcessTransport) else None

    @property
    def agent_info(self) -> dict[str, str]:
        r = self.ready
        return {"name": r.name, "version": r.version} if r else {}

    @property
    def sink(self) -> EndSink:
        """A runner sink that sends ``end`` with the episode's status when it finishes."""
        return EndSink(self)

    # -- the Agent protocol ------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self._done

    def decide(self, obs: Observation) -> list[Action]:
        self._verdicts.extend(obs.verdicts)
        self._finished.extend(obs.finished)
        self._tick = obs.tick
        if self._done:
            return []
        try:
            self.open(obs.tick)
            idle = not (obs.busy or obs.queued)
            asked = self.ready is not None and (self.ready.every_tick or idle)
            if obs.tick < self._next_ask or not asked:
                return []
            return self._exchange(obs)
        except ExternalAgentError as e:
            self._abort(str(e), obs.tick)
            raise

    def state(self) -> dict[str, Any]:
        return {"exchanges": self._exchanges, "done": self._done}

    def restore(self, state: dict[str, Any]) -> None:
        raise ExternalAgentError(
            f"an external agent cannot be rewound to tick {state.get('at_tick', '?')}: its "
            "process keeps its own memory; forks of external-agent episodes replay the recorded "
            "decisions instead"
        )

    # -- the conversation --------------------------------------------------------------------
    def open(self, tick: int = 0) -> None:
        """Say hello and read ready (done by the first ``decide`` if not called before)."""
        if self.ready is not None:
            return
        if self._closed:
            raise ExternalAgentError(f"{self.transport.describe()}: already closed")
        w = self.world
        self._send(p.hello(self.scenario, w.mode, w.delta, self.cameras), tick)
        msg = self._receive(tick, "hello")
        self.ready = self._checked(lambda: p.parse_ready(msg, self.cameras))

    def _exchange(self, obs: Observation) -> list[Action]:
        assert self.ready is not None
        frames = {c: p.png_base64(self._render(c, self.ready.width, self.ready.height))
                  for c in self.ready.cameras}  # fmt: skip
        message = p.observation(obs.tick, obs.busy, obs.queued, obs.graph, self._verdicts,
                                self._finished, frames)  # fmt: skip
        self._verdicts, self._finished = [], []
        self._send(message, obs.tick)
        msg = self._receive(obs.tick, f"observation at tick {obs.tick}")
        reply = self._checked(lambda: p.parse_reply(msg))
        self._exchanges += 1
        self._next_ask = obs.tick + reply.ticks
        if reply.say:
            self.utterances.append(Utterance(obs.tick, reply.say))
        if reply.kind == "done":
            self._done = True
            self.claim = reply.claim
        return list(reply.actions)

    def _send(self, message: dict[str, Any], tick: int) -> None:
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        if self._record is not None:
            self._record("sent", tick, message)
        try:
            self.transport.send(line)
        except TransportClosedError as e:
            raise self._error(f"the agent {e} before the {message['type']} could be sent") from None

    def _receive(self, tick: int, answering: str) -> dict[str, Any]:
        self._received += 1
        try:
            raw = self.transport.receive(self.timeout)
        except TimeoutError:
            raise self._error(f"no reply within {self.timeout:g} s to the {answering} (message "
                              f"{self._received} from the agent was due)") from None  # fmt: skip
        except TransportClosedError as e:
            raise self._error(f"the agent {e} instead of answering the {answering}") from None
        try:
            msg = p.decode(raw)  # its size, depth, texts and numbers too: before it is kept
        except MessageError as v:
            if self._record is not None:  # kept for the audit, cut: never stored at any size
                shown = raw[:EXCERPT_BYTES].decode("utf-8", "replace")
                cut = f"… [cut: {len(raw):,} bytes]" if len(raw) > EXCERPT_BYTES else ""
                self._record("received", tick, {"invalid": shown + cut})
            if isinstance(self.transport, ProcessTransport) and v.problem.startswith("not "):
                v = MessageError("", f"{v.problem} (stdout is for protocol lines: log to stderr)")
            raise self._violation(v) from None
        if self._record is not None:
            self._record("received", tick, msg)
        return msg

    def _checked(self, parse: Callable[[], T]) -> T:
        try:
            return parse()
        except MessageError as v:
            raise self._violation(v) from None

    def _violation(self, v: MessageError) -> ExternalAgentError:
        where = f", field {v.field!r}" if v.field else ""
        return self._error(f"message {self._received} from the agent{where}: {v.problem}")

    def _error(self, what: str) -> ExternalAgentError:
        text = f"{self.transport.describe()}: {what}"
        tail = self.transport.log_tail()
        if tail:
            text += f" — its stderr ends: {tail}"
        log = getattr(self.transport, "stderr_log", None)
        if log is not None:
            text += f" (whole log: {log})"
        return ExternalAgentError(text)

    # -- the end -----------------------------------------------------------------------------
    def end(self, status: str, tick: int | None = None, message: str | None = None) -> None:
        """Tell the agent the episode ended with ``status`` (``error`` with ``message``), then
        close (idempotent)."""
        said: dict[str, Any] = {"type": "end", "status": status}
        if message is not None:
            said["message"] = message
        self._say_end(said, tick)
        self.close()

    def _abort(self, reason: str, tick: int) -> None:
        self._say_end({"type": "end", "status": "error", "message": reason}, tick)
        self.close()

    def _say_end(self, message: dict[str, Any], tick: int | None) -> None:
        if self._ended or self._closed or self.ready is None:
            return
        self._ended = True
        # best effort: an agent that left after `done` need not hear it
        with contextlib.suppress(ExternalAgentError):
            self._send(message, self._tick if tick is None else tick)

    def close(self) -> None:
        """End the process or connection (EOF, then terminate, then kill); idempotent."""
        if not self._closed:
            self._closed = True
            self.transport.close()

    def __enter__(self) -> ExternalAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
