"""A damaged ``project.sqlite`` is found, said in one message with what to do, and never replaced.

The table: 0 bytes, truncated to half, a flipped header, 4 KB flipped in the middle (a page in
use), a file that is not SQLite, and SQLite files that are not a project's. Each is opened through
the API (writer, read-only, open-or-create) and through the commands that used to hide it
(``judge status``, ``export``, ``self-test --project``, ``import``): each refuses with the one
message (exit 2), and the file is left byte for byte as it was.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli._main import cli
from storage import Project, ProjectDamagedError, ProjectError
from storage._db import APPLICATION_ID, connect, migrate
from storage._schema import MIGRATIONS

PAGE = 4096


def _project_with_data(root: Path) -> Path:
    """A project of a few hundred KB: jobs with payloads, profiles, history; no free pages."""
    with Project.create(root) as p:
        p.jobs.enqueue("judge.video", ({"video_id": f"V{i:04d}", "pad": "x" * 900}
                                       for i in range(300)), batch="b1")  # fmt: skip
        p.profiles.save("lab", {"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    db = root / "project.sqlite"
    assert db.stat().st_size > 100_000 and not (root / "project.sqlite-wal").exists()
    return db


def _zero(db: Path) -> None:
    db.write_bytes(b"")


def _half(db: Path) -> None:
    with db.open("rb+") as f:
        f.truncate(db.stat().st_size // 2)


def _flip(db: Path, start: int, length: int) -> None:
    data = bytearray(db.read_bytes())
    data[start : start + length] = bytes(b ^ 0xFF for b in data[start : start + length])
    db.write_bytes(bytes(data))


def _header(db: Path) -> None:
    _flip(db, 0, 100)


def _middle(db: Path) -> None:
    """4 KB, one whole page in the middle of the file: a b-tree page in use (no free pages)."""
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA freelist_count").fetchone()[0] == 0
    conn.close()
    _flip(db, (db.stat().st_size // PAGE // 2) * PAGE, PAGE)


def _not_sqlite(db: Path) -> None:
    db.write_bytes(b"PK\x03\x04" + os.urandom(150_000))


def _other_app(db: Path) -> None:
    db.unlink()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA application_id = 1234")
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("INSERT INTO meta VALUES ('schema_version', '3')")
    conn.commit()
    conn.close()


def _not_ours(db: Path) -> None:
    db.unlink()
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE songs (title TEXT)")
    conn.commit()
    conn.close()


DAMAGE: dict[str, Callable[[Path], None]] = {
    "0 bytes": _zero,
    "truncated to half": _half,
    "flipped header": _header,
    "4 KB flipped in the middle": _middle,
    "not SQLite": _not_sqlite,
    "another program's SQLite file": _other_app,
    "an SQLite file without our tables": _not_ours,
}
EXPECTED = {
    "0 bytes": "empty",
    "truncated to half": "truncated",
    "flipped header": "not an SQLite database",
    "4 KB flipped in the middle": "quick_check",
    "not SQLite": "not an SQLite database",
    "another program's SQLite file": "application id 0x4d2",
    "an SQLite file without our tables": "no meta table",
}


@pytest.fixture(params=sorted(DAMAGE))
def damaged(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, Path, bytes]:
    """(kind, project folder, the damaged file's bytes)."""
    kind = str(request.param)
    db = _project_with_data(tmp_path / "p")
    DAMAGE[kind](db)
    if kind == "4 KB flipped in the middle":  # the damage is real: SQLite's own check sees it
        copy = tmp_path / "copy.sqlite"
        shutil.copy(db, copy)
        conn = sqlite3.connect(copy)
        try:
            problems = conn.execute("PRAGMA integrity_check").fetchall()
        except sqlite3.DatabaseError:
            problems = [("malformed",)]
        conn.close()
        assert problems != [("ok",)]
    return kind, tmp_path / "p", db.read_bytes()


def _unchanged(root: Path, before: bytes) -> None:
    assert (root / "project.sqlite").read_bytes() == before, "the damaged file was changed"
    left = {p.name for p in root.iterdir()} - {"media", "project.sqlite"}
    assert not {n for n in left if not n.startswith("project.sqlite-")}, left


def _one_message(text: str, root: Path) -> None:
    assert f"{root / 'project.sqlite'} is damaged" in text
    assert "workbench project restore --project" in text
    empty = (root / "project.sqlite").stat().st_size == 0  # nothing to recover from
    assert ("sqlite3 " in text and ".recover | sqlite3 recovered.sqlite" in text) != empty


@pytest.mark.parametrize("how", ["open", "open read-only", "open_or_create"])
def test_the_api_refuses_each_damage_and_changes_nothing(
    damaged: tuple[str, Path, bytes], how: str
) -> None:
    kind, root, before = damaged
    with pytest.raises(ProjectDamagedError) as caught:
        if how == "open":
            Project.open(root)
        elif how == "open read-only":
            Project.open(root, readonly=True)
        else:
            Project.open_or_create(root)
    _one_message(str(caught.value), root)
    assert EXPECTED[kind] in str(caught.value)
    _unchanged(root, before)


COMMANDS = {
    "judge status": ["judge", "status", "--project", "{P}"],
    "export": ["export", "--project", "{P}"],
    "self-test --project": ["self-test", "--project", "{P}"],
    "import": ["import", "{P}/../nowhere", "--project", "{P}"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_command_says_it_in_one_line_and_exits_2(
    damaged: tuple[str, Path, bytes], command: str
) -> None:
    _kind, root, before = damaged
    args = [a.replace("{P}", str(root)) for a in COMMANDS[command]]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.output, result.output
    assert "this is a bug" not in result.output
    _one_message(errors[0], root)
    _unchanged(root, before)


def test_a_missing_file_in_a_project_folder_is_not_made_again(tmp_path: Path) -> None:
    db = _project_with_data(tmp_path / "p")
    db.unlink()
    for attempt in (Project.open, Project.open_or_create, Project.create):
        with pytest.raises(ProjectDamagedError, match=r"project\.sqlite is missing"):
            attempt(tmp_path / "p")
    assert not db.exists()
    result = CliRunner().invoke(cli, ["import", str(tmp_path / "none"), "--project",
                                      str(tmp_path / "p")])  # fmt: skip
    assert result.exit_code == 2 and "is missing" in result.output and not db.exists()


def test_a_new_project_has_our_application_id_and_an_old_one_gets_it(tmp_path: Path) -> None:
    with Project.create(tmp_path / "new") as p:
        assert p.db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    header = (tmp_path / "new" / "project.sqlite").read_bytes()[:100]
    assert int.from_bytes(header[68:72], "big") == APPLICATION_ID == 0x52574231
    old = tmp_path / "old"
    old.mkdir()
    db = connect(old / "project.sqlite")  # as every project was before ids: 0
    migrate(db, MIGRATIONS, old / "project.sqlite")
    db.close()
    with Project.open(old, readonly=True) as p:  # read-only: accepted as it is
        assert p.db.execute("PRAGMA application_id").fetchone()[0] == 0
    with Project.open(old) as p:
        assert p.db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


def test_damage_met_while_in_use_is_the_same_message(tmp_path: Path) -> None:
    """SQLite's "malformed" (by its code) inside a ``with Project.open(...)`` block becomes the
    one message; any other SQLite error stays what it is."""
    _project_with_data(tmp_path / "p")
    err = sqlite3.DatabaseError("database disk image is malformed")
    err.sqlite_errorcode = 11  # type: ignore[attr-defined]
    with (
        pytest.raises(ProjectDamagedError, match="malformed") as caught,
        Project.open(tmp_path / "p"),
    ):
        raise err
    assert caught.value.__cause__ is err
    with pytest.raises(sqlite3.OperationalError) as other, Project.open(tmp_path / "p") as p:
        p.db.execute("SELECT * FROM nope")
    assert not isinstance(other.value, ProjectError)
