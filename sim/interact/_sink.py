"""Stores an interactive episode's conversation, audit and events next to its trace.

Goes *before* its :class:`sim.episode.SqliteSink` in the runner's sinks, so that at the end its
rows are written while the episode is still open (it uses that sink's episode id, created when
the sinks start). Turns and exchanges are written in batches as they happen, event records when
the episode finishes (events resolve late). With a deferred SQLite sink everything waits for
:meth:`commit`, inside the caller's transaction, or is taken as data by :meth:`deferred` (a job
run where the project is not: no project is needed until the episode is committed).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sim.episode import (
    ActionEntry,
    AnomalyEntry,
    DeferredEpisode,
    EpisodeResult,
    SqliteSink,
    TickEntry,
)
from storage import EventRecord, ExchangeRecord, Project, TurnRecord

if TYPE_CHECKING:
    from sim.episode import EpisodeRunner
    from sim.interact._session import InteractiveAgent


#: ``json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)`` with one encoder
#: built once (dumps builds a new one per call for any non-default argument): the same text
_dumps = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str).encode


def turn_record(idx: int, row: dict[str, Any]) -> TurnRecord:
    return TurnRecord(
        idx=idx,
        tick=row["tick"],
        speaker=row["speaker"],
        text=row["text"],
        move=row["move"],
        flag=row["flag"],
        flag_target=row["flag_target"],
        meta_json=_dumps(row["meta"]),
    )


def exchange_record(idx: int, row: dict[str, Any]) -> ExchangeRecord:
    return ExchangeRecord(
        idx=idx,
        tick=row["tick"],
        party=row["party"],
        sent_json=_dumps(row["sent"]),
        received_json=_dumps(row["received"]),
        latency_s=row.get("latency_s"),
        due_tick=row.get("due_tick"),
        tokens_in=row.get("tokens_in"),
        tokens_out=row.get("tokens_out"),
        cost_usd=row.get("cost_usd"),
        outcome=row.get("outcome"),
    )


def event_records(agent: InteractiveAgent) -> list[EventRecord]:
    out = []
    for i, (ev, st) in enumerate(zip(agent.harness.events, agent.harness.states, strict=True)):
        out.append(
            EventRecord(
                idx=i,
                event_id=ev.id,
                category=ev.spec.category,
                type=ev.spec.type,
                spec_json=_dumps(ev.spec.model_dump(mode="json", exclude_defaults=True)),
                status=st.status,
                trigger_tick=st.trigger_tick,
                commit_tick=st.commit_tick,
                resolve_tick=st.resolve_tick,
                resolution=st.resolution,
                accept_tick=st.accept_tick,
                data_json=_dumps(st.data),
            )
        )
    return out


class InteractionSink:
    """See the module docstring."""

    def __init__(self, db: SqliteSink, agent: InteractiveAgent) -> None:
        self.db = db
        self.agent = agent
        self._turns = 0
        self._exchanges = 0

    def start(self, runner: EpisodeRunner) -> None:
        self._turns = self._exchanges = 0

    def record(
        self,
        runner: EpisodeRunner,
        tick: TickEntry,
        actions: Sequence[ActionEntry],
        anomalies: Sequence[AnomalyEntry],
        snapshot: dict[str, Any] | None,
    ) -> None:
        tables = self.agent.tables
        new = len(tables.turns) - self._turns + tables.exchange_count - self._exchanges
        # rows wait for a batch of 50, unless the trace is being watched live (a small batch)
        if not self.db.defer and new > (50 if self.db.batch >= 25 else 0):
            assert self.db.project is not None  # not deferred: it writes as it goes
            self._flush(self.db.project)

    def flush(self) -> None:
        """Write what waits now (a live run that pauses: its watcher reads every tick)."""
        if not self.db.defer and self.db.project is not None:
            self._flush(self.db.project)

    def _rows(self) -> tuple[list[TurnRecord], list[ExchangeRecord]]:
        """The turns and exchanges not written yet."""
        t, x = self.agent.tables.turns, self.agent.tables.exchanges
        return (
            [turn_record(i, t[i]) for i in range(self._turns, len(t))],
            [exchange_record(i, x[i]) for i in range(self._exchanges, len(x))],
        )

    def _flush(self, project: Project) -> None:
        if self.db.episode_id is None:
            return
        turns, exchanges = self._rows()
        project.episodes.append(self.db.episode_id, turns=turns, exchanges=exchanges)
        self._turns += len(turns)
        self._exchanges += len(exchanges)

    def finish(self, runner: EpisodeRunner, result: EpisodeResult) -> None:
        self.agent.finish(result.ticks)
        if not self.db.defer:
            assert self.db.project is not None
            self.commit(self.db.project)

    def deferred(self) -> DeferredEpisode:
        """The finished deferred episode with its conversation, audit and events, as data."""
        turns, exchanges = self._rows()
        return self.db.deferred(turns=turns, exchanges=exchanges, events=event_records(self.agent))

    def commit(self, project: Project) -> str:
        """Write what is left (the events, whole) for the SQLite sink's episode; a deferred
        sink's whole episode is written here, in the caller's transaction. Returns its id."""
        if self.db.defer:
            return self.db.commit(project, also=lambda _eid: self._write_rest(project))
        self._write_rest(project)
        assert self.db.episode_id is not None
        return self.db.episode_id

    def _write_rest(self, project: Project) -> None:
        assert self.db.episode_id is not None
        self._flush(project)
        project.episodes.set_events(self.db.episode_id, event_records(self.agent))
