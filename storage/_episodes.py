"""Simulation episodes: the stored trace of a MuJoCo or symbolic run (``sim_*`` tables, v4),
and of an interactive one: its conversation, scheduled events and audited exchanges (v6).

The episode engine writes in a few transactions per episode, never one per tick: :meth:`create`
when it starts, :meth:`Episodes.append` for each batch of ticks (with the actions, anomalies and
snapshots of that batch) and :meth:`Episodes.finish` with the verdict. Each call is one
``BEGIN IMMEDIATE`` transaction, validated before anything is written, so a crash or a bad row
leaves the trace as it was after the last whole batch. Readers (trace views, forks, replays) go
through the same class; ids may be shortened to a unique prefix of at least 6 characters, as git
allows, because the CLI and the GUI show short ids.
"""

from __future__ import annotations

import builtins
import json
import math
import os
import sqlite3
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from storage._db import ids_with_prefix, write
from storage._episode_records import (
    ActionRecord,
    AmbiguousEpisodeError,
    AnomalyRecord,
    ArtifactRecord,
    ConditionRecord,
    EpisodeError,
    EpisodeMode,
    EpisodeNotFoundError,
    EpisodeRecord,
    EpisodeStatus,
    TickRecord,
    action_from_row,
    action_row,
    anomaly_row,
    check_count,
    check_json,
    check_unique,
    condition_row,
    enum_value,
    episode_from_row,
    metric_row,
    snapshot_row,
    tick_row,
)
from storage._episode_rows import CallTotals, call_totals
from storage._history import now
from storage._interaction_records import (
    PARTIES,
    EventRecord,
    ExchangeRecord,
    Party,
    TurnRecord,
    event_row,
    exchange_row,
    one_of,
    turn_row,
)
from storage._staging import MediaFile, insert_media, stage
from storage.media import MediaError, file_sha256, index_video

if TYPE_CHECKING:
    from storage._project import Project

MIN_PREFIX = 6

_EPISODE_COLUMNS = (
    "id, scenario, scenario_sha, family, mode, agent, seed, delta, status, started, ended, "
    "ticks, t_ref, contract_json, contract_hash, config_json, parent_id, fork_tick, reference, "
    "end_reason"
)
_ACTION_COLUMNS = (
    "idx, tick, source, text, action_json, accepted, failed_json, grounded_json, outcome, "
    "finished_tick"
)
_ANOMALY_COLUMNS = "idx, kind, obj, params_json, tick, trigger_json, classification"
_CONDITION_COLUMNS = "idx, predicate_json, text, value, witness_tick"
_TURN_COLUMNS = "idx, tick, speaker, text, move, flag, flag_target, meta_json"
_EVENT_COLUMNS = (
    "idx, event_id, category, type, spec_json, status, trigger_tick, commit_tick, resolve_tick, "
    "resolution, accept_tick, data_json"
)
_EXCHANGE_COLUMNS = (
    "idx, tick, party, sent_json, received_json, latency_s, due_tick, tokens_in, tokens_out, "
    "cost_usd, outcome"
)


def _upsert(table: str, columns: str) -> str:
    names = [c.strip() for c in columns.split(",")]
    updates = ", ".join(f"{c} = excluded.{c}" for c in names if c != "idx")
    marks = ", ".join("?" * (len(names) + 1))
    return (
        f"INSERT INTO {table} (episode_id, {columns}) VALUES ({marks}) "
        f"ON CONFLICT (episode_id, idx) DO UPDATE SET {updates}"
    )


# Built once: append() runs them for every batch of ticks.
_UPSERT_ACTIONS = _upsert("sim_actions", _ACTION_COLUMNS)
_UPSERT_ANOMALIES = _upsert("sim_anomalies", _ANOMALY_COLUMNS)
_UPSERT_TURNS = _upsert("sim_turns", _TURN_COLUMNS)
_UPSERT_EXCHANGES = _upsert("sim_exchanges", _EXCHANGE_COLUMNS)


