"""Notice what reached the open project from elsewhere, and say which lists it concerns.

The Episodes list, the Jobs panel, the video list and Results each read the project and keep
what they read. An episode finished by a worker or a live run, a job queued by `workbench`, a
judge verdict or a merged rater's work lands through another SQLite connection, and would show
only after a restart. :class:`ProjectWatch` looks once a second, on the GUI thread:

- ``PRAGMA data_version`` on the window's own connection changes only when *another*
  connection committed, so an idle project costs one pragma per second and nothing else;
- when it moved (or someone calls :meth:`ProjectWatch.check_now`), one aggregate query per
  table family gives a fingerprint per area, and ``changed`` names the areas whose
  fingerprint differs: ``episodes``, ``jobs``, ``ratings`` (human ratings, gate answers,
  plans, judge runs: what scores and Results are made of) and ``videos`` (cases, videos).

Writes this window makes through its own connection do not move ``data_version``; the views
that made them re-read already, and any other in-window path can call ``check_now()``.

A busy or locked database (a checkpoint, a recovery, a long writer) is not an error here: the
check is skipped and tried again on the next tick. Nothing raises into Qt from a timer that
fires every second (any other SQLite error is logged once and retried the same way).
"""

from __future__ import annotations

import logging
import sqlite3

from PySide6.QtCore import QObject, QTimer, Signal

from storage import Project

log = logging.getLogger(__name__)

INTERVAL_MS = 1000
AREAS = ("episodes", "jobs", "ratings", "videos")

# One row of aggregates per query: cheap (a scan of one table each, only after another
# connection committed) and sensitive to what each list shows: a new or deleted row (count,
# max rowid), a finished episode (ended, running count), an edit (the newest updated stamp).
# A running episode's ticks are left out, so a live run refreshes the list when it starts and
# when it ends, not at every batch of ticks it stores.
FINGERPRINTS: dict[str, tuple[str, ...]] = {
    "episodes": (
        "SELECT count(*), max(rowid), max(ended), total(status = 'running'),"
        " total(CASE WHEN status = 'running' THEN 0 ELSE ticks END) FROM sim_episodes",
        "SELECT count(*), max(updated) FROM sim_attributions",
        "SELECT count(*), max(updated) FROM sim_episode_notes",
        "SELECT count(*), total(value) FROM sim_metrics",
    ),
    "jobs": (
        "SELECT count(*), max(id), max(started_at), max(finished_at), total(progress),"
        " total(length(progress_note)), total(cost_usd), total(attempts),"
        " total(status = 'queued'), total(status = 'running'), total(status = 'done'),"
        " total(status = 'failed'), total(status = 'cancelled') FROM jobs",
    ),
    "ratings": (
        "SELECT count(*), max(id), max(updated_at) FROM ratings",
        "SELECT count(*), max(id), max(updated_at) FROM gate_decisions",
        "SELECT count(*), max(id) FROM subgoals",
        "SELECT count(*), max(id), max(finished_at), total(status = 'done') FROM judge_runs",
        "SELECT max(id), total(state = 'undone') FROM history",
    ),
    "videos": (
        "SELECT count(*), max(rowid) FROM cases",
        "SELECT count(*), max(rowid) FROM videos",
    ),
}

Fingerprint = tuple[object, ...]


def _transient(err: sqlite3.OperationalError) -> bool:
    """Locked or busy: another connection holds the file for now; the next tick will do."""
    text = str(err).lower()
    return "locked" in text or "busy" in text


def fingerprints(conn: sqlite3.Connection) -> dict[str, Fingerprint]:
    """Every area's fingerprint, read through ``conn`` (raises what SQLite raises)."""
    out: dict[str, Fingerprint] = {}
    for area, queries in FINGERPRINTS.items():
        out[area] = tuple(tuple(conn.execute(q).fetchone()) for q in queries)
    return out


class ProjectWatch(QObject):
    """``changed(areas)`` (a ``frozenset`` of :data:`AREAS`) when another connection's commits
    changed what those areas show; follows one project at a time (:meth:`set_project`)."""

    changed = Signal(object)

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self.project: Project | None = None
        self._version: int | None = None  # data_version when the fingerprints were read
        self._prints: dict[str, Fingerprint] | None = None
        self.skipped = 0  # checks put off by a locked, busy or failing database
        self.last_error: str | None = None  # the last failure that was not locked or busy
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)

    def set_project(self, project: Project | None) -> None:
        """Follow ``project`` (None: stop); what it holds now is the baseline, not a change."""
        if project is self.project:
            return
        self.timer.stop()
        self.project = project
        self._version = None
        self._prints = None
        if project is not None:
            self._read(project)  # the baseline; a locked file leaves it to the first tick
            self.timer.start()

    def stop(self) -> None:
        self.set_project(None)

    def check_now(self, *, force: bool = True) -> frozenset[str]:
        """Look now and emit what changed. ``force`` reads the fingerprints even if no other
        connection committed (this window's own writes); returns the areas emitted."""
        project = self.project
        if project is None:
            return frozenset()
        before = self._prints
        if not self._read(project, force=force) or before is None or self._prints is None:
            return frozenset()
        now = self._prints
        areas = frozenset(a for a in AREAS if before.get(a) != now.get(a))
        if areas:
            self.changed.emit(areas)
        return areas

    def _tick(self) -> None:
        self.check_now(force=False)

    def _read(self, project: Project, *, force: bool = True) -> bool:
        """Refresh the fingerprints if they may be out of date; False if the file was busy or
        the project is gone (then nothing is updated, and the next tick tries again)."""
        conn = project.db.conn
        if conn.in_transaction:  # a write of this window's is open: read after it ends
            return False
        try:
            version = int(conn.execute("PRAGMA data_version").fetchone()[0])
            if not force and version == self._version and self._prints is not None:
                return True
            prints = fingerprints(conn)
        except sqlite3.ProgrammingError:  # closed under us: the window is changing project
            self.timer.stop()
            return False
        except sqlite3.Error as err:  # never into Qt: a slot that raises once a second floods
            self.skipped += 1
            if not (isinstance(err, sqlite3.OperationalError) and _transient(err)):
                text = f"{type(err).__name__}: {err}"
                if text != self.last_error:  # say each new problem once, keep trying
                    log.warning("project watch: %s (trying again every tick)", text)
                self.last_error = text
            return False
        self._version, self._prints = version, prints
        return True
