"""``workbench arm …``: a lab's own arms as profiles of the project (add, list, show, remove).

``arm add`` copies the MJCF and every file it references into the project, runs the arm check
on the copy and stores the copy with the check's report; ``sim run --arm NAME`` then runs it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import click

from app.cli._options import CREATED_HELP, project_option


def _names(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip())


@click.group()
def arm() -> None:
    """Your lab's arms: checked, copied into the project, usable with `sim run --arm NAME`."""


@arm.command("add")
@click.argument("name")
@click.argument("mjcf", type=click.Path(path_type=Path))
@click.option("--ee-site", required=True, help="End-effector site name.")
@click.option("--arm-joints", required=True, help="Comma-separated arm joint names, base first.")
@click.option("--gripper", required=True, help="Comma-separated gripper actuator names.")
@click.option("--trials", default=3, show_default=True, type=click.IntRange(min=0),
              help="Pick-and-place trials the check runs.")  # fmt: skip
@click.option("--force", is_flag=True, help="Store the arm even if the check finds errors.")
@click.option("--root", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="The arm's folder: every file the MJCF reads must be inside it (default: "
              "the MJCF's folder; give the folder above for a ../meshes layout).")  # fmt: skip
@project_option(CREATED_HELP)
def add(
    name: str, mjcf: Path, ee_site: str, arm_joints: str, gripper: str, trials: int,
    force: bool, root: Path | None, project_dir: Path,
) -> None:  # fmt: skip
    """Check the arm in MJCF and store it (with its meshes and includes) as NAME.

    Adding a NAME that exists makes its next version (NAME@2, …); episodes keep the version
    they ran with. Every file the MJCF names must lie inside its folder (or --root).
    """
    from sim.episode import ArmCheckFailedError, add_arm, arm_files, report_json
    from storage import Project
    from storage.guard import PathError

    # a file MuJoCo cannot load, or one from outside the arm's folder, is refused before a
    # project is made for it
    try:
        arm_files(mjcf, root)
    except PathError as err:
        folder = root if root is not None else mjcf.expanduser().resolve().parent
        raise PathError(f"{err}; every file the arm reads must be inside its folder "
                        f"({folder}/), and --root names a wider one") from None  # fmt: skip
    made = _first_missing(project_dir)
    # only a project this add makes is taken away again: never a folder that held anything
    fresh = made is not None or (project_dir.is_dir() and not any(project_dir.iterdir()))
    try:
        with Project.open_or_create(project_dir) as project:
            try:
                added = add_arm(
                    project, name, mjcf, ee_site=ee_site, arm_joints=_names(arm_joints),
                    gripper_actuators=_names(gripper), trials=trials, force=force, root=root,
                )  # fmt: skip
            except ArmCheckFailedError as err:
                _print_report(report_json(err.report))
                raise
    except BaseException:
        if fresh:  # the project was made for this add: as it was means not there
            _unmake(project_dir, made)
        raise
    p = added.profile
    _print_report(p.report)
    if not added.new:
        click.echo(f"unchanged: {p.label} already is this arm (same files and names)")
        return
    warn = "" if p.report.get("ok") else " despite the failed check (--force)"
    click.secho(
        f"added {p.label}{warn}: {len(p.files)} file(s) in {project_dir / p.folder}; run it "
        f"with `workbench sim run SCENARIO --arm {p.name}`",
        fg="yellow" if warn else "green",
    )


def _unmake(project_dir: Path, made: Path | None) -> None:
    """Take away a project this command made: the folders it created, or what it put in the
    empty folder it was given."""
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)
        return
    for name in ("project.sqlite", "project.sqlite-wal", "project.sqlite-shm"):
        (project_dir / name).unlink(missing_ok=True)
    for name in ("media", "arms", "cache"):
        shutil.rmtree(project_dir / name, ignore_errors=True)


def _first_missing(path: Path) -> Path | None:
    """The outermost folder of ``path`` that does not exist yet (None if it exists)."""
    path = path.absolute()
    if path.exists():
        return None
    while not path.parent.exists():
        path = path.parent
    return path


