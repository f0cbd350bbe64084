"""What an external agent sends is bounded before it is kept: a message at most
``LIMITS.agent_message_bytes`` (the transport stops reading past it), a ``say`` or ``claim`` at
most ``LIMITS.text_chars`` characters, numbers SQLite can hold, nesting the guard's depth. A
message over a limit is refused (not cut), naming the field; the episode ends with that error
and the project keeps a short excerpt, never the sent size."""

from __future__ import annotations

import contextlib
import json
import shlex
import socket
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from sim.external import ExternalAgent, ExternalAgentError
from sim.external._protocol import decode
from sim.external._socket import SocketTransport
from sim.world import World
from storage.guard import LIMITS
from tests.sim.external.helpers import READY, Recorded, run, script, stack_two
from tests.storage.hostile import GB, files_under, workbench

MB = 1 << 20
AFTER_READY = """
sys.stdin.readline()
print(%r, flush=True)
sys.stdin.readline()
%s
sys.stdin.readline()
"""

HOSTILE = [
    ("50 MB say", "sys.stdout.write(json.dumps({'type': 'act', 'say': 'x' * (50 << 20)}) + '\\n')",
     "the message is 262,145 bytes or more; the limit is 262,144"),
    ("8 MB act", "send({'type': 'act', 'actions': ['wait 1'] * (1 << 20)})",
     "the message is 262,145 bytes or more"),
    ("a line without end", "sys.stdout.write('{' * (4 << 20)); sys.stdout.flush()",
     "the message is 262,145 bytes or more"),
    ("say of 30,000 characters", "send({'type': 'act', 'say': 'y' * 30_000})",
     "field 'say': is 30,000 characters; the limit is 20,000"),
    ("claim of 30,000 characters", "send({'type': 'done', 'claim': 'z' * 30_000})",
     "field 'claim': is 30,000 characters; the limit is 20,000"),
    ("a command of 30,000 characters", "send({'type': 'act', 'actions': ['w' * 30_000]})",
     "field 'actions[0]': is 30,000 characters"),
    ("wait 10^30 ticks", "send({'type': 'wait', 'ticks': 10 ** 30})",
     "field 'ticks': 1000000000000000000000000000000 is beyond the integers stored"),
    ("an action's 10^30", "send({'type': 'act', 'actions': [{'verb': 'wait', 'ticks': -10**30}]})",
     "field 'actions[0].ticks': -1000000000000000000000000000000 is beyond"),
    ("nested 100,000 deep", "print('[' * 100_000 + ']' * 100_000, flush=True)",
     "not JSON the workbench can read (nested too deep)"),
    ("nested 100 deep", "send({'type': 'act', 'actions': [], 'say': 's', 'x': eval('[' * 100 "
                        "+ ']' * 100)})", "nested deeper than 64 levels"),
    ("invalid UTF-8", "sys.stdout.buffer.write(b'{\"type\": \"act\", \"say\": \"\\xff\"}\\n'); "
                      "sys.stdout.flush()", "not UTF-8"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "reply", "message"), HOSTILE, ids=[c[0] for c in HOSTILE])
def test_a_message_over_a_limit_is_refused_naming_the_field_and_kept_short(
    case: str, reply: str, message: str
) -> None:
    log: Recorded = []

    def make(b: Any, world: World) -> ExternalAgent:
        rec = lambda d, t, m: log.append((d, t, m))  # noqa: E731
        argv = script(AFTER_READY % (READY, reply))
        return ExternalAgent.spawn(argv, b, world, timeout=20.0, record=rec)

    with pytest.raises(ExternalAgentError) as err:
        run(stack_two(), make)
    text = str(err.value)
    assert "message 2 from the agent" in text and message in text, text
    assert len(text) < 1000
    kept = [m for d, _, m in log if d == "received"]
    assert kept and len(json.dumps(kept[-1])) < 3 * LIMITS.text_chars  # never the sent size
    if "field" not in message:
        assert set(kept[-1]) == {"invalid"} and len(kept[-1]["invalid"]) < 2_100


def test_the_socket_transport_stops_reading_a_line_at_the_limit(tmp_path: Path) -> None:
    transport = SocketTransport(0, connect_timeout=10)
    assert isinstance(transport.address, int)

    def agent() -> None:
        address = ("127.0.0.1", int(transport.address))
        # the workbench hangs up first
        with socket.create_connection(address) as s, contextlib.suppress(OSError):
            s.sendall(b"{" * (8 * MB))  # no newline ever

    t = threading.Thread(target=agent, daemon=True)
    t.start()
    try:
        line = transport.receive(10)
        assert LIMITS.agent_message_bytes < len(line) < LIMITS.agent_message_bytes + 2 * 65536
        with pytest.raises(Exception, match="262,144"):
            decode(line)
    finally:
        transport.close()
        t.join(10)


AGENT = """
import json, sys
def send(m):
    sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
sys.stdin.readline()
send({"type": "ready", "protocol": "workbench-agent/1", "agent": {"name": "big"},
      "every_tick": True})
while sys.stdin.readline():
    send({"type": "act", "actions": [], "say": sys.argv[1] * (8 << 20)})
"""


def test_an_agent_saying_8_mb_every_tick_does_not_grow_the_project(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    root = tmp_path / "p"
    cmd = shlex.join([sys.executable, str(agent), "Q"])
    ran = workbench("sim", "run", "stack-two", "--project", str(root), "--agent", "external",
                    "--agent-cmd", cmd)  # fmt: skip
    assert ran.returncode == 2 and "Traceback" not in ran.stderr, ran.stderr
    line, stored = ran.stderr.strip().splitlines()  # the error, and what became of the episode
    assert line.startswith("error: ") and "message 2 from the agent: the message is 262,145 " \
        "bytes or more; the limit is 262,144" in line, line  # fmt: skip
    assert "was stored as failed after 0 ticks" in stored
    assert ran.peak_bytes < GB
    size = sum(f.stat().st_size for f in files_under(root))
    assert size < 4 * MB, f"the project is {size / MB:.1f} MB"
    for f in files_under(root):
        assert b"Q" * 10_000 not in f.read_bytes()
