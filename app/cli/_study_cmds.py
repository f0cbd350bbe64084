"""Study commands: ``workbench study …`` (panels, blind assignments, calibration, bundles).

The lead runs ``create``, ``add-rater``, ``build-panel``, ``calibration set``, ``assign``,
``export-assignment`` and ``import-work`` on their project; a rater runs ``open-assignment`` and
``export-work`` on their own machine. A bad bundle or a study mistake exits with status 2 and a
one-line message (a merge conflict lists every conflicting item).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from app.cli._options import project_option


class _StudyGroup(click.Group):
    """Turns study and bundle errors into a message and exit status 2, like the main CLI."""

    def invoke(self, ctx: click.Context) -> Any:
        from storage import BundleError, StudyError

        try:
            return super().invoke(ctx)
        except (StudyError, BundleError) as e:
            click.secho(f"error: {e}", fg="red", err=True)
            sys.exit(2)


@click.group(cls=_StudyGroup)
def study() -> None:
    """Annotation studies: panels, blind assignments, calibration, offline bundles."""


@study.command()
@click.argument("study_id")
@project_option()
@click.option("--name", default="", help="Display name (shown to the lead only).")
@click.option("--raters-per-video", default=3, show_default=True, type=click.IntRange(min=1))
@click.option("--seed", default=0, show_default=True, help="Seed recorded with the study.")
@click.option(
    "--human-success",
    type=click.Choice(["rated", "max"]),
    default="rated",
    show_default=True,
    help="Verified Human (+) videos: rated like the others, or given the rubric maximum.",
)
def create(
    study_id: str,
    project_dir: Path,
    name: str,
    raters_per_video: int,
    seed: int,
    human_success: str,
) -> None:
    """Create a study (its id is shown to raters: keep it neutral)."""
    from storage import Project

    with Project.open(project_dir) as p:
        s = p.studies.create(
            study_id,
            name,
            raters_per_video=raters_per_video,
            seed=seed,
            human_success_rule="max" if human_success == "max" else "rated",
        )
    click.echo(f"created study {s.id} ({s.raters_per_video} raters per video)")


@study.command("add-rater")
@click.argument("rater_id")
@project_option()
@click.option("--name", default="", help="The rater's name.")
def add_rater(rater_id: str, project_dir: Path, name: str) -> None:
    """Add a rater profile (or rename one)."""
    from storage import Project

    with Project.open(project_dir) as p:
        r = p.studies.add_rater(rater_id, name)
    click.echo(f"rater {r.id} ({r.name})")


@study.command("build-panel")
@click.argument("study_id")
@project_option()
@click.option("--per-domain", required=True, type=click.IntRange(min=1), help="Cases per domain.")
@click.option("--seed", type=int, help="Seed of the case draw (default: the study's).")
@click.option("--domain", "domains", multiple=True, help="Only these domains (repeatable).")
def build_panel(
    study_id: str, project_dir: Path, per_domain: int, seed: int | None, domains: tuple[str, ...]
) -> None:
    """Add cases to the panel, stratified by domain, each with all its videos."""
    from storage import Project

    with Project.open(project_dir) as p:
        sel = p.studies.build_panel(
            study_id, per_domain=per_domain, seed=seed, domains=list(domains) or None
        )
    click.echo(sel.summary())


@study.command("add-cases")
@click.argument("study_id")
@click.argument("case_ids", nargs=-1, required=True)
@project_option()
def add_cases(study_id: str, case_ids: tuple[str, ...], project_dir: Path) -> None:
    """Add named cases to the panel, each with all its videos."""
    from storage import Project

    with Project.open(project_dir) as p:
        n = p.studies.add_cases(study_id, case_ids)
    click.echo(f"{n} video(s) added to the panel of {study_id}")


@study.command()
@click.argument("study_id")
@project_option()
@click.option("--rater", "raters", multiple=True, required=True, help="Rater id (repeatable).")
@click.option("--k", type=click.IntRange(min=1), help="Raters per video (default: the study's).")
@click.option("--seed", type=int, help="Seed of the assignment and orders (default: the study's).")
def assign(
    study_id: str, project_dir: Path, raters: tuple[str, ...], k: int | None, seed: int | None
) -> None:
    """Give each panel video to up to k raters, each rater in their own random order."""
    from storage import Project

    with Project.open(project_dir) as p:
        load = p.studies.assign(study_id, raters, seed=seed, k=k)
    click.echo(", ".join(f"{r}: {n} video(s)" for r, n in load.items()))


@study.group()
def calibration() -> None:
    """The calibration set: reference answers, reports, results."""


@calibration.command("set")
@click.argument("study_id")
@click.argument("references", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@project_option()
def calibration_set(study_id: str, references: Path, project_dir: Path) -> None:
    """Set the calibration videos from a JSON file {video id: reference answers}."""
    from storage import Project, StudyError

    try:
        refs = json.loads(references.read_text("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise StudyError(f"{references}: not valid JSON ({e})") from None
    if not isinstance(refs, dict):
        raise StudyError(f"{references}: expected an object {{video id: reference}}")
    with Project.open(project_dir) as p:
        p.studies.set_calibration(study_id, refs)
    click.echo(f"calibration set of {study_id}: {len(refs)} video(s)")


@calibration.command("report")
@click.argument("study_id")
@click.argument("rater_id")
@project_option()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def calibration_report(study_id: str, rater_id: str, project_dir: Path, as_json: bool) -> None:
    """Compare a rater's calibration answers with the references."""
    from storage import Project

    with Project.open(project_dir) as p:
        report = p.studies.calibration_report(study_id, rater_id)
    click.echo(json.dumps(report.to_json(), indent=2) if as_json else report.summary())


