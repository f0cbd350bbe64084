"""A read-only project: the commands that only read work on it, the others say why not in one line.

Tests run as root, and root ignores file permissions, so "read-only" here is what a lab meets
most: a read-only mount (a tmpfs with the project copied in, then remounted ``ro``). The same
code path serves a user without write permission (``os.access`` answers for both). Nothing is
skipped: a machine where mount(8) fails fails these tests, saying so.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from annotation import Answer
from app.cli._main import cli
from storage import Project, ProjectReadOnlyError, import_cases
from storage._db import connect, migrate
from storage._schema import MIGRATIONS

READERS = {
    "judge status": ["judge", "status", "--project", "{P}"],
    "export": ["export", "--project", "{P}"],
    "export json": ["export", "--project", "{P}", "--format", "json"],
    "agreement": ["agreement", "--project", "{P}", "--n-boot", "50"],
    "self-test project": ["self-test", "--project", "{P}", "--json"],
}
WRITERS = {
    "judge profile add": ["judge", "profile", "add", "lab", "--project", "{P}",
                          "--base-url", "http://127.0.0.1:9/v1", "--model", "m"],
    "import": ["import", "{CASES}", "--project", "{P}"],
    "judge rescore": ["judge", "rescore", "--project", "{P}"],
}  # fmt: skip


def _run(args: list[str], project: Path, cases: Path | None = None) -> tuple[int, str]:
    filled = [a.replace("{P}", str(project)).replace("{CASES}", str(cases)) for a in args]
    result = CliRunner().invoke(cli, filled)
    assert "Traceback" not in result.output and "this is a bug" not in result.output, (
        f"{filled}\n{result.output}"
    )
    return result.exit_code, result.output


def _sh(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, check=False)


@pytest.fixture
def mount_point(tmp_path: Path) -> Iterator[Callable[[], None]]:
    """A fresh tmpfs at ``tmp_path/mnt``; the fixture's value makes it read-only."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    made = _sh("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mnt))
    if made.returncode != 0:
        pytest.fail(
            f"cannot mount a tmpfs at {mnt} ({made.stderr.strip() or made.returncode}): the "
            "read-only project tests need root and mount(8), as CI has; they are never skipped"
        )
    try:
        yield lambda: _remount_ro(mnt)
    finally:
        if _sh("umount", str(mnt)).returncode != 0:
            _sh("umount", "-l", str(mnt))


def _remount_ro(mnt: Path) -> None:
    done = _sh("mount", "-o", "remount,ro", str(mnt))
    assert done.returncode == 0, done.stderr
    assert _sh("touch", str(mnt / "probe")).returncode != 0, "the mount is still writable"


def _project(root: Path, cases: Path) -> None:
    """Two raters' decisions on one case, a queued judge job: something for every reader."""
    with Project.create(root) as p:
        import_cases(p, cases)
        for rater in ("r1", "r2"):
            sg = p.annotations.add_subgoal("stack_blocks", rater, source="red block", action="lift")
            for v in p.videos("stack_blocks"):
                p.annotations.set_answer(v.id, rater, sg.id, "T1", Answer.FAIL)
        p.jobs.enqueue("judge.video", [{"video_id": "V-x"}], batch="b1")
    assert not (root / "project.sqlite-wal").exists()  # closed cleanly: no -wal


