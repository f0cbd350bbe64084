"""SQLite connection setup, explicit write transactions and ordered migrations.

Every project opens the database the same way: WAL journal (readers never block the writer),
a busy timeout (several processes share one file), foreign keys on, and ``synchronous=FULL`` so a
committed decision survives a power cut, not just a crash. Writes go through :func:`write`, which
takes the write lock up front (``BEGIN IMMEDIATE``) instead of upgrading a read transaction later,
the usual cause of "database is locked" under concurrency.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils

from annotation import UserError

BUSY_TIMEOUT_MS = 10_000
#: ``PRAGMA application_id`` of a project file ("RWB1"): what says a ``project.sqlite`` is ours
#: and not some other program's SQLite file. Set on new projects and on old ones when first opened
#: for writing (theirs is 0).
APPLICATION_ID = 0x52574231

Migration = Callable[[sqlite_utils.Database], None]


def connect(
    path: Path,
    *,
    readonly: bool = False,
    immutable: bool = False,
    check: Callable[[sqlite_utils.Database], object] | None = None,
) -> sqlite_utils.Database:
    """Open (or create) the database at ``path`` with the project's pragmas.

    ``readonly`` opens it with ``mode=ro``: nothing can be written, not even the journal mode, so
    a project on a read-only mount or without write permission can still be read (SQLite still
    needs ``-shm``/``-wal`` beside a WAL database, made on demand where the folder is writable).
    ``immutable`` promises SQLite that nobody changes the file while it is open, so it reads the
    main file alone and needs no ``-shm``: only for a folder nobody can write and no ``-wal``.
    ``check`` runs before any pragma writes (WAL mode changes the file's header): a file that is
    not a project's is refused as it was found.
    """
    if readonly:
        uri = f"{path.absolute().as_uri()}?mode=ro" + ("&immutable=1" if immutable else "")
        conn = sqlite3.connect(
            uri, uri=True, isolation_level=None, check_same_thread=False, timeout=10
        )
    else:
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=10)
    db = sqlite_utils.Database(conn, execute_plugins=False)
    try:
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if check is not None:
            check(db)
        if not readonly:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
    except BaseException:
        conn.close()  # a file that is no database, or not ours: leave no connection behind
        raise
    return db


@contextmanager
def write(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """Run a block as one write transaction; nested blocks join the outer one."""
    conn = db.conn
    if conn.in_transaction:
        with db.atomic():
            yield db
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


def ids_with_prefix(
    db: sqlite_utils.Database, table: str, prefix: str, columns: str = "id", limit: int = 3
) -> list[tuple[object, ...]]:
    """Rows (``columns``) whose text primary key ``id`` starts with ``prefix``, by id.

    A range on the primary key index instead of LIKE, which would scan every row.
    """
    upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    rows = db.execute(
        f"SELECT {columns} FROM {table} WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
        [prefix, upper, limit],
    ).fetchall()
    return [tuple(r) for r in rows]


def schema_version(db: sqlite_utils.Database) -> int:
    """The schema version stored in the database (0 for a new file)."""
    if "meta" not in db.table_names():
        return 0
    row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0


class SchemaTooNewError(UserError, RuntimeError):
    """The project was written by a newer version of the workbench."""


def migrate(
    db: sqlite_utils.Database,
    migrations: list[Migration],
    path: Path,
    *,
    before: Callable[[int, int], object] | None = None,
) -> int:
    """Bring the schema up to date, each migration in its own transaction. Returns the version.

    ``before(current, target)`` runs once before the first migration of a project that has a
    schema already (a new, empty file has nothing to lose): the project keeps a backup of the
    file as it was, since a migration cannot be undone.
    """
    current = schema_version(db)
    if current > len(migrations):
        raise SchemaTooNewError(
            f"{path}: project schema v{current} is newer than this workbench supports "
            f"(v{len(migrations)}); update the workbench to open it"
        )
    if before is not None and 0 < current < len(migrations):
        before(current, len(migrations))
    for version in range(current + 1, len(migrations) + 1):
        with write(db):
            migrations[version - 1](db)
            db.table("meta").upsert({"key": "schema_version", "value": str(version)}, pk="key")
    return len(migrations)
