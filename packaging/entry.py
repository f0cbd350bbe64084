"""The frozen workbench's entry point: the ``workbench`` command, as the installed script runs it.

A PyInstaller bundle has no Python interpreter to hand: ``sys.executable`` is this program. The
workbench re-runs itself in two ways that a plain interpreter understands, so this entry
understands them too, before anything else is imported:

- ``-c CODE``: the OpenGL probe of :mod:`sim.gl` renders one frame in a child process (a broken
  driver may abort the process that tries it), as ``sys.executable -c PROBE``;
- ``-m app.cli ARGS``: the GUI starts local workers as ``sys.executable -m app.cli worker …``.

Anything else is the command line of ``workbench``.
"""

from __future__ import annotations

import sys


def main() -> None:
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "-c":
        sys.argv = ["-c", *args[2:]]
        exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})
        return
    if len(args) >= 2 and args[0] == "-m" and args[1] in ("app.cli", "app.cli.__main__"):
        sys.argv = [sys.argv[0], *args[2:]]
    from app.cli import main as workbench

    workbench()


if __name__ == "__main__":
    main()
