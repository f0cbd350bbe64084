"""The project schema's migrations from v7 on (``storage._schema`` holds v1–v6 and the ordered
list). Append a function here to add a version, and add it to :data:`LATER`; never edit one.

(v7): interaction-quality verdicts (sim_quality_verdicts), and judge_runs.episode_id for the
runs that made them. (v8): agent beliefs per tick (sim_beliefs). (v9): a person's note on an
episode (sim_episode_notes). (v10): a lab's own arms (arm_profiles), each version immutable.
(v11): continuity scans. (v12): where a job ran. (v13): episodes that end ``failed`` and why any
episode ended as it did; the tokens, cost and reply outcome of each model exchange.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlite_utils

if TYPE_CHECKING:
    from storage._db import Migration


_V7_SQL = [
    # One interaction-quality verdict: a judge's pass / fail / not-applicable on one rubric item
    # of one round (a spoken assistant response and what followed, IVG spec §4.3). The key is
    # the cache key of spec §8.23: a verdict stored for (episode, judge, prompt version, round)
    # is never asked for again, so re-aggregation needs no model call. ``turn_idx`` is the
    # sim_turns row of the graded response (drill-down); ``run_id`` the audited run whose
    # recorded call produced it.
    """CREATE TABLE sim_quality_verdicts (
        episode_id TEXT NOT NULL REFERENCES sim_episodes(id) ON DELETE CASCADE,
        judge_profile TEXT NOT NULL,
        prompt_version TEXT NOT NULL,
        round INTEGER NOT NULL,
        item TEXT NOT NULL,
        verdict TEXT NOT NULL CHECK (verdict IN ('P', 'F', 'NA')),
        reason TEXT NOT NULL DEFAULT '',
        turn_idx INTEGER NOT NULL,
        run_id INTEGER REFERENCES judge_runs(id) ON DELETE SET NULL,
        created TEXT NOT NULL,
        PRIMARY KEY (episode_id, judge_profile, prompt_version, round, item)
    )""",
    # the run that made a verdict: a judge.quality run judges an episode, not a video
    """ALTER TABLE judge_runs ADD COLUMN episode_id TEXT
        REFERENCES sim_episodes(id) ON DELETE SET NULL""",
    # partial: it also serves the SET NULL when an episode is deleted
    """CREATE INDEX judge_runs_episode ON judge_runs (episode_id)
        WHERE episode_id IS NOT NULL""",
]


def _v7(db: sqlite_utils.Database) -> None:
    """Interaction-quality verdicts, cached per (episode, judge, prompt version, round).

    Raw DDL like v4 and v6, for the CHECK constraint and the cascade from ``sim_episodes``.
    """
    for statement in _V7_SQL:
        db.execute(statement)


_V8_SQL = [
    # What the agent believed the scene was, at the ticks it said so (a graph in the scene-graph
    # format); the episode view draws it against the world's graph at the same tick.
    """CREATE TABLE sim_beliefs (
        episode_id TEXT NOT NULL REFERENCES sim_episodes(id) ON DELETE CASCADE,
        tick INTEGER NOT NULL,
        graph_json TEXT NOT NULL,
        PRIMARY KEY (episode_id, tick)
    )""",
]


def _v8(db: sqlite_utils.Database) -> None:
    """Agent beliefs per tick (an imported bundle's, or an agent that keeps a belief store)."""
    for statement in _V8_SQL:
        db.execute(statement)


_V9_SQL = [
    # A person's note on an episode, beside its failure attribution. Notes and attribution edits
    # are undoable changes; the history addresses rows by this single-column key. An empty
    # note is no note: clearing one deletes its row.
    """CREATE TABLE sim_episode_notes (
        episode_id TEXT PRIMARY KEY REFERENCES sim_episodes(id) ON DELETE CASCADE,
        note TEXT NOT NULL CHECK (note <> ''),
        updated TEXT NOT NULL
    )""",
]


def _v9(db: sqlite_utils.Database) -> None:
    """Episode notes, written by people in the episode browser or ``workbench episode note``."""
    for statement in _V9_SQL:
        db.execute(statement)


_V10_SQL = [
    # One row per version of a lab's arm. The files live in arms/<digest>/ (digest over every
    # copied file: the MJCF and what it references); the check's measurements and its whole
    # report are kept with the names, so `arm show` needs no MuJoCo. Episodes name a version
    # ("ur-lab@2") in their config; a version is never edited (the trigger), only added.
    """CREATE TABLE arm_profiles (
        name TEXT NOT NULL CHECK (name <> ''),
        version INTEGER NOT NULL CHECK (version >= 1),
        digest TEXT NOT NULL CHECK (length(digest) = 64),
        mjcf TEXT NOT NULL,
        files_json TEXT NOT NULL,
        source TEXT NOT NULL,
        ee_site TEXT NOT NULL,
        arm_joints_json TEXT NOT NULL,
        gripper_json TEXT NOT NULL,
        home_json TEXT NOT NULL,
        limits_json TEXT NOT NULL,
        gripper_range_json TEXT NOT NULL,
        report_json TEXT NOT NULL,
        created TEXT NOT NULL,
        PRIMARY KEY (name, version)
    )""",
    """CREATE TRIGGER arm_profiles_immutable BEFORE UPDATE ON arm_profiles
    BEGIN
        SELECT RAISE(ABORT, 'an arm profile version is never changed; add a new version');
    END""",
]


def _v10(db: sqlite_utils.Database) -> None:
    """Arm profiles (``workbench arm add``), written by storage._arm_profiles."""
    for statement in _V10_SQL:
        db.execute(statement)


_V11_SQL = [
    # One continuity scan per video file (storage.media.continuity): the candidate windows and
    # every frame's score as JSON, under the scan version (signals + thresholds digest) that
    # made them; a scan of another version is stale and is made again.
    """CREATE TABLE continuity_scans (
        sha256 TEXT PRIMARY KEY REFERENCES media(sha256) ON DELETE CASCADE,
        version TEXT NOT NULL,
        windows INTEGER NOT NULL CHECK (windows >= 0),
        data TEXT NOT NULL,
        scanned_at TEXT NOT NULL
    )""",
]


def _v11(db: sqlite_utils.Database) -> None:
    """Continuity scans, written by storage._continuity_scans."""
    for statement in _V11_SQL:
        db.execute(statement)


def _v12(db: sqlite_utils.Database) -> None:
    """Where each job ran: the worker's host, or the Ray node of its task (``--ray``)."""
    db.execute("ALTER TABLE jobs ADD COLUMN ran_on TEXT")


#: the v4 CHECK on sim_episodes.status, and the same list with ``failed`` (v13)
_V4_STATUSES = "'aborted', 'budget_exhausted', 'cancelled'))"
_V13_STATUSES = "'aborted', 'budget_exhausted', 'cancelled', 'failed'))"

_V13_SQL = [
    # Why an episode ended as it did, in words: the error of a failed run, what an agent that
    # gave up said, what interrupted a cancelled one (NULL: a normal end, or recorded before).
    "ALTER TABLE sim_episodes ADD COLUMN end_reason TEXT",
    # What each model exchange cost (every request of one logical call summed) and how its
    # reply came out: valid at once, repaired (valid after a re-ask), silenced (still invalid
    # when the repair budget ran out) or failed (the call raised). NULL for an exchange with
    # no model behind it (an external agent's messages, an offline participant).
    "ALTER TABLE sim_exchanges ADD COLUMN tokens_in INTEGER",
    "ALTER TABLE sim_exchanges ADD COLUMN tokens_out INTEGER",
    "ALTER TABLE sim_exchanges ADD COLUMN cost_usd REAL",
    """ALTER TABLE sim_exchanges ADD COLUMN outcome TEXT CHECK (outcome IS NULL OR outcome IN
        ('valid', 'repaired', 'silenced', 'failed'))""",
    # covers the per-episode sums (storage._call_totals): the large request and reply texts of
    # the rows are never read for them
    """CREATE INDEX idx_sim_exchanges_cost ON sim_exchanges
        (episode_id, outcome, tokens_in, tokens_out, cost_usd)""",
]


def _v13(db: sqlite_utils.Database) -> None:
    """Episodes that end ``failed`` (a run that raised: its ticks and exchanges so far are kept)
    with an end reason, and per-exchange tokens, cost and reply outcome.

    SQLite cannot alter a CHECK constraint, and rebuilding ``sim_episodes`` under foreign keys
    would cascade its deletion into every trace. The CHECK only gains a value (every stored row
    still satisfies it), which is the change SQLite documents as safe to make by editing the
    schema text in place (https://sqlite.org/lang_altertable.html#otheralter): within this
    migration's transaction, with the schema version bumped so every connection re-reads it.
    """
    conn = db.conn
    (sql,) = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'sim_episodes'"
    ).fetchone()
    if sql.count(_V4_STATUSES) != 1:
        raise RuntimeError("sim_episodes: its status CHECK is not the one v4 wrote; not migrated")
    (version,) = conn.execute("PRAGMA schema_version").fetchone()
    conn.execute("PRAGMA writable_schema = ON")
    try:
        conn.execute(
            "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'sim_episodes'",
            [sql.replace(_V4_STATUSES, _V13_STATUSES)],
        )
        conn.execute(f"PRAGMA schema_version = {int(version) + 1}")
    finally:
        conn.execute("PRAGMA writable_schema = OFF")
    for statement in _V13_SQL:
        db.execute(statement)


LATER: list[Migration] = [_v7, _v8, _v9, _v10, _v11, _v12, _v13]
