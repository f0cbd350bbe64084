"""How protocol lines travel: the ``Transport`` interface and the stdio (subprocess) transport.

A transport moves whole lines (bytes without the newline) and knows nothing of JSON. It reports
a closed peer as :class:`TransportClosedError` and a late one as :class:`TimeoutError`; the
agent turns both into an :class:`ExternalAgentError` naming the message it was waiting for.

A line is read no further than ``LIMITS.agent_message_bytes`` and one byte: a longer one is
received cut there (``decode`` refuses it by its length), never held whole in memory (an
agent's 8 GB line would otherwise be), and the rest of it is skipped up to its newline.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shlex
import subprocess
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Protocol

from sim.external._protocol import ExternalAgentError
from storage.guard import LIMITS

GRACE_SECONDS = 2.0  # how long an agent may take to leave on its own, then to die on SIGTERM
STDERR_LINES = 200  # kept in memory for the tail shown in error messages


class TransportClosedError(Exception):
    """The other side went away; the message says how (exit code, closed connection)."""


def skip_line(pipe: IO[bytes]) -> None:
    """Read and drop the rest of a line too long to keep, a chunk at a time."""
    while (rest := pipe.readline(1 << 16)) and not rest.endswith(b"\n"):
        pass


class Transport(Protocol):
    def send(self, line: bytes) -> None:
        """Send one line (no newline in it); raises TransportClosedError if the peer is gone."""
        ...

    def receive(self, timeout: float) -> bytes:
        """The next line; TimeoutError after ``timeout`` s, TransportClosedError at the end."""
        ...

    def close(self) -> None:
        """Release the peer (end the process, close the connection); idempotent."""
        ...

    def describe(self) -> str:
        """Who is on the other side, for messages: "agent process 'python a.py'"."""
        ...

    def log_tail(self, lines: int = 3) -> str:
        """The last lines the agent wrote to its diagnostics (stderr), or ''."""
        ...


class ProcessTransport:
    """An agent process speaking over its stdin/stdout; its stderr goes to a log and a tail.

    Pipes are read by threads rather than ``select`` so this works on Windows too.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        stderr_log: str | Path | None = None,
    ) -> None:
        if not argv:
            raise ExternalAgentError("the agent command is empty")
        self.argv = list(argv)
        # extra variables on top of ours: a policy needs PATH, HOME, CUDA_* … like any program
        full_env = {**os.environ, **env} if env is not None else None
        self._log: IO[bytes] | None = open(stderr_log, "ab") if stderr_log else None  # noqa: SIM115
        self.stderr_log = Path(stderr_log) if stderr_log else None
        try:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=cwd, env=full_env,
            )  # fmt: skip
        except OSError as e:
            if self._log is not None:
                self._log.close()
            raise ExternalAgentError(
                f"cannot start the agent command {self._shown()}: {e.strerror or e}"
            ) from None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._tail: deque[str] = deque(maxlen=STDERR_LINES)
        self._closed = False
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._readers = [
            threading.Thread(target=self._read_stdout, args=(self.proc.stdout,), daemon=True),
            threading.Thread(target=self._read_stderr, args=(self.proc.stderr,), daemon=True),
        ]
        for t in self._readers:
            t.start()

    def _shown(self) -> str:
        shown = shlex.join(self.argv)
        return repr(shown if len(shown) <= 120 else shown[:119] + "…")

    def _read_stdout(self, pipe: IO[bytes]) -> None:
        limit = LIMITS.agent_message_bytes
        while line := pipe.readline(limit + 1):
            if len(line) > limit and not line.endswith(b"\n"):
                self._lines.put(line)  # cut: ``decode`` refuses it by its length
                skip_line(pipe)
            else:
                self._lines.put(line.rstrip(b"\r\n"))
        self._lines.put(None)

    def _read_stderr(self, pipe: IO[bytes]) -> None:
        for line in pipe:
            self._tail.append(line.decode("utf-8", "replace").rstrip())
            if self._log is not None:
                try:
                    self._log.write(line)
                    self._log.flush()
                except ValueError:  # closed by close() while a grandchild still writes
                    return

    def send(self, line: bytes) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            stdin.write(line + b"\n")
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise TransportClosedError(self._gone()) from None

    def receive(self, timeout: float) -> bytes:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError from None
        if line is None:
            self._lines.put(None)  # every later receive sees the end too
            raise TransportClosedError(self._gone())
        return line

    def _gone(self) -> str:
        try:
            code = self.proc.wait(GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            return "closed its stdout but is still running"
        self._readers[1].join(GRACE_SECONDS)  # so the tail holds its last words
        return f"exited with code {code}"

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()  # EOF: a well-behaved agent leaves by itself
        try:
            self.proc.wait(GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for t in self._readers:
            t.join(GRACE_SECONDS)
        if self._log is not None:
            self._log.close()

    def describe(self) -> str:
        return f"agent process {self._shown()} (pid {self.proc.pid})"

    def log_tail(self, lines: int = 3) -> str:
        kept = [t for t in self._tail if t.strip()][-lines:]
        return " | ".join(kept)
