"""What ``project.sqlite`` must be before the workbench trusts it, and what it says when it is not.

SQLite treats an empty file as an empty database, so a ``project.sqlite`` truncated to 0 bytes
used to be re-created, silently, as an empty project. Opening a project therefore checks the file
first, reading nothing but its 100-byte header: it is not empty, it is SQLite, its page count fits
the file, and its ``application_id`` is ours (or 0: a project from before ids were set). Once
open, the database must have our ``meta`` table, and it passes ``PRAGMA quick_check`` the first
time this process opens that version of the file (:func:`verify_once`, skipped above
:data:`VERIFY_ON_OPEN_MAX_BYTES` where it would cost seconds; ``self-test --project`` checks any
size). A file that fails gives one message with what to do (:func:`damaged`), and so does SQLite
finding damage later (:func:`translate`, called where a project is opened or closed).

A project that cannot be written (a read-only mount, no permission) is opened read-only by the
commands that only read (:func:`open_read_only`); the others are told why it is read-only
(:func:`read_only_reason`), and so is a write SQLite refuses later.
"""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from annotation import UserError
from storage._db import APPLICATION_ID, connect, schema_version

DB_NAME = "project.sqlite"
BACKUPS = "backups"
MANIFEST = "backup.json"
#: quick_check reads every page (≈1 GB/s from the page cache, far less from a cold disk): on
#: opening, only files up to this size are checked; larger ones by ``self-test --project``
VERIFY_ON_OPEN_MAX_BYTES = 256 * 2**20

_MAGIC = b"SQLite format 3\x00"
_SQLITE_READONLY, _SQLITE_CORRUPT, _SQLITE_NOTADB = 8, 11, 26
_SQLITE_READONLY_DBMOVED = _SQLITE_READONLY | (4 << 8)


class ProjectError(UserError, RuntimeError):
    """A folder that is not a usable project."""


