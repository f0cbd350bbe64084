"""The project on disk: creation, pragmas, migrations, schema version guard."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage import Project, ProjectError, SchemaTooNewError
from storage._db import connect, migrate
from storage._schema import MIGRATIONS


def test_create_sets_pragmas_and_schema(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        conn = p.db.conn
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
        assert p.db["meta"].get("schema_version")["value"] == str(len(MIGRATIONS))
        for table in ("cases", "media", "videos", "subgoals", "gate_decisions", "history"):
            assert table in p.db.table_names()
        assert (tmp_path / "p" / "media").is_dir()


def test_open_missing_project_names_the_folder(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match=str(tmp_path)):
        Project.open(tmp_path)


def test_create_refuses_non_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("hi")
    with pytest.raises(ProjectError, match="not empty"):
        Project.create(tmp_path)


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        p.db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(SchemaTooNewError, match="newer"):
        Project.open(tmp_path / "p")


def test_reopen_keeps_project_id(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        pid = p.project_id
    with Project.open(tmp_path / "p") as p:
        assert p.project_id == pid


def test_v1_project_migrates_in_place_and_keeps_data(tmp_path: Path) -> None:
    root = tmp_path / "old"
    root.mkdir()
    db = connect(root / "project.sqlite")
    migrate(db, MIGRATIONS[:1], root / "project.sqlite")  # a project written by schema v1
    db.table("raters").insert({"id": "alice", "name": "Alice", "created_at": "then"})
    db.close()
    with Project.open(root) as p:
        assert p.db.table("meta").get("schema_version")["value"] == str(len(MIGRATIONS))
        assert p.db.table("raters").get("alice")["name"] == "Alice"
        assert "jobs" in p.db.table_names()
