"""``workbench batch …`` and ``workbench metrics``: episode batches, their results and metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from app.cli._options import CREATED_HELP, project_option

if TYPE_CHECKING:
    from sim.batch import ResultsTable
    from storage import Project

by_option = click.option(
    "--by", default="assistant", show_default=True,
    help="Group rows by these manifest axes (comma-separated: scenario, persona, assistant, "
    "timing).",
)  # fmt: skip


def _open(project_dir: Path) -> Project:
    from storage import Project

    return Project.open(project_dir)


@click.group()
def batch() -> None:
    """Episode batches: scenarios × personas × assistants × timings × runs, run as jobs."""


@batch.command("run")
@click.argument("manifest", type=click.Path(path_type=Path))
@project_option(CREATED_HELP)
@click.option("--queue-only", is_flag=True, help="Only queue the jobs (for `workbench worker`).")
@click.option("--concurrency", default=2, show_default=True, type=click.IntRange(min=1))
@click.option("--max-attempts", default=3, show_default=True, type=click.IntRange(min=1))
@by_option
@click.option("--json", "as_json", is_flag=True, help="Print the results table as JSON.")
def run(
    manifest: Path, project_dir: Path, queue_only: bool, concurrency: int, max_attempts: int,
    by: str, as_json: bool,
) -> None:  # fmt: skip
    """Queue MANIFEST's episodes as jobs and (unless --queue-only) run them here."""
    import judge  # noqa: F401  (registers the model-backed participants)
    from sim.batch import EPISODE_KIND, load_manifest, queue_batch
    from storage import Project, run_worker, stderr_log

    m = load_manifest(manifest)
    with Project.open_or_create(project_dir) as project:
        batch_id, job_ids = queue_batch(project, m, max_attempts=max_attempts)
    if not as_json:
        click.echo(f"batch {batch_id[:8]} ({m.name}): {len(job_ids)} episodes queued")
    if queue_only:
        if not as_json:
            click.echo(f"run them with: workbench worker --project {project_dir}")
        else:
            click.echo(json.dumps({"batch": batch_id, "jobs": job_ids}))
        return
    run_worker(
        project_dir, concurrency=concurrency, drain=True, kinds=[EPISODE_KIND],
        log=stderr_log(), kind_modules=("judge", "sim.batch"),
    )  # fmt: skip
    with _open(project_dir) as project:
        _show(project, batch_id, by, as_json)


@batch.command("status")
@click.argument("batch_id", metavar="BATCH")
@project_option()
@by_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status(batch_id: str, project_dir: Path, by: str, as_json: bool) -> None:
    """Progress of BATCH (an id or a unique prefix) and its results so far."""
    with _open(project_dir) as project:
        _show(project, batch_id, by, as_json)


@batch.command("list")
@project_option()
def list_batches(project_dir: Path) -> None:
    """The project's batches, newest first."""
    with _open(project_dir) as project:
        batches = project.batches.list()
        if not batches:
            click.echo("no batches yet; queue one with `workbench batch run MANIFEST`")
        for b in batches:
            counts = project.batches.status(b.id)
            click.echo(
                f"{b.id[:8]}  {b.name:<24} {counts['stored']}/{counts['planned']} stored  "
                f"{b.created}"
            )


@batch.command("attribution")
@click.argument("batch_id", metavar="BATCH")
@project_option()
@click.option("--party", type=click.Choice(["assistant", "user", "environment", "none"]))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def attribution(batch_id: str, project_dir: Path, party: str | None, as_json: bool) -> None:
    """Who each stored episode's failure is attributed to (proposed or edited), filterable."""
    from typing import cast

    from storage import AttributionParty

    with _open(project_dir) as project:
        rows = project.batches.attributions(batch_id, cast(AttributionParty | None, party))
        cells = {c.episode_id: c for c in project.batches.cells(batch_id)}
    if as_json:
        click.echo(json.dumps([{**r.__dict__, **_cell_json(cells[r.episode_id])} for r in rows]))
        return
    for r in rows:
        c = cells[r.episode_id]
        click.echo(
            f"{r.episode_id[:8]}  {c.scenario}/{c.persona}/{c.assistant} run {c.run}  "
            f"{r.party:<11} ({r.source}) {r.reason}"
        )


def _cell_json(c: Any) -> dict[str, Any]:
    keys = ("cell", "run", "scenario", "persona", "assistant", "timing", "seed")
    return {k: getattr(c, k) for k in keys}


#: whose undo stack a person's edit from the command line goes on: the GUI's rater by default,
#: so the same person can take it back with Edit → Undo in the window
rater_option = click.option(
    "--rater", default=None,
    help="Whose undo stack the change goes on (default: WB_RATER, else your OS user name, as in "
    "the workbench window).",
)  # fmt: skip


def rater_or_default(rater: str | None) -> str:
    from storage import load_settings

    return rater if rater is not None else load_settings().rater