def test_readers_work_and_writers_say_read_only(
    tmp_path: Path,
    cases_dir: Path,
    mount_point: Callable[[], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app import _self_test

    # the self-test's project checks only: the install checks have tests of their own
    keep = {"project", "model client"}
    monkeypatch.setattr(_self_test, "CHECKS", tuple(c for c in _self_test.CHECKS if c[0] in keep))
    original = tmp_path / "p"
    _project(original, cases_dir)
    expected = {n: _run(a, original) for n, a in READERS.items() if n != "self-test project"}
    copy = tmp_path / "mnt" / "p"
    shutil.copytree(original, copy)
    mount_point()
    before = (copy / "project.sqlite").read_bytes()
    for name, (code, out) in expected.items():  # the same answer as on the writable original
        assert code == 0, f"{name} on the original: {out}"
        assert _run(READERS[name], copy) == (code, out.replace(str(original), str(copy))), name
    code, out = _run(READERS["self-test project"], copy)  # its project checks read only
    assert '"check": "project", "ok": true' in out and "passes quick_check" in out, out
    assert '"check": "model client", "ok": true' in out, out
    for name, args in WRITERS.items():
        code, out = _run(args, copy, cases_dir)
        errors = [ln for ln in out.splitlines() if ln.startswith("error:")]
        assert code == 2 and len(errors) == 1, f"{name}: {out}"
        assert "the project is read-only (" in errors[0] and "mounted read-only" in errors[0]
    code, out = _run(["project", "backup", "--project", "{P}"], copy)
    assert code == 2 and "back it up elsewhere with --to" in out, out
    code, out = _run(["project", "backup", "--project", "{P}", "--to", str(tmp_path / "b")], copy)
    assert code == 0, out
    (made,) = (tmp_path / "b").iterdir()
    with Project.open(made, readonly=True) as backup:  # copied off the read-only mount
        assert backup.check().startswith("project.sqlite passes quick_check")
        assert len(backup.videos()) == 3 and backup.video_path(backup.videos()[0]).is_file()
    assert (copy / "project.sqlite").read_bytes() == before
    with pytest.raises(ProjectReadOnlyError, match="read-only"):
        Project.open(copy)
    with Project.open(copy, readonly=True) as p:
        assert p.read_only and len(p.videos()) == 3


def test_a_pending_wal_on_a_read_only_folder_needs_write_access(
    tmp_path: Path, cases_dir: Path, mount_point: Callable[[], None]
) -> None:
    """Changes still in ``-wal``: reading them needs the ``-shm`` index, made in the folder."""
    original = tmp_path / "p"
    _project(original, cases_dir)
    copy = tmp_path / "mnt" / "p"
    writer = Project.open(original)
    try:
        writer.db.execute("PRAGMA wal_autocheckpoint = 0")
        writer.jobs.enqueue("judge.video", [{"video_id": "V-y"}], batch="b2")
        assert (original / "project.sqlite-wal").stat().st_size > 0
        shutil.copytree(original, copy)  # as a crash or a copy of an open project leaves it
    finally:
        writer.close()
    mount_point()
    for name in ("judge status", "export"):
        code, out = _run(READERS[name], copy)
        assert code == 2 and "needs write access to the folder" in out, out
        assert "project.sqlite-wal holds changes" in out
    with pytest.raises(ProjectReadOnlyError, match="needs write access to the folder"):
        Project.open(copy, readonly=True)


def test_an_empty_wal_left_behind_does_not_stop_reading(
    tmp_path: Path, cases_dir: Path, mount_point: Callable[[], None]
) -> None:
    original = tmp_path / "p"
    _project(original, cases_dir)
    copy = tmp_path / "mnt" / "p"
    shutil.copytree(original, copy)
    (copy / "project.sqlite-wal").write_bytes(b"")  # what a read-only reader may leave
    mount_point()
    code, out = _run(READERS["judge status"], copy)
    assert code == 0 and "queued 1" in out, out


def test_an_old_read_only_project_says_it_needs_an_upgrade(
    tmp_path: Path, mount_point: Callable[[], None]
) -> None:
    copy = tmp_path / "mnt" / "old"
    copy.mkdir()
    db = connect(copy / "project.sqlite")
    migrate(db, MIGRATIONS[:5], copy / "project.sqlite")
    db.close()
    mount_point()
    code, out = _run(READERS["judge status"], copy)
    assert code == 2 and "written by an older workbench (schema v5" in out, out


def test_a_reader_that_writes_is_a_bug_not_a_read_only_project(tmp_path: Path) -> None:
    """On a writable project, ``readonly=True`` still refuses writes: the command that
    declared it only reads, and wrote, is wrong, and it is not told "read-only" as an excuse."""
    Project.create(tmp_path / "p").close()
    with pytest.raises(Exception) as caught, Project.open(tmp_path / "p", readonly=True) as p:
        p.jobs.enqueue("judge.video", [{"video_id": "V-z"}])
    assert "readonly" in str(caught.value) and not isinstance(caught.value, ProjectReadOnlyError)
