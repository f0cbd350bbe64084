"""Judge commands: ``workbench judge run|status|rescore|profile``."""

from __future__ import annotations

import json
from pathlib import Path

import click

project_option = click.option(
    "--project", "project_dir", required=True, type=click.Path(path_type=Path),
    help="Project folder.",
)  # fmt: skip


@click.group()
def judge() -> None:
    """Queue VLM judge jobs, follow them, and re-score recorded answers."""


@judge.command("run")
@project_option
@click.option("--videos", "videos", multiple=True, help="Video id (repeatable). Default: all.")
@click.option("--case", "case_id", help="All videos of this case.")
@click.option("--profile", required=True, help="Model profile name (see `judge profile list`).")
@click.option(
    "--mode", type=click.Choice(["gated", "independent", "simple_vqa"]), default="gated",
    show_default=True,
)  # fmt: skip
@click.option("--batch", help="Batch name (default: judge-<mode>-<time>).")
def run(
    project_dir: Path,
    videos: tuple[str, ...],
    case_id: str | None,
    profile: str,
    mode: str,
    batch: str | None,
) -> None:
    """Queue one judge job per video. Start `workbench worker` to run them."""
    from judge import queue_judge
    from storage import Project

    with Project.open(project_dir) as project:
        chosen = list(videos) or [v.id for v in project.videos(case_id)]
        name, ids = queue_judge(project, chosen, profile=profile, mode=mode, batch=batch)
    click.echo(f"queued {len(ids)} job(s) in batch {name}")
    click.echo(f"run them with: workbench worker --project {project_dir} --drain", err=True)


@judge.command("status")
@project_option
@click.option("--batch", help="Only this batch.")
@click.option("--json", "as_json", is_flag=True)
def status(project_dir: Path, batch: str | None, as_json: bool) -> None:
    """Job counts, cost so far, and failures with their reasons."""
    from judge import JUDGE_KIND
    from storage import JobStatus, Project

    with Project.open(project_dir) as project:
        jobs = [j for j in project.jobs.query(batch=batch) if j.kind == JUDGE_KIND]
    counts = {s.value: sum(1 for j in jobs if j.status is s) for s in JobStatus}
    failed = [
        {"job": j.id, "video_id": j.payload.get("video_id"), "error": j.error}
        for j in jobs
        if j.status is JobStatus.FAILED
    ]
    cost = round(sum(j.cost_usd for j in jobs), 6)
    if as_json:
        click.echo(json.dumps({"counts": counts, "cost_usd": cost, "failed": failed}))
        return
    click.echo("  ".join(f"{k} {v}" for k, v in counts.items()) + f"  cost ${cost:.4f}")
    for f in failed:
        click.echo(f"  job {f['job']} ({f['video_id']}): {f['error']}")


COMMANDS: list[click.Command] = [judge]