@batch.command("attribute")
@click.argument("episode")
@click.argument("party", type=click.Choice(["assistant", "user", "environment", "none"]))
@click.argument("reason")
@project_option()
@rater_option
def attribute(episode: str, party: str, reason: str, project_dir: Path, rater: str | None) -> None:
    """Set EPISODE's failure attribution by hand (later proposals leave it alone)."""
    from typing import cast

    from storage import AttributionParty

    scope = rater_or_default(rater)
    with _open(project_dir) as project:
        project.batches.edit_attribution(
            episode, cast(AttributionParty, party), reason, scope=scope
        )
    click.echo(f"episode {episode}: attributed to {party} (undo it in the workbench as {scope})")


def _show(project: Project, batch_id: str, by: str, as_json: bool) -> None:
    import judge  # noqa: F401  (adds the interaction-quality column's items)
    from sim.batch import results_table

    b = project.batches.get(batch_id)
    counts = project.batches.status(b.id)
    table = results_table(project, b.id, by=[a.strip() for a in by.split(",") if a.strip()])
    if as_json:
        click.echo(json.dumps({"status": counts, **table.to_json()}, indent=2))
        return
    jobs = ", ".join(f"{k} {v}" for k, v in counts.items() if v and k not in ("planned", "stored"))
    click.echo(
        f"batch {b.id[:8]} ({b.name}): {counts['stored']}/{counts['planned']} stored; {jobs}"
    )
    print_table(table)


def print_table(table: ResultsTable) -> None:
    from rich.console import Console
    from rich.table import Table

    from sim.batch import METRICS, format_summary

    # model-backed batches: how their replies came out and what they cost, beside the metrics
    models = any(row.calls.replies for row in table.rows)
    calls = ("silenced", "repaired", "tokens in/out", "US$") if models else ()
    out = Table(*table.by, "episodes", *(METRICS[m] for m in table.metrics), *calls, box=None)
    for row in table.rows:
        cells = [format_summary(row.summaries[m]) for m in table.metrics]
        c = row.calls
        spent = (
            [f"{c.silenced}/{c.replies}", f"{c.repaired}/{c.replies}",
             f"{c.tokens_in}/{c.tokens_out}", f"{c.cost_usd:.4f}"] if c.replies
            else ["–"] * len(calls)
        )  # fmt: skip
        out.add_row(*row.key, f"{row.stored}/{row.planned}", *cells, *spent)
    console = Console()
    if not console.is_terminal:  # a file or a pipe: full width, never wrapped numbers
        console = Console(width=240)
    console.print(out)
    click.echo(f"mean ± population SD over {table.runs} run(s), in percent; – = nothing to score")
    if models:
        click.echo(
            "silenced: model replies still invalid after the repair budget (the participant "
            "said nothing); repaired: valid only after a re-ask; tokens and US$: the stored "
            "episodes' totals"
        )


@click.command()
@click.argument("target")
@project_option()
@by_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def metrics(target: str, project_dir: Path, by: str, as_json: bool) -> None:
    """Metrics of TARGET: an episode (its per-episode values) or a batch (its results table)."""
    from storage import BatchNotFoundError, EpisodeNotFoundError

    with _open(project_dir) as project:
        try:
            _show(project, target, by, as_json)
            return
        except BatchNotFoundError as batch_err:
            try:
                ep = project.episodes.get(target)
            except EpisodeNotFoundError as ep_err:
                raise EpisodeNotFoundError(
                    f"{target!r} is neither a batch nor an episode of this project ({batch_err}; "
                    f"{ep_err})"
                ) from None
        values = _episode_metrics(project, ep.id)
    if as_json:
        said = {"episode": ep.id, "status": ep.status.value, "end_reason": ep.end_reason}
        click.echo(json.dumps({**said, "metrics": values}, indent=2))
        return
    click.echo(f"episode {ep.id[:8]} ({ep.scenario}, {ep.status.value}, {ep.ticks} ticks)")
    if ep.end_reason:
        click.echo(f"  {ep.status.value}: {ep.end_reason}")
    for name, value in values.items():
        click.echo(f"  {name:<22} {'–' if value is None else f'{value:g}'}")


def _episode_metrics(project: Project, episode_id: str) -> dict[str, float | None]:
    """The stored values, plus interaction quality when judges graded the episode."""
    from judge import quality_scores

    values: dict[str, float | None] = dict(project.episodes.metrics(episode_id))
    calls = project.episodes.call_totals(episode_id)
    if calls.replies or calls.tokens_in:  # beside success and validity: how honest they are
        values |= {
            "replies": calls.replies, "replies_valid": calls.valid,
            "replies_repaired": calls.repaired, "replies_silenced": calls.silenced,
            "replies_failed": calls.failed, "tokens_in": calls.tokens_in,
            "tokens_out": calls.tokens_out, "cost_usd": calls.cost_usd,
        }  # fmt: skip
    q = quality_scores(project, episode_id)
    if q.rounds:
        values["quality"] = q.overall.value
        values |= {f"quality.{c}": v.value for c, v in q.categories.items()}
    return values


COMMANDS = [batch, metrics]
