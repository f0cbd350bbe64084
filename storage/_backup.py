"""Backups of a project, and putting one back.

A backup is a folder that is itself an openable project: ``project.sqlite`` copied with SQLite's
online backup API (a consistent snapshot while others keep working; a plain file copy of a WAL
database can catch it half-written), ``media/`` and ``arms/`` by hard link where the file system
allows (they are content-addressed and never modified, so a link costs no space) or else copied,
and ``backup.json`` saying when, why and from which schema. ``cache/`` is left out: it is
rebuilt on demand. A backup is made in a hidden ``.partial-…`` folder and renamed when complete,
so a listed backup is never half-made.

Before each schema migration the project keeps an automatic copy of ``project.sqlite`` alone in
``<project>/backups/`` (the last :data:`KEEP_AUTOMATIC`; those a person made are never removed).

Restoring copies the backup's file in beside the project's as ``project.sqlite.restoring`` and
renames it over the old one (atomic), which is kept as ``project.sqlite.damaged-<time>`` (or
``.replaced-<time>`` when it was healthy), its ``-wal`` with it. It refuses while another process
has the project open: SQLite holds a shared lock on the file for as long as a connection is open
in WAL mode, so an exclusive lock on the same bytes is granted only when nobody has it open.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import sqlite_utils

from storage._project_file import (
    BACKUPS,
    DB_NAME,
    MANIFEST,
    BackupInfo,
    ProjectDamagedError,
    ProjectError,
    backup_info,
    check_ours,
    inspect_header,
    list_backups,
    looks_like_project,
    open_read_only,
    read_only_reason,
    verify,
)

KEEP_AUTOMATIC = 3
_FILE_TREES = ("media", "arms")  # what a full backup carries besides the database
_SHARED_FIRST, _SHARED_SIZE = 0x40000002, 510  # SQLite's shared-lock bytes (os_unix.c)


class BackupError(ProjectError):
    """A backup that cannot be made, found or restored."""


@dataclass(frozen=True)
class RestoreReport:
    backup: BackupInfo
    kept_aside: Path | None  # where the file it replaced now is
    files_restored: int  # media and arm files the project had lost, put back from the backup


def backup_project(
    db: sqlite_utils.Database, root: Path, to: Path | None = None, *, reason: str = "by hand"
) -> BackupInfo:
    """A full backup of the open project (``db``) into ``to`` (default ``root/backups``).

    The database is checked first (``quick_check``): a backup of a damaged file would look like a
    way back and is none.
    """
    parent = Path(to) if to is not None else root / BACKUPS
    if to is None and (why := read_only_reason(root)) is not None:
        raise BackupError(
            f"the project is read-only ({why}): back it up elsewhere with --to FOLDER"
        )
    verify(db, root)
    return _make(db, root, parent, reason=reason, automatic=False, with_files=True)


def backup_before_migration(
    db: sqlite_utils.Database, root: Path, current: int, target: int
) -> BackupInfo:
    """The automatic copy of ``project.sqlite`` before migrating it, then the oldest beyond
    :data:`KEEP_AUTOMATIC` removed. Failing to make it stops the migration: the project is not
    upgraded without a way back."""
    verify(db, root)
    try:
        info = _make(db, root, root / BACKUPS, reason=f"before upgrading schema v{current} to "
                     f"v{target}", automatic=True, with_files=False)  # fmt: skip
    except OSError as e:
        raise BackupError(
            f"{root / DB_NAME}: could not back it up before upgrading its schema "
            f"(v{current} to v{target}), so it was left as it is: {e.strerror or e}"
        ) from e
    automatic = [b for b in list_backups(root) if b.automatic]
    for old in automatic[KEEP_AUTOMATIC:]:
        shutil.rmtree(old.path, ignore_errors=True)
    return info


def restore_backup(root: Path, backup: str | Path) -> RestoreReport:
    """Put the backup ``backup`` (a name in ``root/backups`` or a backup folder) back as the
    project's ``project.sqlite``; media and arm files the project lacks come back too."""
    root = Path(root)
    if not ((root / DB_NAME).exists() or looks_like_project(root)):
        raise BackupError(f"{root}: not a workbench project (no {DB_NAME}, media or backups)")
    source = _find(root, backup)
    about = backup_info(source)
    try:
        inspect_header(source)
        src = open_read_only(source, static=True)
    except (ProjectError, sqlite3.DatabaseError) as e:
        raise _unusable(source, e) from e
    try:
        try:
            check_ours(src, source)
            verify(src, source)
        except (ProjectError, sqlite3.DatabaseError) as e:
            raise _unusable(source, e) from e
        if (why := read_only_reason(root)) is not None:
            raise BackupError(f"the project is read-only ({why}): it cannot be restored in place")
        current_id, healthy = _current_state(root)
        if current_id is not None and about.project_id not in (None, current_id):
            raise BackupError(
                f"{source} is a backup of another project (id {about.project_id}; this one is "
                f"{current_id}): open it as a project of its own instead"
            )
        with _nobody_else(root / DB_NAME):
            kept = _swap_in(src.conn, root, "replaced" if healthy else "damaged")
    finally:
        src.close()
    restored = sum(_copy_tree(source / t, root / t, only_missing=True) for t in _FILE_TREES)
    return RestoreReport(about, kept, restored)


# ---- making one ---------------------------------------------------------------------------