class Episodes:
    """Create, append to, finish, read and delete simulation episodes."""

    def __init__(self, project: Project) -> None:
        # The project, not just its database: add_video stores files under its media folder.
        self._project = project
        self._db = project.db

    # ---- writers -------------------------------------------------------------------------
    def create(
        self,
        *,
        scenario: str,
        scenario_sha: str,
        family: str,
        mode: EpisodeMode | str,
        agent: str,
        seed: int,
        delta: float,
        contract_json: str,
        contract_hash: str,
        config: Mapping[str, Any],
        parent_id: str | None = None,
        fork_tick: int | None = None,
        reference: bool = False,
    ) -> str:
        """Start a running episode now (UTC); returns its id (32 hex digits).

        ``parent_id`` (a full id or unique prefix) and ``fork_tick`` mark a fork: both or neither.
        """
        episode_mode = enum_value(EpisodeMode, mode, "mode")
        for name, text in (("scenario", scenario), ("family", family), ("agent", agent)):
            if not isinstance(text, str) or not text.strip():
                raise EpisodeError(f"{name}: expected a non-empty name, got {text!r}")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise EpisodeError(f"seed: expected an int, got {seed!r}")
        if not isinstance(delta, int | float) or not math.isfinite(delta) or delta <= 0:
            raise EpisodeError(f"delta: expected seconds per tick > 0, got {delta!r}")
        check_json(contract_json, "contract_json")
        if not isinstance(contract_hash, str) or not contract_hash:
            raise EpisodeError(f"contract_hash: expected a non-empty hash, got {contract_hash!r}")
        config_json = _dump(config, "config")
        if (parent_id is None) != (fork_tick is None):
            raise EpisodeError("parent_id and fork_tick: a fork needs both, other episodes neither")
        check_count(fork_tick, "fork_tick", nullable=True)
        episode_id = uuid.uuid4().hex
        with write(self._db):
            parent = None if parent_id is None else self._resolve(parent_id, field="parent_id")
            self._db.execute(
                f"INSERT INTO sim_episodes ({_EPISODE_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 0, NULL, ?, ?, ?, ?, ?, ?, NULL)",
                [
                    episode_id, scenario, scenario_sha, family, episode_mode.value, agent, seed,
                    float(delta), EpisodeStatus.RUNNING.value, now(), contract_json,
                    contract_hash, config_json, parent, fork_tick, int(bool(reference)),
                ],
            )  # fmt: skip
        return episode_id

    def append(
        self,
        episode_id: str,
        ticks: Sequence[TickRecord] = (),
        actions: Sequence[ActionRecord] = (),
        anomalies: Sequence[AnomalyRecord] = (),
        snapshots: Sequence[tuple[int, str]] = (),
        turns: Sequence[TurnRecord] = (),
        exchanges: Sequence[ExchangeRecord] = (),
    ) -> None:
        """Store one batch of a running episode in one transaction.

        Ticks and snapshots are new rows (a tick stored twice is an error: a replay must not
        silently overwrite a hash). Actions and anomalies are upserted by ``idx``: an action is
        written when submitted and again, whole, when its outcome arrives; an anomaly when
        injected and again when classified. Turns and exchanges are upserted by ``idx`` too: an
        exchange is written when its request is sent and again when the reply comes back.
        """
        tick_rows = [tick_row(t, k) for k, t in enumerate(ticks)]
        action_rows = [action_row(a, k) for k, a in enumerate(actions)]
        anomaly_rows = [anomaly_row(a, k) for k, a in enumerate(anomalies)]
        snapshot_rows = [snapshot_row(s, k) for k, s in enumerate(snapshots)]
        turn_rows = [turn_row(t, k) for k, t in enumerate(turns)]
        exchange_rows = [exchange_row(x, k) for k, x in enumerate(exchanges)]
        check_unique([r[0] for r in tick_rows], "ticks", "tick")
        check_unique([r[0] for r in action_rows], "actions", "idx")
        check_unique([r[0] for r in anomaly_rows], "anomalies", "idx")
        check_unique([r[0] for r in snapshot_rows], "snapshots", "tick")
        check_unique([r[0] for r in turn_rows], "turns", "idx")
        check_unique([r[0] for r in exchange_rows], "exchanges", "idx")
        db = self._db
        with write(db):
            eid = self._resolve_running(episode_id, "append to")
            try:
                db.conn.executemany(
                    "INSERT INTO sim_ticks (episode_id, tick, state_hash, diff_json, "
                    "controller_json, graph_json) VALUES (?, ?, ?, ?, ?, ?)",
                    [(eid, *r) for r in tick_rows],
                )
                db.conn.executemany(
                    "INSERT INTO sim_snapshots (episode_id, tick, snapshot_json) VALUES (?, ?, ?)",
                    [(eid, *r) for r in snapshot_rows],
                )
            except sqlite3.IntegrityError as err:
                raise EpisodeError(
                    f"episode {eid}: a tick or snapshot in this batch is already stored ({err}); "
                    "nothing from the batch was written"
                ) from None
            db.conn.executemany(_UPSERT_ACTIONS, [(eid, *r) for r in action_rows])
            db.conn.executemany(_UPSERT_ANOMALIES, [(eid, *r) for r in anomaly_rows])
            db.conn.executemany(_UPSERT_TURNS, [(eid, *r) for r in turn_rows])
            db.conn.executemany(_UPSERT_EXCHANGES, [(eid, *r) for r in exchange_rows])

    def set_events(self, episode_id: str, events: Sequence[EventRecord]) -> None:
        """Replace the episode's scheduled events with ``events`` (one transaction).

        Allowed while running (the harness's state so far) and after finishing (the final
        resolutions, ``not_reached`` included), so the stored rows are always one whole
        snapshot of the schedule, never a mix of two.
        """
        rows = [event_row(e, k) for k, e in enumerate(events)]
        check_unique([r[0] for r in rows], "events", "idx")
        seen: set[str] = set()
        for r in rows:
            if r[1] in seen:
                raise EpisodeError(f"events: event_id {r[1]!r} appears twice")
            seen.add(r[1])
        db = self._db
        with write(db):
            eid = self._resolve(episode_id)
            db.execute("DELETE FROM sim_events WHERE episode_id = ?", [eid])
            db.conn.executemany(
                f"INSERT INTO sim_events (episode_id, {_EVENT_COLUMNS}) "
                f"VALUES ({', '.join('?' * 13)})",
                [(eid, *r) for r in rows],
            )

    def set_metrics(self, episode_id: str, metrics: Mapping[str, float]) -> None:
        """Write metric values computed after the fact (from the stored trace), one transaction:
        each name is inserted or replaced; names not given keep their values."""
        rows = [metric_row(name, value) for name, value in metrics.items()]
        with write(self._db):
            eid = self._resolve(episode_id)
            self._db.conn.executemany(
                "INSERT INTO sim_metrics (episode_id, name, value) VALUES (?, ?, ?) "
                "ON CONFLICT (episode_id, name) DO UPDATE SET value = excluded.value",
                [(eid, *r) for r in rows],
            )

    def finish(
        self,
        episode_id: str,
        *,
        status: EpisodeStatus | str,
        ticks: int,
        t_ref: int | None,
        conditions: Sequence[ConditionRecord] = (),
        metrics: Mapping[str, float] | None = None,
        end_reason: str | None = None,
    ) -> None:
        """End a running episode with its status, contract values and metrics (one transaction).

        ``end_reason``: why it ended as it did, in words (a failed run's error, what an agent
        that gave up said, what interrupted it); None when it ran its course.
        """
        end_status = enum_value(EpisodeStatus, status, "status")
        if end_status is EpisodeStatus.RUNNING:
            raise EpisodeError("status: an episode cannot finish as running")
        if end_reason is not None and not isinstance(end_reason, str):
            raise EpisodeError(f"end_reason: expected text or None, got {end_reason!r:.80}")
        check_count(ticks, "ticks")
        check_count(t_ref, "t_ref", nullable=True)
        condition_rows = [condition_row(c, k) for k, c in enumerate(conditions)]
        check_unique([r[0] for r in condition_rows], "conditions", "idx")
        metric_rows = [metric_row(name, value) for name, value in (metrics or {}).items()]
        db = self._db
        with write(db):
            eid = self._resolve_running(episode_id, "finish")
            db.execute(
                "UPDATE sim_episodes SET status = ?, ended = ?, ticks = ?, t_ref = ?, "
                "end_reason = ? WHERE id = ?",
                [end_status.value, now(), ticks, t_ref, end_reason or None, eid],
            )
            db.conn.executemany(
                f"INSERT INTO sim_conditions (episode_id, {_CONDITION_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(eid, *r) for r in condition_rows],
            )
            db.conn.executemany(
                "INSERT INTO sim_metrics (episode_id, name, value) VALUES (?, ?, ?)",
                [(eid, *r) for r in metric_rows],
            )

    def add_video(
        self, episode_id: str, path: Path, *, camera: str, fps: float, frames: int
    ) -> str:
        """Store an episode's video in ``media/`` by sha256 and register it; returns the sha.

        Stored the way import stores media (copied to a temporary name, moved in place in the
        transaction that writes the rows), so adding the same file again changes nothing, and
        a new recording of the same camera replaces the artifact row (the old file stays: media
        are never modified or deleted).
        """
        path = Path(path)
        if not path.is_file():
            raise EpisodeError(f"path: no video file at {path}")
        if not isinstance(camera, str):
            raise EpisodeError(f"camera: expected a camera name, got {camera!r}")
        if not isinstance(fps, int | float) or not math.isfinite(fps) or fps <= 0:
            raise EpisodeError(f"fps: expected frames per second > 0, got {fps!r}")
        if not isinstance(frames, int) or isinstance(frames, bool) or frames < 0:
            raise EpisodeError(f"frames: expected a frame count >= 0, got {frames!r}")
        eid = self._resolve(episode_id)
        try:  # demux only (no decode): every stored video gets its frame index, as on import
            index = index_video(path)
        except MediaError as e:
            raise EpisodeError(f"path: {e}") from None
        media = MediaFile(path, file_sha256(path), "video", index)
        return self._store_artifact(eid, media, "video", camera, float(fps), frames)

    def add_file(self, episode_id: str, path: Path, *, kind: str, frames: int = 0) -> str:
        """Store any other file of an episode (e.g. a demonstration's arrays, ``kind`` "demo")
        in ``media/`` by sha256 and register it as the episode's ``kind`` artifact (replacing
        an earlier one of that kind); returns the sha. Stored as :meth:`add_video` stores."""
        path = Path(path)
        if not path.is_file():
            raise EpisodeError(f"path: no file at {path}")
        if not isinstance(kind, str) or not kind.strip() or kind == "video":
            raise EpisodeError(f"kind: expected an artifact kind other than 'video', got {kind!r}")
        eid = self._resolve(episode_id)
        media = MediaFile(path, file_sha256(path), "data")
        return self._store_artifact(eid, media, kind, "", 0.0, int(frames))

    def _store_artifact(
        self, eid: str, media: MediaFile, kind: str, camera: str, fps: float, frames: int
    ) -> str:
        """Copy ``media`` into ``media/`` (a temporary name, moved in place in the transaction
        that writes its rows) and register it as the episode's ``kind``/``camera`` artifact,
        replacing an earlier one (the old file stays: media are never modified or deleted)."""
        staged = stage(self._project, media, [])
        try:
            with write(self._db):
                eid = self._resolve(eid)  # still there now that we hold the write lock
                insert_media(self._project, media)
                self._db.execute(
                    "INSERT INTO sim_artifacts (episode_id, kind, camera, media_sha, fps, frames) "
                    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (episode_id, kind, camera) "
                    "DO UPDATE SET media_sha = excluded.media_sha, fps = excluded.fps, "
                    "frames = excluded.frames",
                    [eid, kind, camera, media.sha256, fps, frames],
                )
                for tmp, final in staged:
                    os.replace(tmp, final)
        finally:
            for tmp, _ in staged:
                tmp.unlink(missing_ok=True)
        return media.sha256

    def mark_perturbed(self, episode_id: str, spans: Sequence[tuple[int, int]]) -> None:
        """Record the ticks (inclusive spans) during which a person pushed a body by hand in a
        live run: the trace no longer follows from its recorded decisions, so replay refuses
        it and a review says its world past the first span is approximate."""
        clean = sorted((int(a), int(b)) for a, b in spans)
        for a, b in clean:
            if a < 0 or b < a:
                raise EpisodeError(f"perturbed: expected tick spans a <= b, got {(a, b)!r}")
        self._set_config(episode_id, "perturbed", [list(s) for s in clean])

    def mark_taken_over(self, episode_id: str, spans: Sequence[Mapping[str, Any]]) -> None:
        """Record the ticks (inclusive spans ``{start, end, who, why}``) during which a person
        drove the arm in a live run, as ``config.takeovers``: labelled data for review, and,
        like a push by hand, a trace that no longer follows from its recorded decisions."""
        clean: list[dict[str, Any]] = []
        for s in spans:
            a, b = int(s["start"]), int(s["end"])
            who, why = str(s.get("who") or "").strip(), str(s.get("why") or "")
            if a < 0 or b < a:
                raise EpisodeError(f"takeovers: expected tick spans start <= end, got {(a, b)!r}")
            if not who:
                raise EpisodeError(f"takeovers: the span {a}–{b} does not say who took over")
            clean.append({"start": a, "end": b, "who": who, "why": why})
        clean.sort(key=lambda s: (s["start"], s["end"]))
        self._set_config(episode_id, "takeovers", clean)

    def _set_config(self, episode_id: str, key: str, value: Any) -> None:
        """Replace one key of an episode's config (what a live run learns after it started),
        read and written in one transaction."""
        with write(self._db):
            eid = self._resolve(episode_id)
            row = self._db.execute(
                "SELECT config_json FROM sim_episodes WHERE id = ?", [eid]
            ).fetchone()
            config = json.loads(row[0] or "{}")
            config[key] = value
            self._db.execute(
                "UPDATE sim_episodes SET config_json = ? WHERE id = ?",
                [_dump(config, "config"), eid],
            )

    def delete(self, episode_id: str) -> None:
        """Remove an episode and its whole trace; its forks stay, no longer linked to it.

        Its videos stay in ``media/`` (content-addressed files may be shared).
        """
        with write(self._db):
            eid = self._resolve(episode_id)
            self._db.execute("DELETE FROM sim_episodes WHERE id = ?", [eid])

    # ---- readers -------------------------------------------------------------------------
    def get(self, episode_id: str) -> EpisodeRecord:
        """The episode with this id or unique id prefix (>= 6 characters)."""
        eid = self._resolve(episode_id)
        row = self._db.execute(
            f"SELECT {_EPISODE_COLUMNS} FROM sim_episodes WHERE id = ?", [eid]
        ).fetchone()
        return episode_from_row(row)

    def list(
        self, scenario: str | None = None, reference: bool | None = None
    ) -> builtins.list[EpisodeRecord]:
        """Episodes, newest first, optionally of one scenario and/or (not) reference runs."""
        clauses: builtins.list[str] = []
        args: builtins.list[Any] = []
        if scenario is not None:
            clauses.append("scenario = ?")
            args.append(scenario)
        if reference is not None:
            clauses.append("reference = ?")
            args.append(int(reference))
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._db.execute(
            f"SELECT {_EPISODE_COLUMNS} FROM sim_episodes{where} ORDER BY started DESC, rowid DESC",
            args,
        ).fetchall()
        return [episode_from_row(r) for r in rows]

    def ticks(
        self, episode_id: str, start: int = 0, stop: int | None = None
    ) -> builtins.list[TickRecord]:
        """Ticks ``start <= tick < stop`` (to the end when ``stop`` is None), in order."""
        eid = self._resolve(episode_id)
        rows = self._db.execute(
            "SELECT tick, state_hash, diff_json, controller_json, graph_json FROM sim_ticks "
            "WHERE episode_id = ? AND tick >= ? AND tick < ? ORDER BY tick",
            [eid, start, stop if stop is not None else 2**62],
        ).fetchall()
        return [TickRecord(*r) for r in rows]

    def hashes(self, episode_id: str) -> builtins.list[str]:
        """Every stored tick's state hash, ordered by tick (what a replay must reproduce)."""
        eid = self._resolve(episode_id)
        rows = self._db.execute(
            "SELECT state_hash FROM sim_ticks WHERE episode_id = ? ORDER BY tick", [eid]
        ).fetchall()
        return [r[0] for r in rows]

    def actions(self, episode_id: str) -> builtins.list[ActionRecord]:
        """Every submitted action, in submission order."""
        return [
            action_from_row(r) for r in self._children(episode_id, "sim_actions", _ACTION_COLUMNS)
        ]

    def anomalies(self, episode_id: str) -> builtins.list[AnomalyRecord]:
        """Injected anomalies, in injection order."""
        return [
            AnomalyRecord(*r) for r in self._children(episode_id, "sim_anomalies", _ANOMALY_COLUMNS)
        ]

    def conditions(self, episode_id: str) -> builtins.list[ConditionRecord]:
        """The contract's predicates with their final values (empty until finished)."""
        rows = self._children(episode_id, "sim_conditions", _CONDITION_COLUMNS)
        return [ConditionRecord(*r) for r in rows]

    def metrics(self, episode_id: str) -> dict[str, float]:
        """Metric name → value (empty until finished)."""
        eid = self._resolve(episode_id)
        rows = self._db.execute(
            "SELECT name, value FROM sim_metrics WHERE episode_id = ? ORDER BY name", [eid]
        ).fetchall()
        return {str(name): float(value) for name, value in rows}

    def artifacts(self, episode_id: str) -> builtins.list[ArtifactRecord]:
        """Recorded files (videos per camera); open one with ``project.media_path(media_sha)``."""
        eid = self._resolve(episode_id)
        rows = self._db.execute(
            "SELECT kind, camera, media_sha, fps, frames FROM sim_artifacts "
            "WHERE episode_id = ? ORDER BY kind, camera",
            [eid],
        ).fetchall()
        return [ArtifactRecord(*r) for r in rows]

    def turns(self, episode_id: str) -> builtins.list[TurnRecord]:
        """The public conversation (and the assistant's flags), in ``idx`` order."""
        return [TurnRecord(*r) for r in self._children(episode_id, "sim_turns", _TURN_COLUMNS)]

    def events(self, episode_id: str) -> builtins.list[EventRecord]:
        """The scheduled events as last stored by :meth:`set_events`, in ``idx`` order."""
        return [EventRecord(*r) for r in self._children(episode_id, "sim_events", _EVENT_COLUMNS)]

    def exchanges(
        self, episode_id: str, party: Party | None = None
    ) -> builtins.list[ExchangeRecord]:
        """Everything sent to a participant and its reply, in ``idx`` order; one party's only
        when ``party`` is given (what the assistant was shown, for a boundary audit)."""
        if party is None:
            rows = self._children(episode_id, "sim_exchanges", _EXCHANGE_COLUMNS)
            return [ExchangeRecord(*r) for r in rows]
        one_of(PARTIES, party, "party", EpisodeError)
        eid = self._resolve(episode_id)
        rows = self._db.execute(
            f"SELECT {_EXCHANGE_COLUMNS} FROM sim_exchanges WHERE episode_id = ? AND party = ? "
            "ORDER BY idx",
            [eid, party],
        ).fetchall()
        return [ExchangeRecord(*r) for r in rows]

    def call_totals(self, episode_id: str) -> CallTotals:
        """What the episode's model calls cost and how their replies came out (every party)."""
        eid = self._resolve(episode_id)
        return call_totals(self._db, [eid]).get(eid, CallTotals())

    def call_totals_by_episode(
        self, episode_ids: Sequence[str] | None = None
    ) -> dict[str, CallTotals]:
        """:meth:`call_totals` of many episodes by full id (None: every episode) in one query;
        an episode no model answered is left out."""
        return call_totals(self._db, episode_ids)

    def snapshot_at_or_before(self, episode_id: str, tick: int) -> tuple[int, str] | None:
        """The latest snapshot at or before ``tick`` (where a fork or a scrub resumes from)."""
        eid = self._resolve(episode_id)
        row = self._db.execute(
            "SELECT tick, snapshot_json FROM sim_snapshots WHERE episode_id = ? AND tick <= ? "
            "ORDER BY tick DESC LIMIT 1",
            [eid, tick],
        ).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def set_beliefs(self, episode_id: str, beliefs: Sequence[tuple[int, str]]) -> None:
        """Store the agent's believed scene graphs ``(tick, graph json)`` (replacing any)."""
        rows = []
        for k, (tick, text) in enumerate(beliefs):
            if not isinstance(tick, int) or isinstance(tick, bool) or tick < 0:
                raise EpisodeError(f"beliefs[{k}].tick: expected a tick >= 0, got {tick!r}")
            check_json(text, f"beliefs[{k}].graph_json")
            rows.append((tick, text))
        check_unique([r[0] for r in rows], "beliefs", "tick")
        with write(self._db):
            eid = self._resolve(episode_id)
            self._db.execute("DELETE FROM sim_beliefs WHERE episode_id = ?", [eid])
            self._db.conn.executemany(
                "INSERT INTO sim_beliefs (episode_id, tick, graph_json) VALUES (?, ?, ?)",
                [(eid, *r) for r in rows],
            )

    def beliefs(self, episode_id: str) -> builtins.list[tuple[int, str]]:
        """The agent's believed scene graphs by tick (empty when it said none)."""
        eid = self._resolve(episode_id)
        rows = self._db.execute(
            "SELECT tick, graph_json FROM sim_beliefs WHERE episode_id = ? ORDER BY tick", [eid]
        ).fetchall()
        return [(int(r[0]), str(r[1])) for r in rows]

    def snapshots(self, episode_id: str) -> builtins.list[tuple[int, str]]:
        """Every stored snapshot ``(tick, json)``, by tick (a scrubber loads them once)."""
        eid = self._resolve(episode_id)
        rows = self._db.execute(
            "SELECT tick, snapshot_json FROM sim_snapshots WHERE episode_id = ? ORDER BY tick",
            [eid],
        ).fetchall()
        return [(int(r[0]), str(r[1])) for r in rows]

    # ---- helpers -------------------------------------------------------------------------
    def _resolve(self, episode_id: str, *, field: str = "episode id") -> str:
        """The full id for an id or a unique prefix of at least :data:`MIN_PREFIX` characters."""
        if not isinstance(episode_id, str) or not episode_id:
            raise EpisodeNotFoundError(f"{field}: expected an episode id, got {episode_id!r}")
        db = self._db
        if db.execute("SELECT 1 FROM sim_episodes WHERE id = ?", [episode_id]).fetchone():
            return episode_id
        prefix = episode_id.lower()
        if len(prefix) < MIN_PREFIX:
            raise EpisodeNotFoundError(
                f"{field}: no episode {episode_id!r} (a shortened id needs at least "
                f"{MIN_PREFIX} characters)"
            )
        rows = ids_with_prefix(db, "sim_episodes", prefix)
        if not rows:
            raise EpisodeNotFoundError(f"{field}: no episode {episode_id!r} in this project")
        if len(rows) > 1:
            more = ", …" if len(rows) > 2 else ""
            raise AmbiguousEpisodeError(
                f"{field}: {episode_id!r} starts more than one episode id "
                f"({rows[0][0]}, {rows[1][0]}{more}); give more characters"
            )
        return str(rows[0][0])

    def _resolve_running(self, episode_id: str, doing: str) -> str:
        eid = self._resolve(episode_id)
        (status,) = self._db.execute(
            "SELECT status FROM sim_episodes WHERE id = ?", [eid]
        ).fetchone()
        if status != EpisodeStatus.RUNNING.value:
            raise EpisodeError(f"episode {eid} is {status}; only a running episode can {doing}")
        return eid

    def _children(self, episode_id: str, table: str, columns: str) -> builtins.list[Any]:
        eid = self._resolve(episode_id)
        return self._db.execute(
            f"SELECT {columns} FROM {table} WHERE episode_id = ? ORDER BY idx", [eid]
        ).fetchall()


def _dump(value: Mapping[str, Any], field: str) -> str:
    try:
        return json.dumps(dict(value), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise EpisodeError(f"{field}: not JSON-serialisable ({err})") from None
