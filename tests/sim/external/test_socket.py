"""The socket transport: the workbench listens, an agent (here a thread) connects."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from sim.external import ExternalAgent, ExternalAgentError
from sim.world import World
from tests.sim.external.helpers import reference_commands, run, stack_two


def _client(connect: Any, commands: list[str], seen: list[dict[str, Any]]) -> None:
    """A protocol client in a thread: asks for every tick, waits while busy, acts when idle."""
    with connect() as sock, sock.makefile("rwb") as f:
        for line in f:
            msg = json.loads(line)
            seen.append(msg)
            if msg["type"] == "hello":
                reply: dict[str, Any] = {
                    "type": "ready",
                    "protocol": msg["protocol"],
                    "agent": {"name": "thread"},
                    "every_tick": True,
                }
            elif msg["type"] == "end":
                return
            elif msg["busy"] or msg["queued"]:
                reply = {"type": "wait"}
            elif commands:
                reply = {"type": "act", "actions": [commands.pop(0)], "say": "next step"}
            else:
                reply = {"type": "done"}
            f.write(json.dumps(reply).encode() + b"\n")
            f.flush()  # fmt: skip


def _episode(address: str | int, connect_to: Any) -> tuple[Any, ExternalAgent, list[Any]]:
    bound = stack_two()
    seen: list[dict[str, Any]] = []
    thread: list[threading.Thread] = []

    def make(b: Any, world: World) -> ExternalAgent:
        agent = ExternalAgent.listen(address, b, world, timeout=10.0)
        target = connect_to(agent.address)
        t = threading.Thread(target=_client, args=(target, reference_commands(b), seen))
        t.start()
        thread.append(t)
        return agent

    runner, agent = run(bound, make)
    thread[0].join(10)
    return runner, agent, seen


def test_tcp_episode_every_tick() -> None:
    runner, agent, seen = _episode(0, lambda port: lambda: socket.create_connection(
        ("127.0.0.1", port)))  # fmt: skip
    assert isinstance(agent.address, int) and agent.address > 0
    assert runner.result is not None and runner.result.status == "completed"
    assert runner.result.success
    observations = [m for m in seen if m["type"] == "observation"]
    # every_tick: asked at every tick from 0 up to the one it said done at
    assert [o["tick"] for o in observations] == list(range(len(observations)))
    assert any(o["busy"] for o in observations)
    assert seen[-1] == {"type": "end", "status": "completed"}
    assert [u.text for u in agent.utterances] == ["next step", "next step"]
    assert agent.utterances[0].tick == 0


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix domain sockets here")
def test_unix_socket_episode(tmp_path: Path) -> None:
    path = tmp_path / "agent.sock"

    def connect(p: str) -> Any:
        def go() -> socket.socket:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(p)
            return s

        return go

    runner, agent, _ = _episode(str(path), connect)
    assert agent.address == str(path)
    assert runner.result is not None and runner.result.success
    assert not path.exists()  # the socket file is removed when the episode ends


def test_nobody_connects() -> None:
    bound = stack_two()

    def make(b: Any, world: World) -> ExternalAgent:
        return ExternalAgent.listen(0, b, world, timeout=0.2)

    with pytest.raises(ExternalAgentError, match=r"no agent connected to 127\.0\.0\.1:\d+"):
        run(bound, make)
