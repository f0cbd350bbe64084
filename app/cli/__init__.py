"""The ``workbench`` command line. Heavy libraries are imported inside commands, so
``workbench --help`` stays fast."""

from app.cli._main import main

__all__ = ["main"]
