"""The worker's log: JSON lines, one object per event, with every text redacted.

A worker's stderr is read by people and by the Jobs panel (one JSON object a line), and is
pasted into bug reports: no line may hold an API key, not even one an endpoint's error quoted
back, so every text field goes through :func:`annotation.redact` on its way out. Python
``logging`` records and warnings from the libraries a job uses become such lines too, through a
handler that carries :class:`annotation.RedactingFilter`.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

from annotation import RedactingFilter, redact

LogSink = Callable[[dict[str, Any]], None]
#: ``emit(level, event, **fields)``: how the worker writes one line
Emit = Callable[..., None]

LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40}


def stderr_log(*, debug: bool = False) -> LogSink:
    """A log sink writing one JSON object per line to stderr (debug lines only if asked)."""
    floor = LEVELS["debug" if debug else "info"]
    lock = threading.Lock()

    def sink(record: dict[str, Any]) -> None:
        if LEVELS.get(str(record.get("level")), 20) < floor:
            return
        line = json.dumps(record, default=str)
        with lock:  # whole lines only, even with several threads logging
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    return sink


def redacted(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with every text value redacted (an error, a traceback, a logged message)."""
    return {k: redact(v) if isinstance(v, str) else v for k, v in record.items()}


class _JsonLogHandler(logging.Handler):
    """Python ``logging`` records (the model client's, a library's) as the worker's JSON lines:
    without it they reach stderr as plain text, between the JSON lines a reader parses."""

    def __init__(self, emit: Emit) -> None:
        super().__init__(logging.WARNING)  # httpx logs every request at INFO: not worth a line
        self._emit = emit
        self.addFilter(RedactingFilter())

    def emit(self, record: logging.LogRecord) -> None:
        level = {logging.DEBUG: "debug", logging.INFO: "info", logging.WARNING: "warning"}.get(
            record.levelno, "error"
        )
        with suppress(Exception):  # a record whose message cannot be formatted is dropped
            self._emit(level, "log", logger=record.name, message=record.getMessage())


@contextmanager
def logging_to(emit: Emit) -> Iterator[None]:
    """Route ``logging`` and ``warnings`` into the worker's log while it runs."""
    handler = _JsonLogHandler(emit)
    root = logging.getLogger()
    root.addHandler(handler)
    logging.captureWarnings(True)
    try:
        yield
    finally:
        logging.captureWarnings(False)
        root.removeHandler(handler)
