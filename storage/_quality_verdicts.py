"""Interaction-quality verdicts (schema v7): the cache that makes re-aggregation free.

A verdict is one judge's pass (``P``), fail (``F``) or not-applicable (``NA``) on one rubric
item of one round of an interactive episode (IVG spec §4.3), with the judge's short reason. The
primary key (episode, judge profile, prompt version, round, item) is the cache key of spec
§8.23: the ``judge.quality`` job asks a judge only about rounds that have no verdict under its
profile and prompt version, so judging an episode twice costs nothing the second time, and
scores are recomputed from these rows alone.

The calls that produced them are audited like every judge call: a ``judge_runs`` row per judge
and job attempt (``mode='quality'``, ``episode_id`` set, no video), its calls in
``judge_calls``, so the queue's spend accounting (recorded calls, over every attempt) covers
them unchanged. The rubric itself is ``sim.metrics``'s; storage checks only the shape.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import sqlite_utils

from annotation import UserError
from storage._db import write
from storage._history import now

VerdictCode = Literal["P", "F", "NA"]
VERDICT_CODES: tuple[VerdictCode, ...] = ("P", "F", "NA")
QUALITY_MODE = "quality"
"""``judge_runs.mode`` of the runs that judge interaction quality."""

_COLUMNS = (
    "episode_id, judge_profile, prompt_version, round, turn_idx, item, verdict, reason, run_id"
)


class QualityVerdictError(UserError, ValueError):
    """A verdict that cannot be stored; the message names the record and the field."""


@dataclass(frozen=True)
class QualityVerdictRecord:
    """One stored verdict (see the module docstring).

    ``round`` counts the episode's spoken assistant responses from 0; ``turn_idx`` is the
    ``sim_turns`` row of that response; ``run_id`` the judge run whose call gave the verdict.
    """

    episode_id: str
    judge_profile: str
    prompt_version: str
    round: int
    turn_idx: int
    item: str
    verdict: VerdictCode
    reason: str = ""
    run_id: int | None = None


def _row(v: QualityVerdictRecord, k: int) -> tuple[Any, ...]:
    where = f"verdicts[{k}]"
    if not isinstance(v, QualityVerdictRecord):
        raise QualityVerdictError(f"{where}: expected a QualityVerdictRecord, got {v!r:.80}")
    for name in ("episode_id", "judge_profile", "prompt_version", "item"):
        value = getattr(v, name)
        if not isinstance(value, str) or not value:
            raise QualityVerdictError(f"{where}.{name}: expected a non-empty text, got {value!r}")
    for name in ("round", "turn_idx"):
        value = getattr(v, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise QualityVerdictError(f"{where}.{name}: expected an int >= 0, got {value!r}")
    if v.verdict not in VERDICT_CODES:
        raise QualityVerdictError(
            f"{where}.verdict: {v.verdict!r} is not one of {', '.join(VERDICT_CODES)}"
        )
    if not isinstance(v.reason, str):
        raise QualityVerdictError(f"{where}.reason: expected text, got {v.reason!r:.80}")
    return (v.episode_id, v.judge_profile, v.prompt_version, v.round, v.turn_idx, v.item,
            v.verdict, v.reason, v.run_id)  # fmt: skip


class QualityVerdicts:
    """Store and read interaction-quality verdicts and the bookkeeping of their runs."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self._db = db

    # ---- verdicts ---------------------------------------------------------------------------
    def add(self, verdicts: Iterable[QualityVerdictRecord]) -> int:
        """Store verdicts (joining the caller's transaction); returns how many were new.

        A verdict already stored under the same key is kept, not replaced: two jobs that
        judged the same round concurrently both paid for a valid answer, and the first one
        written stays the cached one. Every record is checked before anything is written.
        """
        rows = [_row(v, k) for k, v in enumerate(verdicts)]
        stamp = now()
        with write(self._db):
            before = self._db.conn.total_changes
            self._db.conn.executemany(
                f"INSERT INTO sim_quality_verdicts ({_COLUMNS}, created) "
                f"VALUES ({', '.join('?' * 10)}) "
                "ON CONFLICT (episode_id, judge_profile, prompt_version, round, item) DO NOTHING",
                [(*r, stamp) for r in rows],
            )
            return int(self._db.conn.total_changes - before)

    def judged_rounds(self, episode_id: str, profile: str, prompt_version: str) -> set[int]:
        """The rounds of an episode this judge already gave verdicts for (the cache)."""
        rows = self._db.execute(
            "SELECT DISTINCT round FROM sim_quality_verdicts "
            "WHERE episode_id = ? AND judge_profile = ? AND prompt_version = ?",
            [episode_id, profile, prompt_version],
        ).fetchall()
        return {int(r[0]) for r in rows}

    def list(
        self,
        episode_id: str,
        *,
        profiles: Sequence[str] | None = None,
        prompt_version: str | None = None,
    ) -> builtins.list[QualityVerdictRecord]:
        """An episode's verdicts by round, judge and item (only these judges / this version)."""
        sql = f"SELECT {_COLUMNS} FROM sim_quality_verdicts WHERE episode_id = ?"
        args: builtins.list[Any] = [episode_id]
        if profiles is not None:
            sql += f" AND judge_profile IN ({','.join('?' * len(profiles))})"
            args.extend(profiles)
        if prompt_version is not None:
            sql += " AND prompt_version = ?"
            args.append(prompt_version)
        rows = self._db.execute(sql + " ORDER BY round, judge_profile, item", args).fetchall()
        return [QualityVerdictRecord(*r) for r in rows]

    # ---- runs (audited calls; the queue sums their cost) --------------------------------------
    def start_run(
        self,
        *,
        job_id: int | None,
        episode_id: str,
        profile: str,
        model: str | None,
        prompt_version: str,
        config: Mapping[str, Any],
    ) -> int:
        """A ``judge_runs`` row in status ``running`` for one judge of one episode; its id.

        Calls go to it through :meth:`storage.JudgeRuns.record_call`, failures through
        :meth:`storage.JudgeRuns.fail`, like any judge run.
        """
        with write(self._db):
            tbl = self._db.table("judge_runs")
            tbl.insert(
                {"job_id": job_id, "video_id": None, "episode_id": episode_id,
                 "profile": profile, "model": model, "mode": QUALITY_MODE,
                 "prompt_version": prompt_version,
                 "config": json.dumps(dict(config), sort_keys=True), "status": "running",
                 "cost_usd": 0.0, "tokens_in": 0, "tokens_out": 0, "created_at": now()}
            )  # fmt: skip
            assert tbl.last_pk is not None
            return int(tbl.last_pk)

    def finish_run(self, run_id: int) -> None:
        """Mark a running quality run done, its totals summed from its recorded calls."""
        total = "SELECT COALESCE(SUM({}), 0) FROM judge_calls c WHERE c.run_id = judge_runs.id"
        with write(self._db):
            cur = self._db.execute(
                f"UPDATE judge_runs SET status = 'done', finished_at = ?, "
                f"cost_usd = ({total.format('c.cost_usd')}), "
                f"tokens_in = ({total.format('c.tokens_in')}), "
                f"tokens_out = ({total.format('c.tokens_out')}) "
                "WHERE id = ? AND status = 'running' AND mode = ?",
                [now(), run_id, QUALITY_MODE],
            )
            if cur.rowcount != 1:
                raise QualityVerdictError(f"judge run {run_id} is not a running quality run")

    def spent(self, job_id: int, profile: str) -> float:
        """US$ of the calls one judge's runs of this job recorded, over every attempt (what an
        earlier attempt spent comes off this one's spend cap)."""
        row = self._db.execute(
            "SELECT COALESCE(SUM(c.cost_usd), 0) FROM judge_calls c "
            "JOIN judge_runs r ON r.id = c.run_id "
            "WHERE r.job_id = ? AND r.profile = ? AND r.mode = ?",
            [job_id, profile, QUALITY_MODE],
        ).fetchone()
        return float(row[0])

    def runs(self, episode_id: str) -> builtins.list[dict[str, Any]]:
        """The quality runs of an episode, oldest first: id, job, profile, model, status,
        error, cost and the number of recorded calls (for the audit views)."""
        cur = self._db.execute(
            "SELECT r.id, r.job_id, r.profile, r.model, r.prompt_version, r.status, r.error, "
            "r.cost_usd, (SELECT COUNT(*) FROM judge_calls c WHERE c.run_id = r.id) AS calls "
            "FROM judge_runs r WHERE r.episode_id = ? AND r.mode = ? ORDER BY r.id",
            [episode_id, QUALITY_MODE],
        )
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