def _make(
    db: sqlite_utils.Database,
    root: Path,
    parent: Path,
    *,
    reason: str,
    automatic: bool,
    with_files: bool,
) -> BackupInfo:
    parent.mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC)
    name = now.strftime("%Y%m%dT%H%M%SZ") + ("-auto" if automatic else "")
    final = parent / name
    n = 1
    while final.exists():
        n += 1
        final = parent / f"{name}-{n}"
    partial = parent / f".partial-{final.name}"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    try:
        _copy_db(db.conn, partial / DB_NAME)
        files = sum(_copy_tree(root / t, partial / t) for t in _FILE_TREES) if with_files else 0
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        manifest = {
            "created": now.isoformat(timespec="microseconds"),
            "reason": reason,
            "automatic": automatic,
            "schema_version": int(meta.get("schema_version", 0)),
            "project_id": meta.get("project_id"),
            "source": str(root.absolute()),
            "db_bytes": (partial / DB_NAME).stat().st_size,
            "files": files,
        }
        (partial / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
        os.replace(partial, final)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    _sync_dir(parent)
    return backup_info(final)


def _copy_db(src: sqlite3.Connection, dest: Path) -> None:
    """A consistent copy through SQLite's online backup API, flushed to disk before returning."""
    for stale in (dest, dest.with_name(dest.name + "-journal"), dest.with_name(dest.name + "-wal")):
        stale.unlink(missing_ok=True)
    out = sqlite3.connect(str(dest))
    try:
        src.backup(out)
    finally:
        out.close()
    with dest.open("rb+") as f:
        os.fsync(f.fileno())


def _copy_tree(src: Path, dest: Path, *, only_missing: bool = False) -> int:
    """Hard-link (else copy) every file of ``src`` into ``dest``; returns how many were added."""
    if not src.is_dir():
        return 0
    count = 0
    for folder, _dirs, names in os.walk(src):
        target = dest / Path(folder).relative_to(src)
        target.mkdir(parents=True, exist_ok=True)
        for name in names:
            a, b = Path(folder) / name, target / name
            if b.exists() and only_missing:
                continue
            try:
                os.link(a, b)
            except OSError:  # another file system, no permission to link: copy instead
                shutil.copy2(a, b)
            count += 1
    return count


# ---- putting one back ---------------------------------------------------------------------


def _unusable(source: Path, err: Exception) -> BackupError:
    detail = err.detail if isinstance(err, ProjectDamagedError) else str(err)
    return BackupError(f"the backup {source} cannot be used either: {detail}; try an older one")


def _find(root: Path, backup: str | Path) -> Path:
    named = root / BACKUPS / str(backup)
    for candidate in (named, Path(backup)):
        if (candidate / DB_NAME).is_file() and candidate.absolute() != root.absolute():
            return candidate
    known = ", ".join(b.name for b in list_backups(root)[:5]) or "none"
    raise BackupError(
        f"no backup {str(backup)!r}: give a name from `workbench project backups --project "
        f"{root}` (newest: {known}) or a backup folder holding a {DB_NAME}"
    )


def _current_state(root: Path) -> tuple[str | None, bool]:
    """The project id of the file being replaced, and whether it is healthy."""
    path = root / DB_NAME
    if not path.exists():
        return None, False
    try:
        inspect_header(root)
        db = open_read_only(root)
    except (ProjectError, sqlite3.DatabaseError):
        return None, False
    try:
        check_ours(db, root)
        verify(db, root)
        row = db.execute("SELECT value FROM meta WHERE key = 'project_id'").fetchone()
        return (str(row[0]) if row else None), True
    except (ProjectDamagedError, sqlite3.DatabaseError):
        return None, False
    finally:
        db.close()


@contextmanager
def _nobody_else(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on SQLite's shared-lock bytes of ``path`` (refused if any other
    process has the database open), until the swap is done.

    POSIX locks belong to the process: closing this descriptor drops every lock this process
    holds on the file, so nothing in this process may have the project open meanwhile.
    """
    if sys.platform == "win32" or not path.exists():  # nothing to lock; Windows: not checked
        yield
        return
    import fcntl

    fd = os.open(path, os.O_RDWR)
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, _SHARED_SIZE, _SHARED_FIRST)
        except OSError as e:
            raise BackupError(
                f"{path} is open in another process (the window, a worker, a command): close "
                "it, then restore"
            ) from e
        yield
    finally:
        os.close(fd)


def _swap_in(src: sqlite3.Connection, root: Path, label: str) -> Path | None:
    """Copy the backup in beside the project, then rename it over ``project.sqlite`` (atomic);
    the old file and its ``-wal`` are kept under one new name, still openable together."""
    db = root / DB_NAME
    incoming = root / f"{DB_NAME}.restoring"
    _copy_db(src, incoming)
    kept: Path | None = None
    if db.exists():
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        kept = root / f"{DB_NAME}.{label}-{stamp}"
        n = 1
        while kept.exists():
            n += 1
            kept = root / f"{DB_NAME}.{label}-{stamp}-{n}"
        os.replace(db, kept)
        wal = root / f"{DB_NAME}-wal"
        if wal.exists() and wal.stat().st_size > 0:  # changes the old file still needs
            os.replace(wal, kept.with_name(kept.name + "-wal"))
        wal.unlink(missing_ok=True)
    with suppress(FileNotFoundError):
        (root / f"{DB_NAME}-shm").unlink()  # an index of the old -wal: rebuilt on the next open
    os.replace(incoming, db)
    _sync_dir(root)
    return kept


def _sync_dir(folder: Path) -> None:
    """Make renames in ``folder`` durable (a directory fsync; not possible on Windows)."""
    if sys.platform == "win32":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
