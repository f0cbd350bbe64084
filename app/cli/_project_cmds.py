"""Project commands: ``import``, ``export``, ``demo``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from app.cli._options import CREATED_HELP, project_option


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

    with Project.open(project_dir) as project:
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


COMMANDS = [import_, export, demo]
