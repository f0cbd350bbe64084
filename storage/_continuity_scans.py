"""The project's continuity scans: what it keeps of them and the two ways it asks for one.

The scan itself is :mod:`storage.media.continuity`; it runs as the ``continuity.scan`` job kind
(:mod:`storage.jobs._continuity_kind`) or, for short clips, inline at import:

- :class:`ContinuityScans` (``project.continuity``) is the ``continuity_scans`` table (v11): one
  scan per video file, by sha256. A scan is evidence about a file, not a decision anyone made,
  so it has no undo: saving a new one replaces the old. :meth:`ContinuityScans.get` returns only
  a scan of the current version (signals and thresholds); an older one is reported as missing,
  so it is made again.
- :func:`queue_continuity_scans` queues a job for every video file of a project that lacks a
  current scan and has none queued (an older project, a changed threshold file).
- :class:`ImportScans` is what :func:`storage.import_cases` uses: a clip of at most
  :data:`INLINE_SCAN_MAX_S` seconds is scanned at once, on a few threads while the import goes
  on indexing, and stored in the import's own transaction; a longer clip, or one whose scan
  fails, is queued instead, so a scan never fails an import.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from storage._db import write
from storage._history import now
from storage.media.continuity import Scan, load_thresholds, scan_version, scan_video

if TYPE_CHECKING:
    from pathlib import Path

    from storage._project import Project

CONTINUITY_KIND = "continuity.scan"
INLINE_SCAN_MAX_S = 30.0  # import scans clips up to this long itself (~1 s of work at 480p)
# Ahead of judge jobs (100): a scan takes a second, and a judge run may want its windows.
SCAN_PRIORITY = 50
_IMPORT_THREADS = max(1, min(4, os.cpu_count() or 1))
_TABLE = "continuity_scans"


class ContinuityScans:
    """The ``continuity_scans`` table (``project.continuity``); see the module docstring."""

    def __init__(self, project: Project) -> None:
        self._project = project
        self._db = project.db

    @property
    def current_version(self) -> str:
        return scan_version(load_thresholds())

    def get(self, sha256: str) -> Scan | None:
        """The stored scan of the file, if it is of the current version."""
        row = self._db.execute(
            f"SELECT version, data FROM {_TABLE} WHERE sha256 = ?", [sha256]
        ).fetchone()
        if row is None or row[0] != self.current_version:
            return None
        return Scan.from_dict(json.loads(row[1]))

    def save(self, sha256: str, scan: Scan) -> None:
        """Store ``scan`` as the file's (one transaction), replacing any earlier one."""
        data = json.dumps(scan.to_dict(), allow_nan=False)
        with write(self._db):
            self._db.table(_TABLE).upsert(
                {"sha256": sha256, "version": scan.version, "windows": len(scan.windows),
                 "data": data, "scanned_at": now()}, pk="sha256",
            )  # fmt: skip

    def missing(self, shas: list[str]) -> list[str]:
        """Which of ``shas`` have no current scan."""
        version = self.current_version
        have = {r[0] for r in self._db.execute(
            f"SELECT sha256 FROM {_TABLE} WHERE version = ?", [version])}  # fmt: skip
        return [s for s in shas if s not in have]


def queued_scans(project: Project) -> set[str]:
    """The files with a scan job queued or running."""
    rows = project.db.execute(
        "SELECT payload FROM jobs WHERE kind = ? AND status IN ('queued', 'running')",
        [CONTINUITY_KIND],
    ).fetchall()
    return {str(json.loads(p).get("sha256")) for (p,) in rows}


def _video_files(project: Project) -> list[str]:
    # every video file, the episodes' recordings too: a scan is about a file, not a case
    rows = project.db.execute("SELECT sha256 FROM media WHERE kind = 'video' ORDER BY sha256")
    return [str(sha) for (sha,) in rows]


