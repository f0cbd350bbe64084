"""Local worker processes started and stopped from the GUI.

Each worker is ``python -m app.cli worker --project DIR`` in a QProcess: the same code the CLI
runs, in its own process, so a crash in a job never takes the window down and killing the
window never loses a finished result (the job table holds everything).

A worker logs one JSON object per line on stderr. A pipe hands the GUI whatever bytes have
arrived, which may end mid-line (or mid-character), so each channel keeps its partial line in a
:class:`LineBuffer` until the newline comes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QProcess, Signal

MAX_LINE = 1 << 20  # a "line" this long without a newline is shown as it is, not kept forever


class LineBuffer:
    """Bytes from a pipe in, whole text lines out."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, data: bytes) -> list[str]:
        """The lines completed by ``data``; the rest waits for its newline."""
        *lines, self._pending = (self._pending + data).split(b"\n")
        if len(self._pending) > MAX_LINE:
            lines.append(self._pending)
            self._pending = b""
        # decode whole lines only, so a character split between two reads stays one character
        return [line.decode("utf-8", "replace").removesuffix("\r") for line in lines]

    def flush(self) -> list[str]:
        """The last line of a stream that ended without a newline."""
        rest, self._pending = self._pending, b""
        return [rest.decode("utf-8", "replace").removesuffix("\r")] if rest else []


def parse_record(line: str) -> dict[str, Any]:
    """A worker's JSON log record; any other output becomes an ``output`` record."""
    try:
        record = json.loads(line)
    except ValueError:
        record = None
    if isinstance(record, dict):
        return record
    return {"level": "info", "event": "output", "text": line}


class LocalWorkers(QObject):
    """Start/stop ``workbench worker`` processes for one project."""

    changed = Signal()
    log_line = Signal(dict)  # one structured log record from a worker

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._procs: list[QProcess] = []

    @property
    def running(self) -> int:
        return sum(1 for p in self._procs if p.state() != QProcess.ProcessState.NotRunning)

    def start(self, project: Path, *, processes: int = 1, concurrency: int = 4) -> None:
        for _ in range(processes):
            proc = QProcess(self)
            proc.setProgram(sys.executable)
            proc.setArguments(
                ["-m", "app.cli", "worker", "--project", str(project),
                 "--concurrency", str(concurrency)]
            )  # fmt: skip
            self.watch(proc)
            proc.start()
            self._procs.append(proc)
        self.changed.emit()

    def watch(self, proc: QProcess) -> None:
        """Turn everything ``proc`` writes (stderr and stdout) into ``log_line`` records."""
        buffers = {
            QProcess.ProcessChannel.StandardError: LineBuffer(),
            QProcess.ProcessChannel.StandardOutput: LineBuffer(),
        }

        def read(channel: QProcess.ProcessChannel) -> None:
            proc.setReadChannel(channel)
            self._emit(buffers[channel].feed(bytes(proc.readAll().data())))

        def finished() -> None:
            for channel, buf in buffers.items():
                read(channel)  # whatever arrived with the exit, then the unterminated tail
                self._emit(buf.flush())
            self._finished(proc)

        proc.readyReadStandardError.connect(lambda: read(QProcess.ProcessChannel.StandardError))
        proc.readyReadStandardOutput.connect(lambda: read(QProcess.ProcessChannel.StandardOutput))
        proc.finished.connect(lambda *_a: finished())

    def stop(self, timeout_ms: int = 15000) -> None:
        """Ask every worker to stop (SIGTERM: finish or hand back running jobs), then wait."""
        for proc in self._procs:
            if proc.state() != QProcess.ProcessState.NotRunning:
                proc.terminate()
        for proc in list(self._procs):
            if not proc.waitForFinished(timeout_ms):
                proc.kill()  # the lease expires and another worker picks the job up
                proc.waitForFinished(2000)
        self._procs.clear()
        self.changed.emit()

    def _emit(self, lines: list[str]) -> None:
        for line in lines:
            if line.strip():
                self.log_line.emit(parse_record(line))

    def _finished(self, proc: QProcess) -> None:
        if proc in self._procs:
            self._procs.remove(proc)
        self.changed.emit()
