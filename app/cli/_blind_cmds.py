"""``workbench blind on|off|status``: the lead's blind mode of a shared project.

While blind mode is on, the window opens in its rater view and the results commands
(``agreement``, ``ablation``) refuse without the lead's passphrase (``--passphrase`` or
``WB_LEAD_PASSPHRASE``); the rule itself is ``storage.Blinding``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from app.cli._options import project_option

F = TypeVar("F", bound=Callable[..., Any])

PASSPHRASE_ENV = "WB_LEAD_PASSPHRASE"
#: how a refusal tells the user to unlock, in the CLI's terms
HOW = f"with --passphrase or {PASSPHRASE_ENV}"


def passphrase_option(*, prompt: bool = False, confirm: bool = False) -> Callable[[F], F]:
    """``--passphrase`` (or ``WB_LEAD_PASSPHRASE``), given to the command as ``passphrase``."""
    return click.option(
        "--passphrase", "passphrase", envvar=PASSPHRASE_ENV, show_envvar=True,
        prompt="Lead's passphrase" if prompt else False, hide_input=True,
        confirmation_prompt=confirm,
        help="The lead's passphrase (needed while the project is in blind mode).",
    )  # fmt: skip


def require_lead(project_dir: Path, passphrase: str | None, what: str) -> None:
    """Refuse ``what`` in a blind project unless ``passphrase`` is the lead's (a UserError)."""
    from storage import Project

    with Project.open(project_dir, readonly=True) as project:
        project.blinding.require_lead(passphrase, what, how=HOW)


@click.group()
def blind() -> None:
    """Blind mode of a shared project: raters see no results, judge scores or generators."""


@blind.command("on")
@project_option()
@passphrase_option(prompt=True, confirm=True)
def blind_on(project_dir: Path, passphrase: str) -> None:
    """Turn blind mode on; only this passphrase unlocks results (a salted hash is stored)."""
    from storage import Project

    with Project.open(project_dir) as project:
        project.blinding.enable(passphrase)
    click.echo(f"blind mode on: {project_dir} opens in the rater view until the lead unlocks it")


@blind.command("off")
@project_option()
@passphrase_option(prompt=True)
def blind_off(project_dir: Path, passphrase: str) -> None:
    """Turn blind mode off (the lead's passphrase)."""
    from storage import Project

    with Project.open(project_dir) as project:
        was = project.blinding.enabled
        project.blinding.disable(passphrase)
    click.echo("blind mode off" if was else "blind mode was not on")


@blind.command("status")
@project_option()
def blind_status(project_dir: Path) -> None:
    """Say whether the project is in blind mode."""
    from storage import Project

    with Project.open(project_dir) as project:
        on = project.blinding.enabled
    click.echo("blind mode on" if on else "blind mode off")


COMMANDS = [blind]
