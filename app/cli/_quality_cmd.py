"""``workbench judge quality EPISODE|BATCH --profile A --profile B``: queue the IQ judge.

Queues one ``judge.quality`` job per episode (IVG spec §4.3: two judges grade every spoken
assistant response); ``workbench worker`` runs them. Rounds a judge already graded under the
current prompt version are not asked again, so re-queueing costs only the missing rounds, and
the scores are re-aggregated from stored verdicts (``judge.quality_scores``) without a call.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from app.cli._options import project_option

if TYPE_CHECKING:
    from storage import Project


@click.command("quality")
@click.argument("target")
@project_option()
@click.option(
    "--profile", "profiles", multiple=True, required=True,
    help="Judge model profile; give it twice, once per judge (see `judge profile list`).",
)  # fmt: skip
@click.option("--batch", "job_batch", help="Name of the job batch (default: quality-<time>).")
@click.option(
    "--spend-cap", "spend_cap_usd", type=click.FloatRange(min=0),
    help="US$ per judge per episode, over every attempt (default: the profile's own cap).",
)  # fmt: skip
@click.option(
    # Literals, not storage's DEFAULT_* (importing storage would slow every `--help`).
    "--max-attempts", type=click.IntRange(min=1), default=3, show_default=True,
    help="Attempts per episode, counting one whose worker died.",
)  # fmt: skip
@click.option(
    "--retry-backoff", "retry_backoff_s", type=click.FloatRange(min=0), default=20.0,
    show_default=True, help="Seconds before a retryable failure (timeout, 5xx) runs again.",
)  # fmt: skip
@click.option(
    "--rate-limit-backoff", "rate_limit_backoff_s", type=click.FloatRange(min=0), default=60.0,
    show_default=True, help="Seconds to wait after the endpoint answered 429 (rate limited).",
)  # fmt: skip
def quality(
    target: str,
    project_dir: Path,
    profiles: tuple[str, ...],
    job_batch: str | None,
    spend_cap_usd: float | None,
    max_attempts: int,
    retry_backoff_s: float,
    rate_limit_backoff_s: float,
) -> None:
    """Queue interaction-quality judging of TARGET: an episode, or every stored episode of a
    batch. Start `workbench worker` to run the jobs."""
    from judge import queue_quality
    from storage import Project

    with Project.open(project_dir) as project:
        episodes = episodes_of(project, target)
        name, ids = queue_quality(
            project, episodes, profiles=profiles, batch=job_batch, spend_cap_usd=spend_cap_usd,
            max_attempts=max_attempts, retry_backoff_s=retry_backoff_s,
            rate_limit_backoff_s=rate_limit_backoff_s,
        )  # fmt: skip
    click.echo(f"queued {len(ids)} interaction-quality job(s) in batch {name}")
    click.echo(f"run them with: workbench worker --project {project_dir} --drain", err=True)


def episodes_of(project: Project, target: str) -> list[str]:
    """The episode ``target`` names, or the stored episodes of the batch it names.

    Raises:
        EpisodeNotFoundError: neither an episode nor a batch (the message says both).
        BatchError: a batch with no stored episode yet.
    """
    from storage import BatchError, BatchNotFoundError, EpisodeNotFoundError

    try:
        return [project.episodes.get(target).id]
    except EpisodeNotFoundError as ep_err:
        try:
            batch = project.batches.get(target)
        except BatchNotFoundError as batch_err:
            raise EpisodeNotFoundError(
                f"{target!r} is neither an episode nor a batch of this project ({ep_err}; "
                f"{batch_err})"
            ) from None
    stored = [c.episode_id for c in project.batches.cells(batch.id) if c.episode_id is not None]
    if not stored:
        raise BatchError(f"batch {batch.id[:8]} ({batch.name}) has no stored episode yet")
    return stored
