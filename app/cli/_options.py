"""``--project``, defined once: every command names its project folder the same way."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

PROJECT_HELP = "Project folder."
#: for the commands that make the project when the folder holds none (``Project.open_or_create``)
CREATED_HELP = "Project folder (created if missing)."


def project_option(
    help: str = PROJECT_HELP, *, required: bool = True, exists: bool = False, file_okay: bool = True
) -> Callable[[F], F]:
    """``--project FOLDER``, given to the command as ``project_dir`` (a :class:`Path`).

    Required unless ``required=False`` (a command that only sometimes needs a project);
    ``exists`` and ``file_okay`` are :class:`click.Path`'s checks, made before the command runs.
    """
    return click.option(
        "--project", "project_dir", required=required, help=help,
        type=click.Path(path_type=Path, exists=exists, file_okay=file_okay),
    )  # fmt: skip
