"""The local socket transport: the workbench listens, one agent connects.

For a policy that is started on its own (a notebook, a container, a debugger): the workbench
binds a Unix domain socket path or a TCP port on 127.0.0.1 — never another interface, as the
protocol has no authentication — and accepts the first agent that connects.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import time
from pathlib import Path

from sim.external._protocol import ExternalAgentError
from sim.external._transport import TransportClosedError
from storage.guard import LIMITS

LOOPBACK = "127.0.0.1"


def parse_address(address: str | int | Path) -> str | int:
    """A TCP port (``5555``, ``"5555"``, ``"tcp:5555"``) or a Unix socket path (anything else)."""
    if isinstance(address, int) and not isinstance(address, bool):
        port = address
    elif isinstance(address, str) and address.removeprefix("tcp:").isdigit():
        port = int(address.removeprefix("tcp:"))
    else:
        return str(address).removeprefix("unix:")
    if not 0 <= port <= 65535:
        raise ExternalAgentError(f"agent port must be 0–65535, not {port}")
    return port


def _answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


class SocketTransport:
    """Listens at once (so :attr:`address` is known, port 0 picks a free one); accepts the
    agent on first use, waiting up to ``connect_timeout`` seconds."""

    def __init__(self, address: str | int | Path, *, connect_timeout: float = 30.0) -> None:
        self.address: str | int = parse_address(address)
        self.connect_timeout = connect_timeout
        self._conn: socket.socket | None = None
        self._buffer = b""
        self._closed = False
        try:
            self._server = self._listen()
        except OSError as e:
            raise ExternalAgentError(f"cannot listen for the agent on {self._where()}: "
                                     f"{e.strerror or e}") from None  # fmt: skip

    def _listen(self) -> socket.socket:
        if isinstance(self.address, int):
            server = socket.create_server((LOOPBACK, self.address))
            self.address = int(server.getsockname()[1])
            return server
        if not hasattr(socket, "AF_UNIX"):
            raise ExternalAgentError("Unix domain sockets are not available here: give a port")
        path = Path(self.address)
        if path.exists() or path.is_symlink():
            if not stat.S_ISSOCK(path.lstat().st_mode):
                raise ExternalAgentError(f"{path} exists and is not a socket: choose another path")
            if _answers(path):
                raise ExternalAgentError(f"{path} is in use by another listener")
            path.unlink()  # a socket left by an earlier run that did not end cleanly
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.bind(str(path))
            server.listen(1)
        except OSError:
            server.close()
            raise
        return server

    def _where(self) -> str:
        if isinstance(self.address, int):
            return f"{LOOPBACK}:{self.address}"
        return f"unix socket {self.address}"

    def _connection(self) -> socket.socket:
        if self._conn is not None:
            return self._conn
        if self._closed:
            raise TransportClosedError("the connection was closed")
        self._server.settimeout(self.connect_timeout)
        try:
            self._conn, _ = self._server.accept()
        except TimeoutError:
            raise ExternalAgentError(
                f"no agent connected to {self._where()} within {self.connect_timeout:g} s"
            ) from None
        finally:
            self._server.close()  # one agent per episode
        return self._conn

    def send(self, line: bytes) -> None:
        conn = self._connection()
        try:
            conn.settimeout(None)
            conn.sendall(line + b"\n")
        except OSError:
            raise TransportClosedError("closed the connection") from None

    def receive(self, timeout: float) -> bytes:
        """The next line; past ``LIMITS.agent_message_bytes`` without a newline, what came so
        far (too long: ``decode`` refuses it), so no agent can fill the memory."""
        conn = self._connection()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            if len(self._buffer) > LIMITS.agent_message_bytes:
                line, self._buffer = self._buffer, b""
                return line
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            conn.settimeout(left)
            try:
                chunk = conn.recv(65536)
            except TimeoutError:
                raise
            except OSError:
                raise TransportClosedError("closed the connection") from None
            if not chunk:
                raise TransportClosedError("closed the connection")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.rstrip(b"\r")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for s in (self._conn, self._server):
            if s is not None:
                with contextlib.suppress(OSError):
                    s.close()
        if isinstance(self.address, str):
            with contextlib.suppress(OSError):
                os.unlink(self.address)

    def describe(self) -> str:
        return f"agent on {self._where()}"

    def log_tail(self, lines: int = 3) -> str:
        return ""  # the agent's stderr is its own terminal's
