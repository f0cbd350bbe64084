"""What the CLI and the GUI do with an exception that is not a :class:`annotation.UserError`.

Such an exception is a bug in the workbench, not a mistake of the user: the user gets one line
saying so, and the traceback goes to a log file (``WB_LOG_DIR``) whose path the line names, so it
can be attached to a bug report without scrolling back through a terminal. A full disk is not a
bug even when it arrives as a bare ``OSError`` or SQLite error: the user frees space and tries
again (:func:`disk_full_message`).

Every text made here — the line, the report file — goes through :func:`annotation.redact`: a
traceback quotes error messages, and an endpoint's message may quote the API key it refused. A
report is meant to be attached to a public issue.
"""

from __future__ import annotations

import logging
import os
import platform
import sys
import time
import traceback
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


def _version() -> str:
    try:
        return version("rollout-workbench")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown"


def write_bug_report(exc: BaseException, *, where: str) -> Path | None:
    """Write ``exc``'s traceback to a new file in the log folder; its path, or None if unwritable.

    ``where`` says what was running (the command line, or the GUI action).
    """
    from storage import load_settings

    try:
        folder = load_settings().log_dir
    except Exception:  # a bad WB_ setting must not hide the bug being reported
        folder = Path.cwd()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    lines = [
        f"rollout-workbench {_version()} on Python {platform.python_version()}, "
        f"{platform.platform()}",
        f"while: {where}",
        "",
        *traceback.format_exception(exc),
    ]
    text = _redact("\n".join(line.rstrip("\n") for line in lines) + "\n")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for n in range(1000):  # two bugs in one second of one process keep both reports
            path = folder / f"bug-{stamp}-{os.getpid()}{f'-{n}' if n else ''}.log"
            try:
                with path.open("x", encoding="utf-8") as f:
                    f.write(text)
                return path
            except FileExistsError:
                continue
    except OSError:
        pass
    return None


def bug_message(exc: BaseException, path: Path | None) -> str:
    """The one line a user sees for a bug."""
    what = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    where = f"the traceback is in {path}" if path else "the traceback could not be written"
    return _redact(f"this is a bug in the workbench, not in your input ({what}); {where}")


def disk_full_message(exc: BaseException, where: Path | None = None) -> str:
    """The one line for a full disk that reached the boundary without a plainer message:
    ``where`` (the project), or the file the error names, says which disk."""
    filename = getattr(exc, "filename", None)
    holder = where if where is not None else (Path(filename) if filename else None)
    disk = f"the disk holding {holder}" if holder is not None else "the disk"
    what = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    return _redact(f"{disk} is full ({what}): free some space and try again")


def _redact(text: str) -> str:
    from annotation import redact

    return redact(text)


def _redacting(record: logging.LogRecord) -> bool:
    from annotation import RedactingFilter

    return RedactingFilter().filter(record)


def redact_log_records() -> None:
    """Redact every ``logging`` record the process prints (the root logger's handlers and the
    last-resort one that prints warnings when nothing is configured). The filter imports
    ``annotation`` only with the first record, so ``workbench --help`` stays fast."""
    for handler in (*logging.getLogger().handlers, logging.lastResort):
        if handler is not None and _redacting not in handler.filters:
            handler.addFilter(_redacting)


def command_line() -> str:
    return " ".join(["workbench", *sys.argv[1:]])