class ProjectDamagedError(ProjectError):
    """``project.sqlite`` is not what it should be; the message says how to get the work back."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail or message  # what is wrong, without the advice


class ProjectReadOnlyError(ProjectError):
    """The project cannot be written (a read-only mount, no permission) and this needs to."""


def damaged(root: Path, detail: str) -> ProjectDamagedError:
    """The one message for a damaged project: what is wrong, then how to get the work back
    (the newest backup by name; SQLite's own recovery when there is a file to recover from)."""
    db = root / DB_NAME
    newest = newest_backup(root)
    restore = (
        f"restore the newest backup: workbench project restore --project {_q(root)} {newest.name}"
        if newest is not None
        else f"restore a backup if you made one: workbench project restore --project {_q(root)} "
        "BACKUP_FOLDER (none is in its backups/ folder)"
    )
    try:
        something = db.is_file() and db.stat().st_size > 0
    except OSError:
        something = False
    recover = (
        f"; or recover what is still readable: sqlite3 {_q(db)} .recover | sqlite3 "
        "recovered.sqlite (.dump where .recover fails)"
        if something
        else ""
    )
    return ProjectDamagedError(
        f"{db} is damaged ({detail}). To get your work back, {restore}{recover} "
        '(README, "Your data")',
        detail,
    )


def newest_backup(root: Path) -> Path | None:
    """The newest complete backup folder in ``root/backups``."""
    found = list_backups(root)
    return found[0].path if found else None


@dataclass(frozen=True)
class BackupInfo:
    """A backup folder (:mod:`storage._backup` makes them) as its ``backup.json`` describes it."""

    path: Path
    created: str  # UTC, ISO 8601
    reason: str
    automatic: bool
    schema_version: int | None
    project_id: str | None
    db_bytes: int
    files: int  # media and arm files carried (0 for an automatic backup: the database only)

    @property
    def name(self) -> str:
        return self.path.name


def list_backups(root: Path) -> list[BackupInfo]:
    """The complete backups in ``root/backups``, newest first. Works on a damaged project
    (that is when they are wanted); refuses a folder that was never a project."""
    if not ((root / DB_NAME).exists() or looks_like_project(root)):
        raise ProjectError(f"{root}: not a workbench project (no {DB_NAME})")
    folder = root / BACKUPS
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    found = [
        backup_info(p) for p in entries if not p.name.startswith(".") and (p / DB_NAME).is_file()
    ]
    return sorted(found, key=lambda b: (b.created, b.name), reverse=True)


def backup_info(folder: Path) -> BackupInfo:
    """What a backup folder holds, from its backup.json (or the file itself, if made by hand)."""
    try:
        raw: dict[str, Any] = json.loads((folder / MANIFEST).read_text("utf-8"))
    except (OSError, ValueError):  # a backup folder made by hand: what the file says
        raw = {}
    db = folder / DB_NAME
    created = raw.get("created") or datetime.fromtimestamp(db.stat().st_mtime, UTC).isoformat(
        timespec="microseconds"
    )
    return BackupInfo(
        path=folder,
        created=str(created),
        reason=str(raw.get("reason", "copied by hand")),
        automatic=bool(raw.get("automatic", False)),
        schema_version=raw.get("schema_version"),
        project_id=raw.get("project_id"),
        db_bytes=db.stat().st_size,
        files=int(raw.get("files", 0)),
    )


def looks_like_project(root: Path) -> bool:
    """Whether ``root`` was a project (its media or backups are there), with or without its file."""
    return (root / "media").is_dir() or (root / BACKUPS).is_dir()


def inspect_header(root: Path) -> None:
    """Refuse a ``project.sqlite`` whose first 100 bytes show it cannot be a project's database.

    Reads the file, never opens it with SQLite (which would make an empty file a database) —
    but only the first time this process meets the file: closing any descriptor of a database
    file drops every POSIX lock this process holds on it, including those of SQLite connections
    open in other threads (a worker's jobs then failed with "disk I/O error"). Later opens of
    the same file rely on :func:`check_ours`, through SQLite.
    """
    path = root / DB_NAME
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    if st is not None:
        if st.st_size == 0 and not stat.S_ISDIR(st.st_mode):
            raise damaged(root, "the file is empty: 0 bytes")
        with _verified_lock:
            if (st.st_dev, st.st_ino) in _inspected:
                return
    try:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            header = f.read(100)
    except IsADirectoryError:
        raise damaged(root, f"{DB_NAME} is a folder, not a file") from None
    except OSError as e:
        raise ProjectError(f"{path}: cannot be read ({e.strerror or e})") from e
    if size == 0:
        raise damaged(root, "the file is empty: 0 bytes")
    if len(header) < 100 or not header.startswith(_MAGIC):
        raise damaged(root, "it is not an SQLite database: its first bytes are wrong")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        raise damaged(root, "its header is damaged: impossible page size")
    app_id = int.from_bytes(header[68:72], "big")
    if app_id not in (0, APPLICATION_ID):
        raise damaged(root, f"it is another program's SQLite file, application id {app_id:#x}")
    pages = int.from_bytes(header[28:32], "big")
    counter, valid_for = header[24:28], header[92:96]
    # the page count is trusted only when SQLite marked it valid; a WAL still holding pages a
    # checkpoint has not written yet may make the file shorter for a while, so not then either
    wal = root / f"{DB_NAME}-wal"
    wal_pending = wal.exists() and wal.stat().st_size > 0
    if pages and counter == valid_for and not wal_pending and size < pages * page_size:
        raise damaged(root, f"it is truncated: {size:,} bytes of {pages * page_size:,}")
    if st is not None:
        with _verified_lock:
            _inspected.add((st.st_dev, st.st_ino))


def check_ours(db: sqlite_utils.Database, root: Path) -> int:
    """Refuse an SQLite database that is not a workbench project's; returns its schema version.

    Reads through SQLite (and so through the WAL), unlike :func:`inspect_header`.
    """
    app_id = int(db.execute("PRAGMA application_id").fetchone()[0])
    if app_id not in (0, APPLICATION_ID):
        raise damaged(root, f"it is another program's SQLite file, application id {app_id:#x}")
    version = schema_version(db)
    if version == 0:
        raise damaged(root, "it is an SQLite database but not a workbench project's: no meta table")
    return version


def application_id(db: sqlite_utils.Database) -> int:
    return int(db.execute("PRAGMA application_id").fetchone()[0])


def verify(db: sqlite_utils.Database, root: Path, *, full: bool = False) -> str:
    """Run ``PRAGMA quick_check`` (``full``: ``integrity_check``, which also compares every index
    with its table); raise :func:`damaged` on any problem. Returns what was checked."""
    pragma = "integrity_check" if full else "quick_check"
    try:
        problems = [str(r[0]) for r in db.execute(f"PRAGMA {pragma}(3)").fetchall()]
    except sqlite3.DatabaseError as e:
        raise damaged(root, f"{pragma}: {e}") from e
    if problems != ["ok"]:
        # one line: SQLite puts "*** in database main ***" and a newline before the first
        first = " ".join(problems[0].replace("*** in database main ***", "").split())
        more = " (and more)" if len(problems) > 1 or "\n" in problems[0].strip() else ""
        raise damaged(root, f"{pragma}: {first}{more}")
    return pragma


_verified: set[tuple[int, int, int, int]] = set()
_inspected: set[tuple[int, int]] = set()  # files whose header this process has read
_verified_lock = threading.Lock()


def verify_once(db: sqlite_utils.Database, root: Path) -> None:
    """:func:`verify` the first time this process opens this version of the file.

    Threads and workers open a project per job; checking each time would cost a full read of
    the file per job. The main file changes only when a checkpoint writes to it (a restore
    replaces it: another inode), so its identity, size and mtime say whether it was seen.
    """
    st = os.stat(root / DB_NAME)
    # once per file per process: a restore is another inode; a long-lived process (the GUI, a
    # worker, a script polling) meets damage where a read fails, translated there
    key = (st.st_dev, st.st_ino, 0, 0)
    with _verified_lock:
        if key in _verified:
            return
    if st.st_size > VERIFY_ON_OPEN_MAX_BYTES:
        return
    for attempt in range(3):
        try:
            verify(db, root)
            break
        except ProjectDamagedError as err:
            # "unable to get the page. error code=522": a page read cut short while another
            # connection checkpointed; not damage. Asked again; still so, left to the
            # self-test's check (damage a command meets is translated where it is met)
            if "error code=" not in str(err):
                raise
            time.sleep(0.05 * (attempt + 1))
    with _verified_lock:
        _verified.add(key)


def open_read_only(
    root: Path,
    *,
    static: bool = False,
    check: Callable[[sqlite_utils.Database], object] | None = None,
) -> sqlite_utils.Database:
    """Open ``root/project.sqlite`` for reading only (``check`` runs before anything else).

    Where the project can be written, this is an ordinary connection with ``query_only`` on: it
    shares the WAL with writers and, closing last, tidies ``-wal``/``-shm`` away as a writer
    would. Where it cannot, it is opened ``mode=ro``. A WAL database then needs its ``-shm``
    index, which SQLite makes beside it if the folder can be written; if not, the file is opened
    ``immutable`` (the main file alone, no index), which is right only while no ``-wal`` holds
    changes the main file lacks: with such a ``-wal`` it is refused. ``static`` (a backup: nobody
    writes it) is opened ``immutable`` wherever it is, leaving nothing beside it.
    """
    path = root / DB_NAME
    if not static and read_only_reason(root) is None:
        db = connect(path, check=check)
        db.execute("PRAGMA query_only = ON")
        return db
    wal = root / f"{DB_NAME}-wal"
    pending = wal.exists() and wal.stat().st_size > 0
    folder_read_only = _folder_read_only(root)
    if folder_read_only and pending:
        raise ProjectReadOnlyError(
            f"the project is read-only ({read_only_reason(root)}) and {wal.name} holds changes "
            f"not yet written into {DB_NAME}: reading it needs write access to the folder {root} "
            "(open it once where the folder can be written, then it reads read-only)"
        )
    immutable = not pending and (folder_read_only or static)
    return connect(path, readonly=True, immutable=immutable, check=check)


def _folder_read_only(root: Path) -> bool:
    try:
        if os.statvfs(root).f_flag & os.ST_RDONLY:
            return True
    except (OSError, AttributeError):
        pass
    return not os.access(root, os.W_OK)


def read_only_reason(root: Path) -> str | None:
    """Why the project in ``root`` cannot be written, in words for the user; None if it can.

    ``os.access`` answers for this user, and says no on a read-only mount even for root.
    """
    try:
        if os.statvfs(root).f_flag & os.ST_RDONLY:
            return f"{root} is on a file system mounted read-only"
    except (OSError, AttributeError):  # no statvfs (Windows): the permission checks below
        pass
    if not os.access(root, os.W_OK):
        return f"no permission to write in the folder {root}"
    for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm"):
        path = root / name
        if path.exists() and not os.access(path, os.W_OK):
            return f"no permission to write {path}"
    return None


def translate(err: BaseException, root: Path) -> ProjectError | None:
    """The user's message for an SQLite error that says the project is damaged or read-only;
    None for any other error (which stays what it is: possibly a bug)."""
    if not isinstance(err, sqlite3.DatabaseError):
        return None
    code = getattr(err, "sqlite_errorcode", None)
    if not isinstance(code, int):
        return None
    if code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
        return damaged(root, str(err))
    if code == _SQLITE_READONLY_DBMOVED:
        return ProjectError(
            f"{root / DB_NAME} was replaced or moved while it was open (restored from a backup?): "
            "open the project again"
        )
    if code & 0xFF == _SQLITE_READONLY:
        why = read_only_reason(root)
        if why is not None:  # else a command that opened it read-only wrote: a bug, said as one
            return ProjectReadOnlyError(f"the project is read-only ({why})")
    return None


def _q(path: Path) -> str:
    return shlex.quote(str(path))
