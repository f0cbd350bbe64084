"""What the CLI and the GUI do with an exception that is not a :class:`annotation.UserError`.

Such an exception is a bug in the workbench, not a mistake of the user: the user gets one line
saying so, and the traceback goes to a log file (``WB_LOG_DIR``) whose path the line names, so it
can be attached to a bug report without scrolling back through a terminal.
"""

from __future__ import annotations

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
    text = "\n".join(line.rstrip("\n") for line in lines) + "\n"
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
    return f"this is a bug in the workbench, not in your input ({what}); {where}"


def command_line() -> str:
    return " ".join(["workbench", *sys.argv[1:]])