@arm.command("list")
@project_option()
def list_arms(project_dir: Path) -> None:
    """Every arm profile version in the project, with the episodes that used it."""
    from rich.console import Console
    from rich.table import Table

    from storage import Project

    with Project.open(project_dir) as project:
        profiles = project.arms.list()
        users = project.arms.users(profiles)
    if not profiles:
        click.echo("no arm profiles (add one with `workbench arm add NAME MJCF …`)")
        return
    table = Table(box=None)
    table.add_column("arm", min_width=max(len(p.label) for p in profiles))
    table.add_column("file", min_width=max(len(Path(p.source).name) for p in profiles))
    for column in ("jaw gap cm", "check", "episodes", "added"):
        table.add_column(column)
    for p in profiles:
        jaw = p.gripper_range.get("jaw_gap_cm")
        table.add_row(
            p.label, Path(p.source).name, "—" if not jaw else f"{jaw[0]:g}–{jaw[1]:g}",
            "ok" if p.report.get("ok") else "[red]failed[/]", str(len(users[p.label])),
            p.created[:16].replace("T", " "),
        )  # fmt: skip
    Console().print(table)


@arm.command()
@click.argument("ref", metavar="NAME[@VERSION]")
@project_option()
@click.option("--json", "as_json", is_flag=True, help="Print the stored profile as JSON.")
def show(ref: str, project_dir: Path, as_json: bool) -> None:
    """A profile version (the latest unless @VERSION): its names, measurements and check."""
    import dataclasses

    from storage import Project

    with Project.open(project_dir) as project:
        p = project.arms.get(ref)
        users = project.arms.users([p])[p.label]
        path = project.arms.mjcf_path(p)
    if as_json:
        data = dataclasses.asdict(p) | {"label": p.label, "path": str(path), "episodes": users}
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(f"{p.label} · added {p.created} from {p.source}")
    click.echo(f"files: {len(p.files)} in {path.parent} (digest {p.digest[:16]}…)")
    click.echo(f"site {p.ee_site} · joints {', '.join(p.arm_joints)}")
    click.echo(f"gripper: {', '.join(p.gripper_actuators)}")
    source = p.gripper_range.get("home_source") or p.report.get("home", {}).get("source")
    home = ", ".join(f"{q:.3f}" for q in p.home)
    click.echo(f"home ({source}): {home}" if source else f"home: {home}")
    for joint in p.arm_joints:
        lim = p.limits.get(joint)
        click.echo(f"  {joint}: " + ("unlimited" if lim is None else f"{lim[0]:.3f}..{lim[1]:.3f}"))
    _print_report(p.report)
    click.echo(f"episodes: {len(users)}" + (f" ({', '.join(u[:8] for u in users[:5])})" if users
                                             else ""))  # fmt: skip


def _print_report(report: dict[str, Any]) -> None:
    """The check, in the words of `sim check` (from the stored JSON)."""
    home = report.get("home") or {}
    if home.get("source"):
        click.echo(f"home posture: {home['source']}")
    jaw = report.get("names", {}).get("jaw_gap_cm")
    if jaw:
        click.echo(f"jaw gap: {jaw[0]:g} cm closed, {jaw[1]:g} cm open")
    r = report.get("reach") or {}
    if r:
        click.echo(
            f"reach: {r.get('reached')}/{r.get('samples')} check-table poses "
            f"({float(r.get('fraction', 0.0)):.0%})"
        )
    click.echo(f"pick-and-place: {report.get('succeeded')}/{report.get('trials')} trials succeeded")
    for line in report.get("messages", []):
        click.echo(line)


@arm.command()
@click.argument("ref", metavar="NAME[@VERSION]")
@project_option()
def remove(ref: str, project_dir: Path) -> None:
    """Remove an arm (every version, or one); refused while an episode uses it."""
    from storage import Project

    with Project.open(project_dir) as project:
        gone = project.arms.remove(ref)
    click.echo(f"removed {', '.join(p.label for p in gone)}")


COMMANDS = [arm]
