"""Project commands: ``init``, ``import``, ``export``, ``demo``, and ``project`` (the file
itself: ``backup``, ``backups``, ``restore``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from app.cli._options import CREATED_HELP, project_option


@click.command()
@project_option("Folder for the new project (new or empty).")
def init(project_dir: Path) -> None:
    """Make a new, empty project. Opening never makes one where one was expected: a damaged or
    missing project.sqlite in a project folder is reported, not replaced."""
    from storage import Project

    Project.create(project_dir).close()
    click.echo(f"created an empty project in {project_dir}")


@click.command("import")
@click.argument("folder", type=click.Path(path_type=Path))
@project_option(CREATED_HELP)
def import_(folder: Path, project_dir: Path) -> None:
    """Import a case folder, or a folder of case folders (all or nothing)."""
    from storage import Project, import_cases

    with Project.open_or_create(project_dir) as project:
        report = import_cases(project, folder, progress=lambda m: click.echo(m, err=True))
    click.echo(report.summary())


@click.command()
@project_option()
@click.option(
    "--format", "fmt", type=click.Choice(["csv", "json"]), default="csv", show_default=True
)
@click.option("--out", type=click.Path(path_type=Path), help="File to write (default: stdout).")
def export(project_dir: Path, fmt: str, out: Path | None) -> None:
    """Export gate decisions, evidence and scores (columns: docs/export-format.md)."""
    from storage import Project, to_csv, to_json

    with Project.open(project_dir, readonly=True) as project:
        text = to_csv(project) if fmt == "csv" else to_json(project)
    if out:
        out.write_text(text, "utf-8")
        click.echo(f"wrote {out}", err=True)
    else:
        sys.stdout.write(text)


@click.command()
@project_option(CREATED_HELP)
@click.option("--seed", default=0, show_default=True, help="Seed for the generated content.")
@click.option("--no-sim", is_flag=True, help="Skip the MuJoCo rollouts and episodes (faster).")
def demo(project_dir: Path, seed: int, no_sim: bool) -> None:
    """Generate demo cases and episodes with our own renderers and import them into a project."""
    from sim import build_demo_project

    report = build_demo_project(
        project_dir, seed=seed, progress=lambda m: click.echo(m, err=True), simulate=not no_sim
    )
    click.echo(report.summary())


@click.group("project")
def project_group() -> None:
    """The project file itself: back it up, list the backups, restore one (README: Your data)."""


@project_group.command("backup")
@project_option()
@click.option(
    "--to",
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder to put the backup in (default: the project's backups/ folder).",
)
def backup(project_dir: Path, to: Path | None) -> None:
    """Back up the project while it may be in use: the database through SQLite's online backup,
    media and arm files by hard link (else copied). The backup is itself a project."""
    from storage import Project

    with Project.open(project_dir, readonly=True) as project:
        made = project.backup(to)
    click.echo(f"backed up to {made.path} ({made.db_bytes / 1e6:.1f} MB database, "
               f"{made.files} media and arm file(s))")  # fmt: skip


@project_group.command("backups")
@project_option()
@click.option("--json", "as_json", is_flag=True)
def backups(project_dir: Path, as_json: bool) -> None:
    """The project's backups, newest first (name, when, why, schema, size)."""
    from storage import list_backups

    found = list_backups(project_dir)  # a damaged project's too: that is when they are wanted
    if as_json:
        click.echo(json.dumps([{"name": b.name, "path": str(b.path), "created": b.created,
                                "reason": b.reason, "automatic": b.automatic,
                                "schema_version": b.schema_version, "db_bytes": b.db_bytes,
                                "files": b.files} for b in found]))  # fmt: skip
        return
    if not found:
        click.echo(f"no backups in {project_dir / 'backups'} (make one: workbench project backup)")
    for b in found:
        click.echo(f"{b.name}  {b.created[:19].replace('T', ' ')} UTC  schema v{b.schema_version}  "
                   f"{b.db_bytes / 1e6:.1f} MB  {b.reason}")  # fmt: skip


@project_group.command("restore")
@click.argument("backup_name", metavar="BACKUP")
@project_option()
def restore(backup_name: str, project_dir: Path) -> None:
    """Put a backup (a name from `project backups`, or a backup folder) back as the project's
    database. The file it replaces is kept beside it; refused while the project is open."""
    from storage import restore_backup

    report = restore_backup(project_dir, backup_name)
    click.echo(f"restored {report.backup.path} (schema v{report.backup.schema_version}, "
               f"{report.backup.created[:19].replace('T', ' ')} UTC)")  # fmt: skip
    if report.kept_aside is not None:
        click.echo(f"the file it replaced is kept as {report.kept_aside}")
    if report.files_restored:
        click.echo(f"{report.files_restored} missing media or arm file(s) put back")


COMMANDS = [init, import_, export, demo, project_group]
