"""Model profiles: named endpoint configurations stored in the ``model_profiles`` table.

Storage only stores: a profile is a name and a JSON object. What a valid profile is (and that it
never holds an API key) is decided by ``judge`` before it calls :meth:`Profiles.save`.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Mapping
from typing import Any

import sqlite_utils

from annotation import UserError
from storage._db import write
from storage._history import now


class ProfileNotFoundError(UserError, LookupError):
    """No profile with that name in this project."""


class Profiles:
    """Save, read, list and delete model profiles (rows of ``model_profiles``)."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self._db = db

    def save(self, name: str, config: Mapping[str, Any]) -> None:
        """Insert or replace the profile ``name`` (one transaction).

        Raises:
            ValueError: the name is empty or the config is not JSON-serialisable.
        """
        if not name.strip():
            raise ValueError("a model profile needs a non-empty name")
        try:
            text = json.dumps(dict(config), sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise ValueError(f"model profile {name!r} is not JSON-serialisable: {err}") from err
        with write(self._db):
            self._db.table("model_profiles").upsert(
                {"name": name, "config": text, "updated_at": now()}, pk="name"
            )

    def get(self, name: str) -> dict[str, Any]:
        """The stored config of ``name``.

        Raises:
            ProfileNotFoundError: there is no such profile.
        """
        row = self._db.execute(
            "SELECT config FROM model_profiles WHERE name = ?", [name]
        ).fetchone()
        if row is None:
            raise ProfileNotFoundError(f"no model profile {name!r} in this project")
        return dict(json.loads(row[0]))

    def updated_at(self, name: str) -> str:
        """When ``name`` was last saved (ISO 8601, UTC)."""
        row = self._db.execute(
            "SELECT updated_at FROM model_profiles WHERE name = ?", [name]
        ).fetchone()
        if row is None:
            raise ProfileNotFoundError(f"no model profile {name!r} in this project")
        return str(row[0])

    def list(self) -> builtins.list[str]:
        """All profile names, sorted."""
        rows = self._db.execute("SELECT name FROM model_profiles ORDER BY name").fetchall()
        return [str(r[0]) for r in rows]

    def delete(self, name: str) -> bool:
        """Remove ``name``; returns whether it existed."""
        with write(self._db):
            cur = self._db.execute("DELETE FROM model_profiles WHERE name = ?", [name])
            return bool(cur.rowcount)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        row = self._db.execute("SELECT 1 FROM model_profiles WHERE name = ?", [name]).fetchone()
        return row is not None
