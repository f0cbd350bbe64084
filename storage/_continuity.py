"""The two ways a project asks for continuity scans, and what it knows of them.

The scan itself runs as the ``continuity.scan`` job kind (:mod:`storage.jobs._continuity_kind`)
or, for short clips, inline at import:

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
from pathlib import Path

from storage._project import Project
from storage.continuity import Scan, scan_video

CONTINUITY_KIND = "continuity.scan"
INLINE_SCAN_MAX_S = 30.0  # import scans clips up to this long itself (~1 s of work at 480p)
# Ahead of judge jobs (100): a scan takes a second, and a judge run may want its windows.
SCAN_PRIORITY = 50
_IMPORT_THREADS = max(1, min(4, os.cpu_count() or 1))


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
    "ContinuityStatus",
    "ImportScans",
    "continuity_status",
    "queue_continuity_scans",
]
