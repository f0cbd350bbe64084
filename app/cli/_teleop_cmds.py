"""Teleoperation commands: ``teleop`` (the window on the teleop workspace) and ``export demos``.

``export`` was one command (annotations) before demonstrations could be exported; it is now a
group that still runs that command when no subcommand is named (``workbench export --project
P`` works as it always did) and has ``demos`` as its subcommand.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import click

from app.cli import _project_cmds


def _export_annotations(ctx: click.Context, **kwargs: Any) -> None:
    if ctx.invoked_subcommand is not None:
        return  # `export demos …`: the group's own options are not the subcommand's
    if kwargs.get("project_dir") is None:
        raise click.UsageError("Missing option '--project'.", ctx)
    ctx.invoke(_project_cmds.export, **kwargs)


def _optional(param: click.Parameter) -> click.Parameter:
    """The annotation export's option, not required at the group: `export demos` has its own."""
    if isinstance(param, click.Option) and param.required:
        param = copy.copy(param)
        param.required = False
    return param


export = click.Group(
    "export",
    params=[_optional(p) for p in _project_cmds.export.params],
    callback=click.pass_context(_export_annotations),
    invoke_without_command=True,
    help=(
        "Export gate decisions, evidence and scores (columns: docs/export-format.md); "
        "`export demos` exports teleoperated demonstrations."
    ),
)


@export.command("demos")
@click.option("--format", "fmt", type=click.Choice(["lerobot", "robomimic"]), required=True,
              help="lerobot: a LeRobotDataset v3 folder; robomimic: one HDF5 file.")  # fmt: skip
@click.option("--project", "project_dir", required=True, type=click.Path(path_type=Path),
              help="Project folder.")  # fmt: skip
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="Folder (lerobot) or file (robomimic) to write; must not exist.")  # fmt: skip
@click.option("--scenario", help="Only this scenario's demonstrations.")
@click.argument("ids", nargs=-1)
def demos(
    fmt: str, project_dir: Path, out: Path, scenario: str | None, ids: tuple[str, ...]
) -> None:
    """Export the project's demonstrations (all, one scenario's, or the episode IDS given)."""
    from sim.teleop import export_demonstrations
    from storage import Project

    with Project.open(project_dir) as project:
        path, count = export_demonstrations(project, fmt, out, scenario=scenario, ids=ids)
    click.echo(f"exported {count} demonstration(s) as {fmt} to {path}")


@click.command()
@click.argument("scenario")
@click.option("--project", "project_dir", required=True, type=click.Path(path_type=Path),
              help="Project folder (demonstrations are stored in it).")  # fmt: skip
@click.option("--arm", default=None, help="A shipped arm (wb6, lab7) or a project arm profile.")
def teleop(scenario: str, project_dir: Path, arm: str | None) -> None:
    """Open the window on the teleop workspace, driving SCENARIO's arm by hand."""
    from sim.episode import DEFAULT_ARM, open_scenario, resolve_arm
    from storage import Project

    # refused in words before any window opens
    bound = open_scenario(scenario)
    with Project.open(project_dir) as project:
        name = arm or bound.scenario.arm or DEFAULT_ARM
        resolve_arm(name, project)
    from app.gui import run_gui

    def on_teleop(window: Any) -> None:
        window.set_workspace("teleop")
        window.teleop.choose(scenario, name)

    sys.exit(run_gui(project_dir, then=on_teleop))


COMMANDS = [teleop, export]
