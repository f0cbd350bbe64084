"""Interaction-quality scores from stored verdicts alone, and queueing the jobs that make them.

:func:`quality_scores` reads ``sim_quality_verdicts`` and aggregates with ``sim.metrics`` (the
gate, Q_rj, Q_r, the pooled overall and the ungated per-category scores of spec §4.3). It makes
no model call and reads no trace, so a batch is re-aggregated in milliseconds, and a change to
the aggregation re-scores every stored episode exactly.

:func:`queue_quality` queues one ``judge.quality`` job per episode, refusing a bad selection
before anything is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from judge.models import QueueError, enqueue_batch, require_profiles
from judge.quality._job import QUALITY_KIND
from judge.quality._prompt import PROMPT_VERSION
from sim.metrics import JudgeVerdicts, Round, RunValue, quality_categories, quality_overall
from storage import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_RATE_LIMIT_BACKOFF_S,
    DEFAULT_RETRY_BACKOFF_S,
    EpisodeError,
    EpisodeStatus,
    Project,
    QualityVerdictRecord,
    QualityVerdicts,
)


@dataclass(frozen=True)
class QualityScores:
    """Interaction quality over a set of episodes (one run of a batch, or one episode).

    Attributes:
        overall: the mean of Q_r over every scored round, pooled across the episodes.
        categories: per category code (``FG``, ``SR``, ``AG``, ``UI``, ``GC``; names in
            ``sim.metrics.CATEGORIES``), the ungated score; ``value`` None where it never applied.
        rounds: the rounds with stored verdicts, as aggregated (drill-down: ``episode_id``,
            ``round_id`` = the round number from 0, and each judge's verdicts).
        judges: the judge profiles whose verdicts were used.
    """

    overall: RunValue
    categories: dict[str, RunValue]
    rounds: tuple[Round, ...]
    judges: tuple[str, ...]


def quality_scores(
    project: Project,
    episodes: str | Iterable[str],
    *,
    profiles: Sequence[str] | None = None,
    prompt_version: str = PROMPT_VERSION,
) -> QualityScores:
    """Scores from the verdicts stored for ``episodes`` (ids or unique prefixes); no call.

    ``profiles`` limits the judges (default: every judge with verdicts under
    ``prompt_version``). A round only some judges graded is scored on those (J_r of §4.3); a
    round nobody graded yet is not in the scores.

    Raises:
        EpisodeNotFoundError: an id matches no episode (or several).
    """
    ids = [episodes] if isinstance(episodes, str) else list(episodes)
    store = QualityVerdicts(project.db)
    rounds: list[Round] = []
    judges: dict[str, None] = {}
    for given in dict.fromkeys(ids):
        episode_id = project.episodes.get(given).id
        rows = store.list(episode_id, profiles=profiles, prompt_version=prompt_version)
        by_round: dict[int, dict[str, dict[str, str]]] = {}
        for v in rows:
            by_round.setdefault(v.round, {}).setdefault(v.judge_profile, {})[v.item] = v.verdict
            judges[v.judge_profile] = None
        for index in sorted(by_round):
            graded = by_round[index]
            rounds.append(
                Round(
                    episode_id,
                    tuple(JudgeVerdicts(j, items) for j, items in sorted(graded.items())),
                    round_id=str(index),
                )
            )
    return QualityScores(
        overall=quality_overall(rounds),
        categories=quality_categories(rounds),
        rounds=tuple(rounds),
        judges=tuple(judges),
    )


def stored_verdicts(project: Project, episode_id: str) -> list[QualityVerdictRecord]:
    """Every verdict stored for an episode (all judges and prompt versions), with reasons."""
    return QualityVerdicts(project.db).list(project.episodes.get(episode_id).id)


def queue_quality(
    project: Project,
    episode_ids: Iterable[str],
    *,
    profiles: Sequence[str],
    batch: str | None = None,
    spend_cap_usd: float | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    retry_backoff_s: float = DEFAULT_RETRY_BACKOFF_S,
    rate_limit_backoff_s: float = DEFAULT_RATE_LIMIT_BACKOFF_S,
) -> tuple[str, list[int]]:
    """Queue one ``judge.quality`` job per episode; returns the batch name and job ids.

    Rounds already judged by a profile are not asked again when the job runs, so queueing an
    episode twice costs nothing the second time. Refused before anything is written: no
    episode, not exactly two different known profiles, an unknown, non-interactive or still
    running episode.
    """
    given = list(dict.fromkeys(episode_ids))
    if not given:
        raise QueueError("no episodes selected")
    chosen = list(dict.fromkeys(profiles))
    if len(chosen) != 2:
        raise QueueError(
            f"interaction quality needs two different judge profiles (--profile twice), got "
            f"{', '.join(chosen) or 'none'}"
        )
    require_profiles(project, chosen)
    ids = []
    for eid in given:
        try:
            ep = project.episodes.get(eid)
        except EpisodeError as err:
            raise QueueError(str(err)) from None
        if not ep.config.get("interactive"):
            raise QueueError(f"episode {ep.id[:8]} is not interactive: it has no rounds to judge")
        if ep.status is EpisodeStatus.RUNNING:
            raise QueueError(f"episode {ep.id[:8]} is still running")
        ids.append(ep.id)
    name = batch or f"quality-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}"
    payloads = []
    for eid in dict.fromkeys(ids):
        payload: dict[str, object] = {"episode_id": eid, "profiles": chosen}
        if spend_cap_usd is not None:
            payload["spend_cap_usd"] = spend_cap_usd
        payloads.append(payload)
    return enqueue_batch(
        project, QUALITY_KIND, payloads, batch=name, max_attempts=max_attempts,
        retry_backoff_s=retry_backoff_s, rate_limit_backoff_s=rate_limit_backoff_s,
    )  # fmt: skip
