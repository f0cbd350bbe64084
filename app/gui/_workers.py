"""Local worker processes started and stopped from the GUI.

Each worker is ``python -m app.cli worker --project DIR`` in a QProcess: the same code the CLI
runs, in its own process, so a crash in a job never takes the window down and killing the
window never loses a finished result (the job table holds everything).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PySide6.QtCore import QObject, QProcess, Signal


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
            proc.readyReadStandardError.connect(lambda p=proc: self._read(p))
            proc.finished.connect(lambda *_a, p=proc: self._finished(p))
            proc.start()
            self._procs.append(proc)
        self.changed.emit()

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

    def _read(self, proc: QProcess) -> None:
        data = bytes(proc.readAllStandardError().data()).decode("utf-8", "replace")
        for line in data.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                record = {"level": "info", "event": "output", "text": line}
            if isinstance(record, dict):
                self.log_line.emit(record)

    def _finished(self, proc: QProcess) -> None:
        if proc in self._procs:
            self._procs.remove(proc)
        self.changed.emit()
