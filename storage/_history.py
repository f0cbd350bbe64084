"""Undo/redo on the stored history.

Every user change runs inside a :class:`Changeset`, which records the before and after image of
each row it touches and stores them as one ``history`` row in the same transaction as the change.
Undo writes the before images back (in reverse order) and marks the entry undone; redo writes the
after images. Because the stack lives in the database, undo survives a restart or a crash, and a
new change discards the redo branch, as in every editor.

A change is stored as ``{table, id, before, after}``: ``id`` holds the value of the table's single
primary-key column, whatever that column is called (``id`` for the annotation tables,
``episode_id`` for an episode's attribution and note). The column is read from the table when a
change is recorded or replayed, so history stored before keys other than ``id`` existed reads the
same way.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import sqlite_utils

from annotation import UserError
from storage._db import write

Row = dict[str, Any]


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def check_scope(scope: object, error: type[UserError]) -> str:
    """A history scope (whose undo stack: the rater id), refused by name when unusable."""
    if not isinstance(scope, str) or not scope.strip():
        raise error(f"scope: expected a rater id (whose undo stack), got {scope!r}")
    return scope


def key_column(db: sqlite_utils.Database, table: str) -> str:
    """The table's primary-key column; undo addresses rows by it, so there must be one."""
    pks = db.table(table).pks
    if len(pks) != 1 or pks == ["rowid"]:
        raise ValueError(f"{table}: undo needs a single-column primary key, not {pks}")
    return str(pks[0])


@dataclass
class Changeset:
    """Row changes made by one user action, applied to the database as they are recorded."""

    db: sqlite_utils.Database
    changes: list[Row] = field(default_factory=list)

    def row(self, table: str, pk: int | str) -> Row | None:
        rows = list(self.db[table].rows_where(f"[{key_column(self.db, table)}] = ?", [pk]))
        return rows[0] if rows else None

    def insert(self, table: str, values: Row) -> int:
        """Insert a row into a table keyed by an integer ``id``; returns its id."""
        tbl = self.db.table(table)
        tbl.insert(values)
        pk = values.get(key_column(self.db, table), tbl.last_pk)
        assert pk is not None
        self.changes.append(
            {"table": table, "id": pk, "before": None, "after": self.row(table, pk)}
        )
        return int(pk)

    def update(self, table: str, pk: int | str, values: Row) -> None:
        before = self.row(table, pk)
        if before is None:
            raise KeyError(f"{table} {pk} does not exist")
        self.db.table(table).update(pk, values)
        after = self.row(table, pk)
        if after != before:
            self.changes.append({"table": table, "id": pk, "before": before, "after": after})

    def put(self, table: str, values: Row) -> None:
        """Insert the row, or replace the given columns of the row with its key (an upsert)."""
        column = key_column(self.db, table)
        pk = values[column]
        before = self.row(table, pk)
        self.db.table(table).upsert(values, pk=column)
        after = self.row(table, pk)
        if after != before:
            self.changes.append({"table": table, "id": pk, "before": before, "after": after})

    def delete(self, table: str, pk: int | str) -> None:
        before = self.row(table, pk)
        if before is None:
            return
        self.db.table(table).delete(pk)
        self.changes.append({"table": table, "id": pk, "before": before, "after": None})


def _restore(db: sqlite_utils.Database, table: str, pk: Any, image: Row | None) -> None:
    column = key_column(db, table)
    if image is None:
        db.execute(f"DELETE FROM [{table}] WHERE [{column}] = ?", [pk])
        return
    try:
        db.table(table).upsert(image, pk=column)
    except sqlite3.IntegrityError as err:
        # The row's parent was deleted outside the history (an episode removed with its note
        # and attribution): the cascade took this row, and undo must not bring back an orphan.
        # Any other constraint failing is a bug and propagates.
        if "FOREIGN KEY" not in str(err):
            raise


class History:
    """The undo/redo stacks, one per scope (a rater)."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self._db = db

    def record(self, scope: str, label: str, cs: Changeset) -> None:
        """Store a finished changeset (call inside the same transaction as the change)."""
        if not cs.changes:
            return
        self._db.execute("DELETE FROM history WHERE scope = ? AND state = 'undone'", [scope])
        self._db.table("history").insert(
            {
                "scope": scope,
                "label": label,
                "changes": json.dumps(cs.changes),
                "state": "done",
                "created_at": now(),
            }
        )

    def undo_label(self, scope: str) -> str | None:
        row = self._top(scope, "done", "DESC")
        return None if row is None else str(row["label"])

    def redo_label(self, scope: str) -> str | None:
        row = self._top(scope, "undone", "ASC")
        return None if row is None else str(row["label"])

    def undo(self, scope: str) -> str | None:
        """Undo the latest change in ``scope``; returns its label, or None if nothing to undo."""
        with write(self._db):
            row = self._top(scope, "done", "DESC")
            if row is None:
                return None
            for ch in reversed(json.loads(row["changes"])):
                _restore(self._db, ch["table"], ch["id"], ch["before"])
            self._db.table("history").update(row["id"], {"state": "undone"})
            return str(row["label"])

    def redo(self, scope: str) -> str | None:
        """Redo the earliest undone change in ``scope``; returns its label, or None."""
        with write(self._db):
            row = self._top(scope, "undone", "ASC")
            if row is None:
                return None
            for ch in json.loads(row["changes"]):
                _restore(self._db, ch["table"], ch["id"], ch["after"])
            self._db.table("history").update(row["id"], {"state": "done"})
            return str(row["label"])

    def _top(self, scope: str, state: str, order: str) -> Row | None:
        rows = list(
            self._db.table("history").rows_where(
                "scope = ? AND state = ?", [scope, state], order_by=f"id {order}", limit=1
            )
        )
        return rows[0] if rows else None