@calibration.command("complete")
@click.argument("study_id")
@click.argument("rater_id")
@project_option()
@click.option("--override", "reason", help="Record a pass despite differences, with this reason.")
def calibration_complete(
    study_id: str, rater_id: str, project_dir: Path, reason: str | None
) -> None:
    """Record the rater's calibration result (a pass unlocks production work)."""
    from storage import Project

    with Project.open(project_dir) as p:
        result = p.studies.complete_calibration(study_id, rater_id, override_reason=reason)
    click.echo(result.report.summary())
    state = "production work unlocked" if result.passed else "production work stays locked"
    click.echo(f"{rater_id}: {state}")


@study.command("export-assignment")
@click.argument("study_id")
@click.argument("rater_id")
@project_option()
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Bundle to write.")
def export_assignment_cmd(study_id: str, rater_id: str, project_dir: Path, out: Path) -> None:
    """Write a rater's blind assignment to one file (.wbz)."""
    from storage import Project, export_assignment

    with Project.open(project_dir) as p:
        click.echo(export_assignment(p, study_id, rater_id, out).summary())


@study.command("open-assignment")
@click.argument("bundle", type=click.Path(path_type=Path))
@project_option()
def open_assignment_cmd(bundle: Path, project_dir: Path) -> None:
    """Open an assignment bundle as a rater project (new folder, or the same rater's)."""
    from storage import open_assignment

    click.echo(open_assignment(bundle, project_dir).summary())


@study.command("export-work")
@project_option()
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Bundle to write.")
def export_work_cmd(project_dir: Path, out: Path) -> None:
    """Write the rater's work in a rater project to one file (.wbz)."""
    from storage import Project, export_work

    with Project.open(project_dir) as p:
        click.echo(export_work(p, out).summary())


@study.command("import-work")
@click.argument("bundle", type=click.Path(path_type=Path))
@project_option()
def import_work_cmd(bundle: Path, project_dir: Path) -> None:
    """Merge a rater's work bundle into the lead project (all or nothing)."""
    from storage import Project, import_work

    with Project.open(project_dir) as p:
        click.echo(import_work(p, bundle).summary())


@study.command()
@click.argument("study_id")
@project_option()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(study_id: str, project_dir: Path, as_json: bool) -> None:
    """Panel size, and per rater: assignments by state and calibration."""
    from storage import Project

    with Project.open(project_dir) as p:
        st = p.studies
        s = st.study(study_id)
        data: dict[str, Any] = {
            "study": s.id,
            "panel_videos": len(st.panel(study_id)),
            "calibration_videos": len(st.panel(study_id, calibration=True)),
            "raters": st.status(study_id),
        }
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(
        f"study {s.id}: {data['panel_videos']} panel video(s), "
        f"{data['calibration_videos']} calibration video(s)"
    )
    for rater, c in data["raters"].items():
        click.echo(
            f"  {rater}: {c['assigned']} assigned, {c['exported']} exported, "
            f"{c['returned']} returned; calibration {c['calibration']}"
        )


COMMANDS = [study]
