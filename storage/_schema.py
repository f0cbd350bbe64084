"""The project schema as ordered migrations. Append a function to add a version; never edit one.

Tables (v1): meta, media, video_index, cases, videos, raters, subgoal_plans, subgoals, ratings,
gate_decisions, evidence_marks, history. (v2): jobs, model_profiles, judge_runs, judge_calls,
judge_subgoals, judge_answers, judge_frames, judge_inspections. (v3): studies, study_videos,
assignments, calibration_references, calibration_results, bundle_imports. (v4): sim_episodes,
sim_ticks, sim_actions, sim_anomalies, sim_conditions, sim_metrics, sim_artifacts, sim_snapshots.
(v5): the queue's retry settings per job, and indexes to sum a job's spend from its calls.
(v6): interactive episodes (sim_turns, sim_events, sim_exchanges) and episode batches
(sim_batches, sim_batch_cells, sim_attributions). v7 onward: :mod:`storage._schema_later`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlite_utils

from storage._schema_later import LATER

if TYPE_CHECKING:
    from storage._db import Migration


def _v1(db: sqlite_utils.Database) -> None:
    db.table("meta").create({"key": str, "value": str}, pk="key")
    db.table("media").create(
        {
            "sha256": str,
            "kind": str,  # video | image
            "rel_path": str,  # under media/
            "bytes": int,
            "original_name": str,
            "imported_at": str,
        },
        pk="sha256",
        not_null={"kind", "rel_path", "bytes"},
    )
    db.table("video_index").create(
        {
            "sha256": str,
            "frame_count": int,
            "width": int,
            "height": int,
            "fps": float,
            "duration_s": float,
            "data": str,  # VideoIndex.to_json(): every frame's pts, keyframes, time base
        },
        pk="sha256",
        foreign_keys=[("sha256", "media", "sha256")],
    )
    db.table("cases").create(
        {
            "id": str,
            "goal": str,
            "domain": str,
            "clutter": str,
            "initial_image": str,
            "extra": str,  # JSON: optional Table 5 fields
            "imported_at": str,
        },
        pk="id",
        not_null={"goal", "domain", "clutter", "initial_image"},
        foreign_keys=[("initial_image", "media", "sha256")],
    )
    db.table("videos").create(
        {
            "id": str,  # anonymous id shown to raters
            "case_id": str,
            "media": str,
            "role": str,  # generated | human-success | human-failure
            "model": str,
            "seed": int,
            "source_name": str,  # file name in the case folder; never shown to raters
            "truth": str,  # JSON: demo ground truth, never shown to raters
            "imported_at": str,
        },
        pk="id",
        not_null={"case_id", "media", "role"},
        foreign_keys=[("case_id", "cases", "id"), ("media", "media", "sha256")],
    )
    db.table("videos").create_index(["case_id", "media"], unique=True)
    db.table("raters").create({"id": str, "name": str, "created_at": str}, pk="id")
    db.table("subgoal_plans").create(
        {"id": int, "case_id": str, "rater_id": str, "created_at": str},
        pk="id",
        foreign_keys=[("case_id", "cases", "id"), ("rater_id", "raters", "id")],
    )
    db.table("subgoal_plans").create_index(["case_id", "rater_id"], unique=True)
    db.table("subgoals").create(
        {
            "id": int,
            "plan_id": int,
            "position": int,
            "source": str,
            "target": str,
            "action": str,
            "end_state": str,
            "requires": str,  # JSON list of earlier subgoal ids
            "reason": str,
            "enabling": int,
        },
        pk="id",
        not_null={"plan_id", "position", "source", "action"},
        foreign_keys=[("plan_id", "subgoal_plans", "id")],
    )
    db.table("ratings").create(
        {
            "id": int,
            "video_id": str,
            "rater_id": str,
            "holistic_task": float,
            "holistic_physics": float,
            "created_at": str,
            "updated_at": str,
        },
        pk="id",
        foreign_keys=[("video_id", "videos", "id"), ("rater_id", "raters", "id")],
    )
    db.table("ratings").create_index(["video_id", "rater_id"], unique=True)
    db.table("gate_decisions").create(
        {
            "id": int,
            "rating_id": int,
            "subgoal_id": int,
            "gate": str,
            "answer": str,
            "note": str,
            "updated_at": str,
        },
        pk="id",
        not_null={"rating_id", "subgoal_id", "gate", "answer"},
        foreign_keys=[("rating_id", "ratings", "id"), ("subgoal_id", "subgoals", "id")],
    )
    db.table("gate_decisions").create_index(["rating_id", "subgoal_id", "gate"], unique=True)
    db.table("evidence_marks").create(
        {
            "id": int,
            "rating_id": int,
            "subgoal_id": int,
            "gate": str,
            "start_frame": int,
            "end_frame": int,
            "box": str,  # JSON [x, y, w, h] in 0..1 of the displayed frame, or NULL
            "note": str,
            "created_at": str,
        },
        pk="id",
        not_null={"rating_id", "start_frame", "end_frame"},
        foreign_keys=[("rating_id", "ratings", "id"), ("subgoal_id", "subgoals", "id")],
    )
    db.table("history").create(
        {
            "id": int,
            "scope": str,  # whose undo stack (the rater id)
            "label": str,  # "Answer T2 for S1", shown in the Edit menu
            "changes": str,  # JSON list of {table, id, before, after} row images
            "state": str,  # done | undone
            "created_at": str,
        },
        pk="id",
        not_null={"scope", "label", "changes", "state"},
    )
    db.table("history").create_index(["scope", "state", "id"])


def _v2(db: sqlite_utils.Database) -> None:
    """Background jobs (leases, heartbeats) and audited judge runs."""
    db.table("jobs").create(
        {
            "id": int,
            "batch": str,  # groups jobs launched together (cancel/retry per batch)
            "kind": str,  # registered job function, e.g. judge.video
            "payload": str,  # JSON
            "status": str,  # queued | running | done | failed | cancelled
            "priority": int,  # lower runs first
            "lease_owner": str,  # worker id while running
            "lease_expires": float,  # unix time; an expired lease puts the job back in the queue
            "heartbeat_at": float,
            "attempts": int,
            "max_attempts": int,
            "not_before": float,  # unix time: retry backoff
            "progress": float,  # 0..1
            "progress_note": str,
            "error": str,  # why it failed (or the last retryable error)
            "result_ref": str,  # e.g. judge_runs:12
            "cost_usd": float,
            "created_at": str,
            "started_at": str,
            "finished_at": str,
        },
        pk="id",
        not_null={"kind", "payload", "status"},
        defaults={"priority": 100, "attempts": 0, "max_attempts": 3, "not_before": 0.0,
                  "progress": 0.0, "cost_usd": 0.0},
    )  # fmt: skip
    db.table("jobs").create_index(["status", "priority", "id"])
    db.table("jobs").create_index(["batch"])
    db.table("model_profiles").create(
        {"name": str, "config": str, "updated_at": str},  # config: JSON, never an API key
        pk="name",
    )
    db.table("judge_runs").create(
        {
            "id": int,
            "job_id": int,
            "video_id": str,
            "profile": str,
            "model": str,
            "mode": str,  # gated | independent | simple_vqa
            "prompt_version": str,
            "config": str,  # JSON: the full run configuration (reproducibility)
            "status": str,  # running | done | failed | abandoned
            "error": str,
            "t100": float,
            "p100": float,
            "s": float,
            "coverage": float,
            "scores": str,  # JSON: every rule's scores (sequential, independent, ...)
            "cost_usd": float,
            "tokens_in": int,
            "tokens_out": int,
            "created_at": str,
            "finished_at": str,
        },
        pk="id",
        foreign_keys=[("job_id", "jobs", "id"), ("video_id", "videos", "id")],
    )
    db.table("judge_runs").create_index(["video_id", "status"])
    db.table("judge_calls").create(
        {
            "id": int,
            "run_id": int,
            "seq": int,
            "stage": str,  # plan_task | plan_physics | review | gate:T1 | inspect | vqa ...
            "prompt_version": str,
            "request": str,  # JSON: messages (images as evidence ids), tools
            "reply": str,  # raw reply text/JSON as received
            "ok": int,
            "error": str,
            "latency_s": float,
            "tokens_in": int,
            "tokens_out": int,
            "cost_usd": float,
            "created_at": str,
        },
        pk="id",
        foreign_keys=[("run_id", "judge_runs", "id")],
    )
    db.table("judge_calls").create_index(["run_id", "seq"])
    db.table("judge_subgoals").create(
        {
            "id": int,
            "run_id": int,
            "axis": str,  # task | physics
            "sid": str,  # S1..
            "source": str,
            "target": str,
            "action": str,
            "end_state": str,
            "requires": str,  # JSON list of sids
            "reason": str,
        },
        pk="id",
        foreign_keys=[("run_id", "judge_runs", "id")],
    )
    db.table("judge_answers").create(
        {
            "id": int,
            "run_id": int,
            "axis": str,
            "gate": str,
            "sid": str,
            "answer": str,  # yes | no | NA
            "unresolved": int,
            "evidence_ids": str,  # JSON list
            "timestamps_s": str,  # JSON list
            "note": str,
        },
        pk="id",
        foreign_keys=[("run_id", "judge_runs", "id")],
    )
    db.table("judge_frames").create(
        {
            "id": int,
            "run_id": int,
            "evidence_id": str,  # e.g. T03, P17, I2-05
            "frame_index": int,
            "time_s": float,
            "roi": str,  # JSON [x, y, w, h] in 0..1, or NULL
            "origin": str,  # uniform_task | uniform_physics | inspect:N
        },
        pk="id",
        foreign_keys=[("run_id", "judge_runs", "id")],
    )
    db.table("judge_inspections").create(
        {
            "id": int,
            "run_id": int,
            "seq": int,
            "axis": str,
            "gate": str,
            "start_s": float,
            "end_s": float,
            "roi": str,
            "question": str,
            "expected_evidence": str,
            "n_frames": int,
            "evidence_ids": str,  # JSON list of the frames it returned
        },
        pk="id",
        foreign_keys=[("run_id", "judge_runs", "id")],
    )


def _v3(db: sqlite_utils.Database) -> None:
    """Annotation studies: panels, blind assignments, calibration, bundle imports."""
    db.table("studies").create(
        {
            "id": str,
            "name": str,
            "config": str,  # JSON: raters per video, seed, human-success rule, ...
            "created_at": str,
        },
        pk="id",
    )
    db.table("study_videos").create(
        {"study_id": str, "video_id": str, "calibration": int},  # calibration: 1 = training set
        pk=("study_id", "video_id"),
        foreign_keys=[("study_id", "studies", "id"), ("video_id", "videos", "id")],
    )
    db.table("assignments").create(
        {
            "id": int,
            "study_id": str,
            "rater_id": str,
            "video_id": str,
            "position": int,  # the rater's own random order
            "status": str,  # assigned | exported | returned
            "updated_at": str,
        },
        pk="id",
        foreign_keys=[
            ("study_id", "studies", "id"),
            ("rater_id", "raters", "id"),
            ("video_id", "videos", "id"),
        ],
    )
    db.table("assignments").create_index(["study_id", "rater_id", "video_id"], unique=True)
    db.table("calibration_references").create(
        {
            "study_id": str,
            "video_id": str,
            "reference": str,  # JSON: reference task/physics levels per subgoal, notes
            "notes": str,
        },
        pk=("study_id", "video_id"),
        foreign_keys=[("study_id", "studies", "id"), ("video_id", "videos", "id")],
    )
    db.table("calibration_results").create(
        {
            "study_id": str,
            "rater_id": str,
            "passed": int,
            "details": str,  # JSON: per video, the rater's answers against the reference
            "completed_at": str,
        },
        pk=("study_id", "rater_id"),
        foreign_keys=[("study_id", "studies", "id"), ("rater_id", "raters", "id")],
    )
    db.table("bundle_imports").create(
        {
            "sha256": str,  # of the bundle file: importing it again changes nothing
            "study_id": str,
            "rater_id": str,
            "kind": str,  # assignment | work
            "summary": str,  # JSON
            "imported_at": str,
        },
        pk="sha256",
    )


_V4_SQL = [
    # One row per simulation episode. parent_id/fork_tick: the episode this one was forked from
    # (a deleted parent leaves its forks standing, unlinked). reference = 1 for a scenario's
    # reference solution run.
    """CREATE TABLE sim_episodes (
        id TEXT PRIMARY KEY,
        scenario TEXT NOT NULL,
        scenario_sha TEXT NOT NULL,
        family TEXT NOT NULL,
        mode TEXT NOT NULL CHECK (mode IN ('physics', 'symbolic')),
        agent TEXT NOT NULL,
        seed INTEGER NOT NULL,
        delta REAL NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'execution_blocked',
            'parse_failure', 'empty_plan', 'aborted', 'budget_exhausted', 'cancelled')),
        started TEXT NOT NULL,
        ended TEXT,
        ticks INTEGER NOT NULL DEFAULT 0,
        t_ref INTEGER,
        contract_json TEXT NOT NULL,
        contract_hash TEXT NOT NULL,
        config_json TEXT NOT NULL DEFAULT '{}',
        parent_id TEXT REFERENCES sim_episodes(id) ON DELETE SET NULL,
        fork_tick INTEGER,
        reference INTEGER NOT NULL DEFAULT 0
    )""",
    "CREATE INDEX idx_sim_episodes_scenario ON sim_episodes (scenario, started)",
    "CREATE INDEX idx_sim_episodes_parent ON sim_episodes (parent_id)",
    # Child tables: every primary key (or unique index) starts with episode_id, which serves as
    # the episode_id index (lookups and ON DELETE CASCADE) without a second copy.
    """CREATE TABLE sim_ticks (
        episode_id TEXT NOT NULL REFERENCES sim_episodes(id) ON DELETE CASCADE,
        tick INTEGER NOT NULL,
        state_hash TEXT NOT NULL,
        diff_json TEXT NOT NULL DEFAULT '{}',
        controller_json TEXT NOT NULL DEFAULT '{}',
        graph_json TEXT,
        PRIMARY KEY (episode_id, tick)
    )""",
    """CREATE TABLE sim_actions (
        episode_id TEXT NOT NULL REFERENCES sim_episodes(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        tick INTEGER NOT NULL,
        source TEXT NOT NULL,
        text TEXT NOT NULL,
        action_json TEXT NOT NULL,
        accepted INTEGER NOT NULL,
        failed_json TEXT NOT NULL DEFAULT '[]',
        grounded_json TEXT,
        outcome TEXT,
        finished_tick INTEGER,
        PRIMARY KEY (episode_id, idx)
    )""",
    """CREATE TABLE sim_anomalies (
        episode_id TEXT NOT NULL REFERENCES sim_episodes(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        kind TEXT NOT NULL,
        obj TEXT NOT NULL,
        params_json TEXT NOT NULL,
        tick INTEGER NOT NULL,
        trigger_json TEXT NOT NULL DEFAULT '{}',
        classification TEXT,
        PRIMARY KEY (episode_id, idx)
    )""",
    """CREATE TABLE sim_conditions (
        episode_id TEXT NOT NULL REFERENCES sim_episodes(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        predicate_json TEXT NOT NULL,
        text TEXT NOT NULL,
        value TEXT NOT NULL CHECK (value IN ('T', 'F', 'U')),
        witness_tick INTEGER,
        PRIMARY KEY (episode_id, idx)
    )""",
    """CREATE TABLE sim_metrics (
        episode_id TEXT NOT NULL REFERENCES sim_episodes(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        value REAL NOT NULL,
        PRIMARY KEY (episode_id, name)
    )""",
    # camera is '' for a file not tied to a camera, so the unique index sees no NULLs.
    """CREATE TABLE sim_artifacts (
        id INTEGER PRIMARY KEY,
        episode_id TEXT NOT NULL REFERENCES sim_episodes(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        camera TEXT NOT NULL DEFAULT '',
        media_sha TEXT NOT NULL REFERENCES media(sha256),
        fps REAL,
        frames INTEGER
    )""",
    "CREATE UNIQUE INDEX idx_sim_artifacts_key ON sim_artifacts (episode_id, kind, camera)",
    """CREATE TABLE sim_snapshots (
        episode_id TEXT NOT NULL REFERENCES sim_episodes(id) ON DELETE CASCADE,
        tick INTEGER NOT NULL,
        snapshot_json TEXT NOT NULL,
        PRIMARY KEY (episode_id, tick)
    )""",
]


def _v4(db: sqlite_utils.Database) -> None:
    """Simulation episodes and their traces.

    Raw DDL, unlike the earlier versions: sqlite-utils cannot declare ON DELETE CASCADE or CHECK
    constraints, and deleting an episode must take its (possibly 10,000-tick) trace with it.
    """
    for statement in _V4_SQL:
        db.execute(statement)


_V5_SQL = [
    # Retry policy is the queue's, per job (``workbench judge run --retry-backoff …``).
    "ALTER TABLE jobs ADD COLUMN retry_backoff_s REAL NOT NULL DEFAULT 20.0",
    "ALTER TABLE jobs ADD COLUMN rate_limit_backoff_s REAL NOT NULL DEFAULT 60.0",
    # What a job spent is what its recorded calls cost, over every attempt (a dead attempt's
    # calls included): storage.Jobs sums them per job through these two indexes (the second
    # covers the sum, so the calls' request and reply text is never read for it).
    "CREATE INDEX judge_runs_job ON judge_runs (job_id)",
    "CREATE INDEX judge_calls_cost ON judge_calls (run_id, cost_usd, tokens_in, tokens_out)",
]


def _v5(db: sqlite_utils.Database) -> None:
    """Queue settings per job and spend counted from recorded calls."""
    for statement in _V5_SQL:
        db.execute(statement)


_V6_SQL = [
    # The public conversation, one row per utterance, plus the assistant's error flags: a
    # silent flagged reply is an assistant row with text ''. Flags are evaluation data only;
    # the harness never shows them to the user.
    """CREATE TABLE sim_turns (
        episode_id TEXT NOT NULL REFERENCES sim_episodes(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        tick INTEGER NOT NULL,
        speaker TEXT NOT NULL CHECK (speaker IN ('user', 'assistant')),
        text TEXT NOT NULL,
        move TEXT NOT NULL DEFAULT '',
        flag TEXT,
        flag_target TEXT,
        meta_json TEXT NOT NULL DEFAULT '{}',
        PRIMARY KEY (episode_id, idx)
    )""",
    # the transcript follows the playhead: "turns up to tick t" is a range on this index
    "CREATE INDEX idx_sim_turns_tick ON sim_turns (episode_id, tick)",
    # Scheduled out-of-plan events with the ticks the metrics read (trigger, commit, accept,
    # resolve). An event never triggered is stored too, as pending / not_reached.
    """CREATE TABLE sim_events (
        episode_id TEXT NOT NULL REFERENCES sim_episodes(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        event_id TEXT NOT NULL,
        category TEXT NOT NULL CHECK (category IN ('error', 'question', 'request',
            'plan_change')),
        type TEXT NOT NULL DEFAULT '',
        spec_json TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'active', 'resolved')),
        trigger_tick INTEGER,
        commit_tick INTEGER,
        resolve_tick INTEGER,
        resolution TEXT CHECK (resolution IS NULL OR resolution IN ('accepted', 'completed',
            'cancelled', 'timeout', 'episode_end', 'not_reached', 'asked', 'announced',
            'window_closed')),
        accept_tick INTEGER,
        data_json TEXT NOT NULL DEFAULT '{}',
        PRIMARY KEY (episode_id, idx)
    )""",
    "CREATE UNIQUE INDEX idx_sim_events_event ON sim_events (episode_id, event_id)",
    # Every view or prompt actually sent to a participant and what came back: the audit of the
    # information boundary. received_json is NULL while a request is in flight (or never
    # answered); due_tick is when a reply is delivered under the latency model.
    """CREATE TABLE sim_exchanges (
        episode_id TEXT NOT NULL REFERENCES sim_episodes(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        tick INTEGER NOT NULL,
        party TEXT NOT NULL CHECK (party IN ('assistant', 'user', 'agent')),
        sent_json TEXT NOT NULL,
        received_json TEXT,
        latency_s REAL,
        due_tick INTEGER,
        PRIMARY KEY (episode_id, idx)
    )""",
    # one party's exchanges without reading the (large) rows of the others
    "CREATE INDEX idx_sim_exchanges_party ON sim_exchanges (episode_id, party, idx)",
    # A batch: its manifest as run, and how many cells (scenario x persona x assistant x
    # timing combinations) it has; the planned episodes are its cells' runs.
    """CREATE TABLE sim_batches (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        manifest_json TEXT NOT NULL,
        created TEXT NOT NULL,
        cells INTEGER NOT NULL
    )""",
    "CREATE INDEX idx_sim_batches_created ON sim_batches (created)",
    # One row per planned episode. The primary key and the unique index on episode_id make
    # "every episode stored exactly once" the database's guarantee, not the workers': a
    # re-run job that stores a second episode for its cell fails and rolls its whole
    # transaction back. A deleted episode or purged job frees its cell (SET NULL).
    """CREATE TABLE sim_batch_cells (
        batch_id TEXT NOT NULL REFERENCES sim_batches(id) ON DELETE CASCADE,
        cell INTEGER NOT NULL,
        run INTEGER NOT NULL,
        scenario TEXT NOT NULL,
        persona TEXT NOT NULL,
        assistant TEXT NOT NULL,
        timing TEXT NOT NULL,
        seed INTEGER NOT NULL,
        job_id INTEGER REFERENCES jobs(id) ON DELETE SET NULL,
        episode_id TEXT REFERENCES sim_episodes(id) ON DELETE SET NULL,
        PRIMARY KEY (batch_id, cell, run)
    )""",
    # partial indexes: they also serve the foreign-key actions (x = ? implies x IS NOT NULL)
    """CREATE UNIQUE INDEX idx_sim_batch_cells_episode ON sim_batch_cells (episode_id)
        WHERE episode_id IS NOT NULL""",
    "CREATE INDEX idx_sim_batch_cells_job ON sim_batch_cells (job_id) WHERE job_id IS NOT NULL",
    # Who an episode's failure is attributed to ('none': it did not fail). A proposal made
    # from the trace never overwrites a person's edit.
    """CREATE TABLE sim_attributions (
        episode_id TEXT PRIMARY KEY REFERENCES sim_episodes(id) ON DELETE CASCADE,
        party TEXT NOT NULL CHECK (party IN ('assistant', 'user', 'environment', 'none')),
        reason TEXT NOT NULL DEFAULT '',
        source TEXT NOT NULL CHECK (source IN ('proposed', 'edited')),
        updated TEXT NOT NULL
    )""",
]


def _v6(db: sqlite_utils.Database) -> None:
    """Interactive episodes (turns, events, exchanges) and batches of episodes.

    Raw DDL like v4, for the CHECK constraints and the cascades from ``sim_episodes``.
    """
    for statement in _V6_SQL:
        db.execute(statement)


MIGRATIONS: list[Migration] = [_v1, _v2, _v3, _v4, _v5, _v6, *LATER]
