"""Job commands: ``workbench worker`` runs jobs; ``workbench jobs status|cancel|retry``."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path
from types import FrameType

import click

from app.cli._options import project_option

# The packages whose job kinds this workbench's worker runs: the queue (storage) names none of
# them, each registers its own kinds when imported, and the worker process is composed here.
WORKER_KIND_MODULES = ("judge", "sim.batch")


@click.command()
@project_option()
@click.option("--concurrency", default=1, show_default=True, type=click.IntRange(min=1))
@click.option("--drain", is_flag=True, help="Exit once no job is left to run.")
@click.option(
    "--lease", "lease_s", default=30.0, show_default=True, type=click.FloatRange(min=0.5),
    help="Lease in seconds; renewed every third of it. A dead worker's jobs rerun after it.",
)  # fmt: skip
@click.option(
    "--grace", "grace_s", default=10.0, show_default=True, type=click.FloatRange(min=0),
    help="On SIGTERM/Ctrl-C, seconds running jobs may finish before going back to the queue.",
)  # fmt: skip
@click.option("--kind", "kinds", multiple=True, help="Run only this job kind (repeatable).")
@click.option("--verbose", "-v", is_flag=True, help="Also log progress (debug lines).")
@click.option(
    "--ray", "ray", metavar="ADDRESS",
    help="Run episode and judge jobs as tasks on the Ray cluster at ADDRESS (e.g. "
    "ray://head:10001 or head:6379), or 'local' to start one here; --concurrency is then "
    "the most tasks in flight. Only this process opens the project. Needs the [cluster] extra.",
)  # fmt: skip
@click.option(
    "--ray-cpus",
    type=click.IntRange(min=1),
    help="With --ray local: the CPUs the local cluster offers (default: all).",
)
def worker(
    project_dir: Path,
    concurrency: int,
    drain: bool,
    lease_s: float,
    grace_s: float,
    kinds: tuple[str, ...],
    verbose: bool,
    ray: str | None,
    ray_cpus: int | None,
) -> None:
    """Run background jobs of a project (JSON log lines on stderr), here or on a Ray cluster."""
    from storage import UnknownJobKindError, run_worker, stderr_log

    stop = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stop.set()
        # A second signal is the impatient kind: the default action ends the process now
        # (leases then expire and other workers rerun the jobs; nothing finished is lost).
        signal.signal(signum, signal.SIG_DFL)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        run_worker(
            project_dir,
            concurrency=concurrency,
            drain=drain,
            lease_s=lease_s,
            grace_s=grace_s,
            stop=stop,
            kinds=list(kinds) or None,
            log=stderr_log(debug=verbose),
            kind_modules=WORKER_KIND_MODULES,
            ray=ray,
            ray_cpus=ray_cpus,
        )
    except UnknownJobKindError as e:
        raise click.BadParameter(str(e), param_hint="--kind") from None
    finally:  # when run in-process (tests, the GUI), leave the host's handlers as they were
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@click.group()
def jobs() -> None:
    """Inspect, cancel and retry background jobs."""


@jobs.command()
@project_option()
@click.option("--batch", help="Only this batch.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status(project_dir: Path, batch: str | None, as_json: bool) -> None:
    """Jobs per status, and the failed ones with their reasons."""
    from storage import JobStatus, Project

    with Project.open(project_dir) as project:
        counts = project.jobs.counts(batch=batch)
        every = project.jobs.query(batch=batch)
    failed = [j for j in every if j.status is JobStatus.FAILED]
    rows: list[dict[str, object]] = [
        {"id": j.id, "kind": j.kind, "batch": j.batch, "attempts": j.attempts, "error": j.error,
         "ran_on": j.ran_on}
        for j in failed
    ]  # fmt: skip
    where: dict[str, int] = {}  # the worker hosts and cluster nodes that ran finished jobs
    for j in every:
        if j.status is JobStatus.DONE and j.ran_on:
            where[j.ran_on] = where.get(j.ran_on, 0) + 1
    if as_json:
        click.echo(json.dumps({"counts": counts, "ran_on": where, "failed": rows}, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print("  ".join(f"{name}: {n}" for name, n in counts.items()))
    if where:
        console.print("done on " + ", ".join(f"{host}: {n}" for host, n in sorted(where.items())))
    if rows:
        table = Table("job", "kind", "batch", "attempts", "error", title="Failed jobs")
        for j in failed:
            table.add_row(str(j.id), j.kind, j.batch or "", str(j.attempts), j.error or "")
        console.print(table)


def _selection(batch: str | None, job_ids: tuple[int, ...]) -> None:
    if (batch is None) == (not job_ids):
        raise click.UsageError("give either --batch or job ids, not both and not neither")


@jobs.command()
@project_option()
@click.option("--batch", help="Every job of this batch.")
@click.argument("job_ids", nargs=-1, type=int)
def cancel(project_dir: Path, batch: str | None, job_ids: tuple[int, ...]) -> None:
    """Cancel queued or running jobs (a running one stops at its next heartbeat)."""
    from storage import Project

    _selection(batch, job_ids)
    with Project.open(project_dir) as project:
        n = project.jobs.cancel(job_ids, batch=batch)
    click.echo(f"cancelled {n} job(s)")


@jobs.command()
@project_option()
@click.option("--batch", help="Every failed or cancelled job of this batch.")
@click.argument("job_ids", nargs=-1, type=int)
def retry(project_dir: Path, batch: str | None, job_ids: tuple[int, ...]) -> None:
    """Queue failed or cancelled jobs again, with fresh attempts."""
    from storage import Project

    _selection(batch, job_ids)
    with Project.open(project_dir) as project:
        n = project.jobs.retry(job_ids, batch=batch)
    click.echo(f"queued {n} job(s) again")


COMMANDS: list[click.Command] = [worker, jobs]