def queue_continuity_scans(project: Project, shas: list[str] | None = None) -> int:
    """Queue a scan job for each video file (of ``shas``, default all) that lacks a current
    scan and has no job queued or running; returns how many were queued."""
    wanted = _video_files(project) if shas is None else list(dict.fromkeys(shas))
    queued = queued_scans(project)
    todo = [s for s in project.continuity.missing(wanted) if s not in queued]
    project.jobs.enqueue(CONTINUITY_KIND, [{"sha256": s} for s in todo], priority=SCAN_PRIORITY)
    return len(todo)


@dataclass(frozen=True)
class ContinuityStatus:
    """A project's video files: ``scanned`` at ``version`` plus ``missing`` make ``videos``;
    of the missing, ``stale`` have a scan of another version, ``queued`` a job on the way."""

    videos: int
    scanned: int
    missing: int
    stale: int
    queued: int
    version: str

    def to_dict(self) -> dict[str, int | str]:
        return asdict(self)


def continuity_status(project: Project) -> ContinuityStatus:
    files = _video_files(project)
    missing = project.continuity.missing(files)
    versions = dict(project.db.execute("SELECT sha256, version FROM continuity_scans").fetchall())
    queued = queued_scans(project)
    return ContinuityStatus(
        videos=len(files),
        scanned=len(files) - len(missing),
        missing=len(missing),
        stale=sum(1 for s in missing if s in versions),
        queued=sum(1 for s in missing if s in queued),
        version=project.continuity.current_version,
    )


class ImportScans:
    """The scans of the video files one import adds (see the module docstring).

    :meth:`offer` each new video as it is checked, :meth:`collect` before the import's
    transaction, :meth:`store` inside it, :meth:`close` always.
    """

    def __init__(self, project: Project) -> None:
        self._project = project
        self._pool: ThreadPoolExecutor | None = None
        self._running: dict[Future[Scan], tuple[str, Callable[[], None]]] = {}
        self._scans: dict[str, Scan] = {}
        self._queue: list[str] = []
        self._seen: set[str] = set()
        self._queued = queued_scans(project)

    def offer(
        self, case_id: str, sha256: str, path: Path, duration_s: float, done: Callable[[], None]
    ) -> None:
        """A video of the import: scanned or queued if the case does not have it yet and the
        file has neither a current scan nor a job on the way. ``done`` (the import's progress
        step for the file) is called now, or by :meth:`collect` once its scan is finished."""
        if not self._start(case_id, sha256, path, duration_s, done):
            done()

    def _start(
        self, case_id: str, sha256: str, path: Path, duration_s: float, done: Callable[[], None]
    ) -> bool:
        if sha256 in self._seen:
            return False
        self._seen.add(sha256)
        known = self._project.db.execute(
            "SELECT 1 FROM videos WHERE case_id = ? AND media = ?", [case_id, sha256]
        ).fetchone()
        if known or sha256 in self._queued or self._project.continuity.get(sha256) is not None:
            return False
        if duration_s > INLINE_SCAN_MAX_S:
            self._queue.append(sha256)
            return False
        if self._pool is None:
            self._pool = ThreadPoolExecutor(_IMPORT_THREADS, thread_name_prefix="import-scan")
        self._running[self._pool.submit(scan_video, path)] = (sha256, done)
        return True

    def collect(self) -> None:
        """Wait for the scans, taking each file's step as its scan finishes; one that failed
        is queued (its job then reports why)."""
        for future in as_completed(self._running):
            sha, done = self._running[future]
            try:
                self._scans[sha] = future.result()
            except Exception:  # whatever broke, the import itself must not: the job will say
                self._queue.append(sha)
            done()
        self._running.clear()

    def store(self) -> tuple[int, int]:
        """Save the scans and queue the rest, inside the import's transaction (the media rows
        must exist first); returns (scanned, queued)."""
        for sha, scan in self._scans.items():
            self._project.continuity.save(sha, scan)
        self._project.jobs.enqueue(
            CONTINUITY_KIND, [{"sha256": s} for s in self._queue], priority=SCAN_PRIORITY
        )
        return len(self._scans), len(self._queue)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


__all__ = [
    "CONTINUITY_KIND",
    "INLINE_SCAN_MAX_S",
    "ContinuityScans",
    "ContinuityStatus",
    "ImportScans",
    "continuity_status",
    "queue_continuity_scans",
]
