"""Backups: ``workbench project backup`` (online, media by hard link, itself an openable project),
``project backups``, ``project restore`` (atomic, the replaced file kept, refused while the
project is open elsewhere), and the rolling automatic backup before each schema migration."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from annotation import Answer
from app.cli._main import cli
from storage import (
    BackupError,
    Project,
    ProjectDamagedError,
    import_cases,
    list_backups,
    restore_backup,
)
from storage._backup import KEEP_AUTOMATIC
from storage._db import connect, migrate
from storage._schema import MIGRATIONS


def _project(root: Path, cases_dir: Path) -> str:
    """A project with media and one decision; returns its project id."""
    with Project.create(root) as p:
        import_cases(p, cases_dir)
        v = p.videos("stack_blocks")[0]
        sg = p.annotations.add_subgoal("stack_blocks", "r1", source="red block", action="lift")
        p.annotations.set_answer(v.id, "r1", sg.id, "T1", Answer.FAIL)
        return p.project_id


def _decisions(root: Path) -> int:
    with Project.open(root, readonly=True) as p:
        return int(p.db.execute("SELECT count(*) FROM gate_decisions").fetchone()[0])


def _cli(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert "Traceback" not in result.output and "this is a bug" not in result.output, result.output
    return result.exit_code, result.output


def test_a_backup_is_an_openable_project_with_media_linked(tmp_path: Path, cases_dir: Path) -> None:
    root = tmp_path / "p"
    pid = _project(root, cases_dir)
    # a second connection with committed changes still in the WAL: the backup sees them
    with Project.open(root) as other:
        other.db.execute("PRAGMA wal_autocheckpoint=0")
        sg = other.annotations.add_subgoal("tidy_cups", "r1", source="cup", action="place")
        v = other.videos("tidy_cups")[0]
        other.annotations.set_answer(v.id, "r1", sg.id, "T1", Answer.PASS)
        code, out = _cli("project", "backup", "--project", root)
        assert code == 0, out
    (made,) = list_backups(root)
    assert f"backed up to {made.path}" in out and made.path.parent == root / "backups"
    assert not made.automatic and made.schema_version == len(MIGRATIONS) and made.files >= 4
    with Project.open(made.path, readonly=True) as copy:  # a project of its own
        assert copy.project_id == pid
        assert copy.db.execute("SELECT count(*) FROM gate_decisions").fetchone()[0] == 2
        copy.check(full=True)
        video = copy.videos("stack_blocks")[0]
        original = root / "media" / copy.video_path(video).relative_to(made.path / "media")
        assert copy.video_path(video).stat().st_ino == original.stat().st_ino  # a hard link
    assert not (made.path / "cache").exists()


def test_backup_elsewhere_and_the_list(tmp_path: Path, cases_dir: Path) -> None:
    root = tmp_path / "p"
    _project(root, cases_dir)
    code, out = _cli("project", "backup", "--project", root, "--to", tmp_path / "elsewhere")
    assert code == 0, out
    (made,) = [p for p in (tmp_path / "elsewhere").iterdir()]
    assert (made / "project.sqlite").is_file() and json.loads((made / "backup.json").read_text())
    assert list_backups(root) == []  # --to: not in the project's own list
    code, out = _cli("project", "backups", "--project", root)
    assert code == 0 and "no backups" in out
    _cli("project", "backup", "--project", root)
    _cli("project", "backup", "--project", root)
    code, out = _cli("project", "backups", "--project", root, "--json")
    listed = json.loads(out)
    assert len(listed) == 2 and listed[0]["created"] > listed[1]["created"]  # newest first
    assert [b["name"] for b in listed] == [b.name for b in list_backups(root)]


def test_restore_after_damage_keeps_the_damaged_file(tmp_path: Path, cases_dir: Path) -> None:
    root = tmp_path / "p"
    _project(root, cases_dir)
    _cli("project", "backup", "--project", root)
    (made,) = list_backups(root)
    db = root / "project.sqlite"
    db.write_bytes(b"")  # the 0-byte file of the report
    code, out = _cli("judge", "status", "--project", root)
    assert code == 2 and f"workbench project restore --project {root} {made.name}" in out
    code, out = _cli("project", "backups", "--project", root)  # listed although damaged
    assert code == 0 and made.name in out
    code, out = _cli("project", "restore", made.name, "--project", root)
    assert code == 0, out
    (kept,) = root.glob("project.sqlite.damaged-*")
    assert kept.read_bytes() == b"" and f"kept as {kept}" in out
    assert _decisions(root) == 1
    assert not (root / "project.sqlite.restoring").exists()
    code, out = _cli("judge", "status", "--project", root)
    assert code == 0, out


def test_restore_puts_back_lost_media_and_a_healthy_file_is_kept_as_replaced(
    tmp_path: Path, cases_dir: Path
) -> None:
    root = tmp_path / "p"
    _project(root, cases_dir)
    _cli("project", "backup", "--project", root)
    (made,) = list_backups(root)
    with Project.open(root) as p:  # work after the backup, then a lost media file
        p.annotations.add_subgoal("tidy_cups", "r1", source="cup", action="place")
        lost = p.video_path(p.videos("tidy_cups")[0])
    lost.unlink()
    code, out = _cli("project", "restore", str(made.path), "--project", root)  # by its path
    assert code == 0 and "1 missing media" in out, out
    assert lost.is_file()
    (kept,) = root.glob("project.sqlite.replaced-*")
    with Project.open(root, readonly=True) as p:
        assert len(p.annotations.plan("tidy_cups", "r1")) == 0
    assert kept.stat().st_size > 0


def test_restore_is_refused_while_another_process_has_the_project_open(
    tmp_path: Path, cases_dir: Path
) -> None:
    root = tmp_path / "p"
    _project(root, cases_dir)
    _cli("project", "backup", "--project", root)
    (made,) = list_backups(root)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom storage import Project\n"
         f"p = Project.open({str(root)!r})\np.jobs.query()\nprint('open', flush=True)\n"
         "sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        before = (root / "project.sqlite").read_bytes()
        code, out = _cli("project", "restore", made.name, "--project", root)
        assert code == 2 and "open in another process" in out, out
        assert (root / "project.sqlite").read_bytes() == before
        assert not list(root.glob("project.sqlite.*-*"))
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    code, out = _cli("project", "restore", made.name, "--project", root)
    assert code == 0, out


def test_restore_refuses_other_projects_unknown_names_and_damaged_backups(
    tmp_path: Path, cases_dir: Path
) -> None:
    root, other = tmp_path / "p", tmp_path / "q"
    _project(root, cases_dir)
    Project.create(other).close()
    _cli("project", "backup", "--project", other)
    (theirs,) = list_backups(other)
    before = (root / "project.sqlite").read_bytes()
    with pytest.raises(BackupError, match="backup of another project"):
        restore_backup(root, theirs.path)
    code, out = _cli("project", "restore", "nope", "--project", root)
    assert code == 2 and "no backup 'nope'" in out
    _cli("project", "backup", "--project", root)
    (mine,) = list_backups(root)
    (mine.path / "project.sqlite").write_bytes(b"junk" * 100)
    with pytest.raises(BackupError, match="cannot be used either"):
        restore_backup(root, mine.name)
    assert (root / "project.sqlite").read_bytes() == before
    code, out = _cli("project", "restore", "nope", "--project", tmp_path / "nothing-here")
    assert code == 2 and "not a workbench project" in out
    assert not (tmp_path / "nothing-here").exists()


def test_a_damaged_project_is_not_backed_up(tmp_path: Path, cases_dir: Path) -> None:
    root = tmp_path / "p"
    _project(root, cases_dir)
    data = bytearray((root / "project.sqlite").read_bytes())
    middle = len(data) // 4096 // 2 * 4096
    data[middle : middle + 4096] = bytes(b ^ 0xFF for b in data[middle : middle + 4096])
    (root / "project.sqlite").write_bytes(bytes(data))
    code, out = _cli("project", "backup", "--project", root)
    assert code == 2 and "is damaged" in out
    assert list_backups(root) == [] and not any((root / "backups").glob(".partial-*"))


def _old_project(root: Path, version: int) -> None:
    root.mkdir()
    db = connect(root / "project.sqlite")
    migrate(db, MIGRATIONS[:version], root / "project.sqlite")
    db.table("raters").insert({"id": "alice", "name": "Alice", "created_at": "then"})
    db.close()


def test_each_migration_is_preceded_by_a_rolling_backup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "old"
    _old_project(root, 1)
    import storage._project as project_module

    for version in range(2, 3 + KEEP_AUTOMATIC):  # four upgrades, one version at a time
        monkeypatch.setattr(project_module, "MIGRATIONS", MIGRATIONS[:version])
        Project.open(root).close()
        if version == 2:  # a backup made by hand is never rotated away
            _cli("project", "backup", "--project", root)
    automatic = [b for b in list_backups(root) if b.automatic]
    assert len(automatic) == KEEP_AUTOMATIC
    assert [b.schema_version for b in automatic] == [4, 3, 2]  # the newest three, newest first
    assert automatic[0].reason == "before upgrading schema v4 to v5"
    assert len([b for b in list_backups(root) if not b.automatic]) == 1
    for b in automatic:  # the file as it was: its own schema version, its data
        raw = connect(b.path / "project.sqlite", readonly=True)
        assert raw.table("meta").get("schema_version")["value"] == str(b.schema_version)
        assert raw.table("raters").get("alice")["name"] == "Alice"
        raw.close()
    monkeypatch.undo()
    Project.open(root, readonly=True).close()  # a read-only command upgrades a writable project
    assert next(b.schema_version for b in list_backups(root) if b.automatic) == 5


def test_no_migration_without_its_backup(tmp_path: Path) -> None:
    root = tmp_path / "old"
    _old_project(root, 3)
    (root / "backups").write_text("not a folder")  # the backup cannot be made
    with pytest.raises(BackupError, match="could not back it up before upgrading"):
        Project.open(root)
    raw = connect(root / "project.sqlite", readonly=True)
    assert raw.table("meta").get("schema_version")["value"] == "3"  # left as it was
    raw.close()


def test_a_new_project_makes_no_backup(tmp_path: Path) -> None:
    Project.create(tmp_path / "p").close()
    Project.open(tmp_path / "p").close()
    assert not (tmp_path / "p" / "backups").exists()


def test_damaged_message_names_the_newest_backup(tmp_path: Path) -> None:
    Project.create(tmp_path / "p").close()
    _cli("project", "backup", "--project", tmp_path / "p")
    _cli("project", "backup", "--project", tmp_path / "p")
    newest = list_backups(tmp_path / "p")[0]
    os.truncate(tmp_path / "p" / "project.sqlite", 0)
    with pytest.raises(ProjectDamagedError, match=newest.name):
        Project.open(tmp_path / "p")
