"""Importing case folders off the GUI thread: indexing every video of a large folder takes
minutes, and the window must keep drawing (and the annotator keep working) meanwhile.

The import runs on the bridge's long-work thread (not the threads frames decode on) with its own
project connection (a SQLite connection
belongs to one thread at a time); file counts come back to the GUI thread as they happen.
Folders dropped while one imports wait their turn, so two imports never race for the project.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from annotation import UserError
from app.gui.common._bridge import Bridge
from storage import ImportReport, Project, import_cases


def run_import(root: Path, folder: Path, steps: Callable[[int, int], None]) -> ImportReport:
    """Import ``folder`` into the project at ``root`` (runs on a worker thread)."""
    with Project.open(root) as project:
        return import_cases(project, folder, steps=steps)


class CaseImporter(QObject):
    """One import at a time on the executor; the others queue. Signals arrive on the GUI thread."""

    started = Signal(object)  # folder
    progress = Signal(object, int, int)  # folder, files done, files in all
    imported = Signal(object, object, object)  # project root, folder, ImportReport
    failed = Signal(object, object)  # folder, UserError: nothing was changed

    def __init__(self, bridge: Bridge, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._waiting: deque[tuple[Path, Path]] = deque()
        self._current: Path | None = None

    def add(self, root: Path, folder: Path) -> None:
        """Import ``folder`` into the project at ``root`` once the imports before it are done."""
        self._waiting.append((root, folder))
        self._next()

    def _next(self) -> None:
        if self._current is not None or not self._waiting:
            return  # one at a time: the running import starts the next when it ends
        root, folder = self._waiting.popleft()
        self._current = folder
        self.started.emit(folder)

        def steps(done: int, total: int) -> None:  # on the worker thread: no Qt calls here
            self._bridge.post(lambda: self.progress.emit(folder, done, total))

        def done(report: ImportReport) -> None:
            self._current = None
            self.imported.emit(root, folder, report)
            self._next()

        def error(err: BaseException) -> None:
            self._current = None
            if isinstance(err, UserError):
                self.failed.emit(folder, err)
            else:  # a bug, not the folder: the error boundary reports it with its traceback
                self._bridge.fail("import", err)
            self._next()

        self._bridge.submit(
            "import", run_import, root, folder, steps, on_done=done, on_error=error, long=True
        )


__all__ = ["CaseImporter", "run_import"]
