"""What every hostile-input test asks of a refusal: the project as it was (row counts), no byte of
a file from outside inside it (a sentinel), and the command's peak memory, measured in a child.

``peak`` runs the command under a small wrapper process, so ``RUSAGE_CHILDREN`` covers that one
command and nothing the test process ran before it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from storage import Project

SECRET = b"SENTINEL-6b1f0c-private-key-material"  # what a file outside holds
GB = 1 << 30

_WRAPPER = """
import json, resource, subprocess, sys
p = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print(json.dumps({"rc": p.returncode, "out": p.stdout, "err": p.stderr, "peak": peak}))
"""


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str
    peak_bytes: int  # the command's peak resident memory


def peak(*argv: str, env: dict[str, str] | None = None) -> Ran:
    """Run ``argv`` in a child and return its output and peak memory."""
    full = {**os.environ, **(env or {})}
    out = subprocess.run([sys.executable, "-c", _WRAPPER, *argv], capture_output=True,
                         text=True, check=True, env=full)  # fmt: skip
    got = json.loads(out.stdout)
    return Ran(got["rc"], got["out"], got["err"], got["peak"])


def workbench(*args: str, env: dict[str, str] | None = None) -> Ran:
    """``workbench ARGS`` in a child, with its peak memory."""
    return peak(sys.executable, "-m", "app.cli", *args, env=env)


def one_line_error(ran: Ran) -> str:
    """The refusal a user sees: exit 2, one ``error:`` line, no traceback."""
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr and "bug in the workbench" not in ran.stderr, ran.stderr
    (line,) = [x for x in ran.stderr.strip().splitlines() if x.strip()]
    assert line.startswith("error: "), line
    return line


def row_counts(root: Path) -> dict[str, int]:
    """Rows per table of the project at ``root``."""
    with Project.open(root) as p:
        names = [r[0] for r in p.db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ).fetchall()]  # fmt: skip
        return {n: int(p.db.execute(f'SELECT COUNT(*) FROM "{n}"').fetchone()[0]) for n in names}


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []


def assert_no_secret(root: Path, secret: bytes = SECRET) -> None:
    """No file under ``root`` (the database included) holds ``secret``."""
    for path in files_under(root):
        assert secret not in path.read_bytes(), f"{path} holds the file from outside"
