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

from app.cli._options import project_option
from app.cli._project_cmds import export as export_annotations


def _export_annotations(ctx: click.Context, **kwargs: Any) -> None:
    if ctx.invoked_subcommand is not None:
        return  # `export demos …`: the group's own options are not the subcommand's
    if kwargs.get("project_dir") is None:
        raise click.UsageError("Missing option '--project'.", ctx)
    ctx.invoke(export_annotations, **kwargs)


def _optional(param: click.Parameter) -> click.Parameter:
    """The annotation export's option, not required at the group: `export demos` has its own."""
    if isinstance(param, click.Option) and param.required:
        param = copy.copy(param)
        param.required = False
    return param


export = click.Group(
    "export",
    params=[_optional(p) for p in export_annotations.params],
    callback=click.pass_context(_export_annotations),
    invoke_without_command=True,
    help=(
        "Export gate decisions, evidence and scores (columns: docs/export-format.md); "
        "`export demos` exports teleoperated demonstrations."
    ),
)


def _size(_ctx: click.Context, _param: click.Parameter, value: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in value.lower().split("x"))
    except ValueError:
        raise click.BadParameter(f"{value!r}: expected WIDTHxHEIGHT, e.g. 320x240") from None
    return w, h


@export.command("demos")
@click.option("--format", "fmt", type=click.Choice(["lerobot", "robomimic"]), required=True,
              help="lerobot: a LeRobotDataset v3 folder (parquet, and an MP4 per camera); "
                   "robomimic: one HDF5 file.")  # fmt: skip
@project_option()
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="Folder (lerobot) or file (robomimic) to write; must not exist.")  # fmt: skip
@click.option("--scenario", help="Only this scenario's demonstrations.")
@click.option("--camera", "cameras", multiple=True,
              help="lerobot: a camera to render from the recorded states into an MP4 "
                   "(repeat it; default: front and wrist).")  # fmt: skip
@click.option("--size", default="320x240", show_default=True, callback=_size,
              help="lerobot: the videos' WIDTHxHEIGHT (even numbers).")  # fmt: skip
@click.argument("ids", nargs=-1)
def demos(
    fmt: str, project_dir: Path, out: Path, scenario: str | None, cameras: tuple[str, ...],
    size: tuple[int, int], ids: tuple[str, ...],
) -> None:  # fmt: skip
    """Export the project's demonstrations (all, one scenario's, or the episode IDS given)."""
    from sim.teleop import DEMO_CAMERAS, export_demonstrations
    from storage import Project

    with Project.open(project_dir) as project:
        done = export_demonstrations(project, fmt, out, scenario=scenario, ids=ids,
                                     cameras=cameras or DEMO_CAMERAS, size=size)  # fmt: skip
    click.echo(done.describe())
    for video in done.videos:
        click.echo(f"  {video}")


@click.group("demos")
def demos_group() -> None:
    """Teleoperated demonstrations: list them, import LeRobot / robomimic files as
    demonstrations, send their videos to the rubric (export: `workbench export demos`)."""


@demos_group.command("list")
@project_option()
def demos_list(project_dir: Path) -> None:
    """The project's demonstrations, newest first."""
    from sim.teleop import list_demonstrations
    from storage import Project

    with Project.open(project_dir) as project:
        for ep in list_demonstrations(project):
            c = ep.config
            outcome = "success" if c.get("success") else "not done"
            cams = ",".join(c.get("cameras") or []) or "no camera"
            click.echo(f"{ep.id[:8]}  {ep.scenario:<14} {c.get('arm', ''):<10} {ep.ticks + 1:>5} "
                       f"steps  {outcome:<8}  {cams}  {ep.started[:16]}")  # fmt: skip


@demos_group.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["lerobot", "robomimic"]), required=True,
              help="lerobot: a LeRobotDataset v3 folder; robomimic: one HDF5 file.")  # fmt: skip
@project_option()
def demos_import(path: Path, fmt: str, project_dir: Path) -> None:
    """Store every demonstration in PATH as an episode (its scene graph perceived again from
    each recorded MuJoCo state), all or nothing."""
    from sim.teleop import import_demonstrations
    from storage import Project

    with Project.open(project_dir) as project:
        ids = import_demonstrations(project, fmt, path)
    click.echo(f"imported {len(ids)} demonstration(s): {', '.join(i[:8] for i in ids)}")


@demos_group.command("rate")
@click.argument("ids", nargs=-1)
@click.option("--camera", default="front", show_default=True, help="The camera video to rate.")
@project_option()
def demos_rate(ids: tuple[str, ...], camera: str, project_dir: Path) -> None:
    """Add the demonstrations' videos (all, or IDS) to the rubric as human videos of the case
    demo-<scenario>, to be scored like any video in the annotate workspace."""
    from sim.teleop import rate_demonstrations
    from storage import Project

    with Project.open(project_dir) as project:
        report = rate_demonstrations(project, ids, camera=camera)
    click.echo(report.summary())


@click.command()
@click.argument("scenario")
@project_option("Project folder (demonstrations are stored in it).")
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


COMMANDS = [teleop, export, demos_group]
