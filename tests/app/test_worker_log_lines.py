"""Worker log lines reach the GUI whole, however the pipe splits them: a JSON record cut across
two reads (even inside a UTF-8 character) is reassembled, not shown as two garbage lines."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from PySide6.QtCore import QProcess
from pytestqt.qtbot import QtBot

from app.gui.common._workers import LineBuffer, LocalWorkers

pytestmark = pytest.mark.gui


def test_line_buffer_keeps_partial_lines_until_their_newline() -> None:
    buf = LineBuffer()
    assert buf.feed(b'{"event": "job_do') == []
    assert buf.feed(b'ne", "text": "caf\xc3') == []  # cut inside the two bytes of "é"
    assert buf.feed(b'\xa9"}\n{"event": "b"}\r\n{"ev') == [
        '{"event": "job_done", "text": "café"}',
        '{"event": "b"}',
    ]
    assert buf.feed(b'ent": "c"}') == []
    assert buf.flush() == ['{"event": "c"}']  # the process ended without a final newline
    assert buf.flush() == []


# The child writes one record in three pieces and waits for the parent between pieces, so each
# piece is its own read on the parent's side (no timing involved).
CHILD = r"""
import sys
err = sys.stderr.buffer
for piece in (b'{"level": "info", "event": "job_do', b'ne", "job": 7, "text": "caf\xc3',
              b'\xa9"}\n{"level": "info", "event": "stop"}'):
    err.write(piece)
    err.flush()
    sys.stdin.readline()
"""


def test_a_record_split_across_pipe_reads_arrives_whole(qtbot: QtBot) -> None:
    workers = LocalWorkers()
    records: list[dict[str, Any]] = []
    workers.log_line.connect(records.append)
    proc = QProcess(workers)
    proc.setProgram(sys.executable)
    proc.setArguments(["-c", CHILD])
    reads: list[int] = []
    workers.watch(proc)
    proc.readyReadStandardError.connect(lambda: reads.append(1))  # after the worker's reader
    proc.start()
    for k in range(3):
        qtbot.waitUntil(lambda: len(reads) > k)  # noqa: B023 (waited on at once)
        if k < 2:
            assert records == []  # half a record is not a record
        proc.write(b"\n")
    qtbot.waitUntil(lambda: proc.state() == QProcess.ProcessState.NotRunning)
    assert records == [
        {"level": "info", "event": "job_done", "job": 7, "text": "café"},
        {"level": "info", "event": "stop"},  # the last line, flushed when the process ended
    ]
    assert not any(r.get("event") == "output" for r in records)
