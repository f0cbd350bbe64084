"""Files into a project's ``media/`` folder: what case import, study bundles and episodes share.

A file is stored by its sha256 (:func:`storage.media.file_sha256`) under
``media/ab/<sha256><suffix>`` and never modified. Storing is two steps so that a failure leaves
the project as it was: :func:`stage` copies the file to a temporary name beside its final one
before the transaction, and inside it the caller writes the rows (:func:`insert_media`,
:func:`insert_index`) and then moves each staged file into place; whatever is still staged
afterwards is removed. Case import and episodes stage this way; a study bundle extracts its
members to temporary names itself and shares :func:`rel_path` and :func:`insert_index`.

A full disk is the likeliest failure of a copy: :func:`stage` then removes what it began (no
``.importing`` file is left behind) and raises :class:`annotation.DiskFullError`, which says so
in plain words; :func:`unplace` takes back the files a writer moved in when its transaction did
not commit (SQLite's own "database or disk is full").
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from annotation import DiskFullError, disk_full
from storage._history import now

if TYPE_CHECKING:
    import sqlite_utils

    from storage._project import Project
    from storage.media import VideoIndex

Staged = list[tuple[Path, Path]]  # (temporary file, its final path), moved in by the writer


@dataclass(frozen=True)
class MediaFile:
    """A file to store: where it is now, its sha256, its ``media.kind`` and, for a video, its
    frame index."""

    src: Path
    sha256: str
    kind: str
    index: VideoIndex | None = None


def rel_path(sha256: str, suffix: str) -> str:
    """Where the file ``sha256`` lives under ``media/``."""
    return f"{sha256[:2]}/{sha256}{suffix}"


def _rel_path(m: MediaFile) -> str:
    return rel_path(m.sha256, m.src.suffix.lower())


def disk_full_error(project: Project, again: str = "try again") -> DiskFullError:
    """The plain words for a full disk under ``project``; ``again`` is what to do once there is
    space ("import again")."""
    return DiskFullError(f"the disk holding {project.root} is full: free some space and {again}")


def stage(project: Project, m: MediaFile, staged: Staged, *, again: str = "try again") -> Staged:
    """Copy ``m`` to a temporary name beside its final path; returns what it staged (nothing if
    the project has the file already or ``staged`` holds it).

    Raises:
        DiskFullError: the disk filled up during the copy (``again`` ends its message); the
            partial copy, and a folder made for it, are gone.
    """
    final = project.media_dir / _rel_path(m)
    if final.exists() or any(f == final for _, f in staged):
        return []  # already in the project, or the same file appears twice in this import
    made = not final.parent.exists()
    tmp = final.with_name(final.name + ".importing")
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(m.src, tmp)
    except BaseException as e:  # Ctrl+C too: a partial copy is never left behind
        tmp.unlink(missing_ok=True)
        if made:
            with suppress(OSError):  # another import may have put a file there meanwhile
                final.parent.rmdir()
        if isinstance(e, Exception) and disk_full(e):
            raise disk_full_error(project, again) from e
        raise
    return [(tmp, final)]


def unstage(staged: Staged) -> None:
    """Remove what :func:`stage` left that was not moved in: the temporary files, and the
    folders made for them that are empty now."""
    for tmp, _ in staged:
        tmp.unlink(missing_ok=True)
        with suppress(OSError):  # not empty: it holds stored files
            tmp.parent.rmdir()


def unplace(project: Project, moved: Iterable[Path]) -> None:
    """Remove files a writer moved into ``media/`` whose transaction then failed (a full disk
    at COMMIT): no row names them, unless another writer stored the same file meanwhile."""
    for final in moved:
        rel = final.relative_to(project.media_dir).as_posix()
        with suppress(Exception):  # the database cannot answer: keep the file (it is harmless)
            if project.db.execute("SELECT 1 FROM media WHERE rel_path = ?", [rel]).fetchone():
                continue
            final.unlink(missing_ok=True)
        with suppress(OSError):
            final.parent.rmdir()


def insert_media(project: Project, m: MediaFile) -> None:
    """Write ``m``'s ``media`` row and frame index, inside the caller's transaction; a file
    already registered only gets the index it lacks (stored by an older version)."""
    db = project.db
    if db.execute("SELECT 1 FROM media WHERE sha256 = ?", [m.sha256]).fetchone():
        if (
            m.index is not None
            and not db.execute("SELECT 1 FROM video_index WHERE sha256 = ?", [m.sha256]).fetchone()
        ):
            insert_index(db, m.sha256, m.index)  # a file stored without an index (older projects)
        return
    db.table("media").insert(
        {
            "sha256": m.sha256,
            "kind": m.kind,
            "rel_path": _rel_path(m),
            "bytes": m.src.stat().st_size,
            "original_name": m.src.name,
            "imported_at": now(),
        }
    )
    if m.index is not None:
        insert_index(db, m.sha256, m.index)


def insert_index(db: sqlite_utils.Database, sha256: str, ix: VideoIndex) -> None:
    """Store the frame index of the video file ``sha256`` (import, bundles and episodes)."""
    db.table("video_index").insert(
        {
            "sha256": sha256,
            "frame_count": ix.frame_count,
            "width": ix.width,
            "height": ix.height,
            "fps": ix.fps,
            "duration_s": ix.duration_s,
            "data": json.dumps(ix.to_json()),
        }
    )
