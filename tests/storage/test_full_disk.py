"""A full disk, for real: a small tmpfs holds the project and a ballast file fills it to the brim
(or to a chosen point) during an import, a batch of episodes and a judge worker.

An import says so in plain words and leaves the project as it was (no ``.importing`` file, no
stray media file, the same rows); a batch's jobs back off and are never failed for good by the
disk; a worker whose claims or jobs keep failing for the disk stops with a message instead of
spinning, and every job it held is claimable again. Freeing the space is all it takes to finish.

tmpfs needs root (as the tests run here and in CI); a mount that fails fails the test, naming
why: a skip would hide a CI machine that no longer runs them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest
from click.testing import CliRunner

from annotation import DiskFullError
from app.cli._main import cli
from storage import Project, import_cases
from tests.casefactory import make_case

REPO = Path(__file__).resolve().parents[2]
# The worker as `workbench worker`, with the storage backoff shortened (0.5 s … 8 s between
# tries in use; 0.1 s here), so a stop takes about a second instead of fifteen.
WORKER = (
    "import sys, storage.jobs._storage_trouble as t; t.MAX_STORAGE_WAIT_S = 0.1; "
    "from app.cli import main; sys.argv[0] = 'workbench'; main()"
)


@contextmanager
def small_disk(where: Path, size_mb: int) -> Iterator[Path]:
    """A tmpfs of ``size_mb`` MiB mounted at ``where`` for the block; unmounted after."""
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(where)],
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        pytest.fail(
            f"cannot mount a tmpfs at {where} ({done.stderr.strip() or done.returncode}): the "
            "full-disk tests need root and tmpfs (as in CI); run them as root"
        )
    try:
        yield where
    finally:
        if subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(where)], capture_output=True)  # still busy


def fill(disk: Path, leave: int = 0) -> Path:
    """Fill ``disk`` with a ballast file until not one more byte fits, then free ``leave``
    bytes; returns the ballast (delete it to free the space)."""
    ballast = disk / f"ballast-{time.monotonic_ns()}"
    fd = os.open(ballast, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        with suppress(OSError):  # without it, writing fills the disk too
            os.posix_fallocate(fd, 0, max(shutil.disk_usage(disk).free, 1))
        for chunk in (1 << 20, 1 << 16, 1 << 12, 1 << 9, 1):
            try:
                while True:
                    os.write(fd, b"\0" * chunk)
            except OSError:
                continue
    finally:
        os.close(fd)
    if leave:
        os.truncate(ballast, max(ballast.stat().st_size - leave, 0))
    return ballast


def leftovers(project: Path) -> list[str]:
    return sorted(str(p.relative_to(project)) for p in project.rglob("*.importing*"))


State = tuple[tuple[tuple[str, int], ...], str, tuple[str, ...]]


def state(root: Path) -> State:
    """What a user could see changed: row counts, the integrity check, the media files."""
    with Project.open(root) as p:
        counts = tuple((t, p.db.execute(f"SELECT COUNT(*) FROM [{t}]").fetchone()[0])
                       for t in ("cases", "videos", "media", "video_index", "jobs"))  # fmt: skip
        check = p.db.execute("PRAGMA integrity_check").fetchone()[0]
        files = tuple(sorted(str(f.relative_to(root)) for f in p.media_dir.rglob("*")))
    return counts, check, files


def noisy_case(root: Path) -> Path:
    """A case whose video is ~700 kB of noise: its copy is cut off by the disk, not finished."""
    make_case(root, "noisy", n_videos=1)
    video = root / "noisy" / "videos" / "gen_0.mp4"
    rng = np.random.default_rng(7)
    with av.open(str(video), "w") as out:
        stream = out.add_stream("libx264", rate=12)
        stream.width, stream.height, stream.pix_fmt = 160, 120, "yuv420p"
        stream.options = {"crf": "0"}
        for _ in range(24):
            img = rng.integers(0, 255, (120, 160, 3), dtype=np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    assert video.stat().st_size > 600_000
    return root / "noisy"


def test_an_import_onto_a_full_disk_says_so_and_leaves_nothing(tmp_path: Path) -> None:
    case = noisy_case(tmp_path / "cases")
    with small_disk(tmp_path / "disk", 8) as disk:
        root = disk / "p"
        Project.create(root).close()
        before = state(root)
        with Project.open(root):  # the GUI has it open: the journal files exist
            ballast = fill(disk, leave=256 << 10)  # the image fits, the video's copy does not
            res = CliRunner().invoke(cli, ["import", str(case), "--project", str(root)])
        assert res.exit_code == 2, res.output
        assert f"the disk holding {root} is full: free some space and import again" in res.output
        assert "bug" not in res.output and "Traceback" not in res.output
        assert leftovers(root) == []
        assert state(root) == before
        ballast.unlink()  # room again: the same command now works
        res = CliRunner().invoke(cli, ["import", str(case), "--project", str(root)])
        assert res.exit_code == 0, res.output
        assert "1 case(s) added" in res.output and leftovers(root) == []


def test_an_import_whose_commit_meets_a_full_disk_takes_its_files_back(
    tmp_path: Path, cases_dir: Path
) -> None:
    with small_disk(tmp_path / "disk", 8) as disk:
        root = disk / "p"
        Project.create(root).close()
        before = state(root)
        ballast: list[Path] = []

        def steps(done: int, total: int) -> None:  # every file copied in: the disk fills now
            if done == total and not ballast:
                ballast.append(fill(disk))

        with Project.open(root) as p, pytest.raises(DiskFullError) as caught:
            import_cases(p, cases_dir, steps=steps)
        assert str(caught.value) == (
            f"the disk holding {root} is full: free some space and import again"
        )
        assert ballast, "the disk was never filled"
        assert leftovers(root) == []
        assert state(root) == before  # the moved-in files went with the rolled-back rows
        ballast[0].unlink()
        with Project.open(root) as p:
            assert import_cases(p, cases_dir).videos_added == 3


def test_commands_on_a_disk_too_full_to_open_the_project_say_so(
    tmp_path: Path, cases_dir: Path
) -> None:
    """Nothing has the project open, so SQLite must make its shared-memory file first: "disk
    I/O error" (SQLITE_IOERR_SHMSIZE) is a full disk too, for the CLI and the worker alike."""
    with small_disk(tmp_path / "disk", 8) as disk:
        root = disk / "p"
        Project.create(root).close()
        ballast = fill(disk)
        res = CliRunner().invoke(cli, ["import", str(cases_dir), "--project", str(root)])
        assert res.exit_code == 2, res.output
        assert f"error: the disk holding {root} is full" in res.output, res.output
        assert "free some space and try again" in res.output and "bug" not in res.output
        code, err = run_worker_cli(root)
        assert code == 2 and f"error: the disk holding {root} is full" in err, err[-2000:]
        assert not list((tmp_path / "logs").glob("bug-*"))  # no bug report: not a bug
        ballast.unlink()
        assert state(root)[0][0] == ("cases", 0)


def run_worker_cli(root: Path, *extra: str, cwd: Path = REPO,
                   timeout: float = 60.0) -> tuple[int, str]:  # fmt: skip
    """``workbench worker --drain`` in its own process; (exit code, stderr). A worker that does
    not stop in ``timeout`` seconds is killed and fails the test."""
    cmd = [sys.executable, "-c", WORKER, "worker", "--project", str(root), "--drain",
           "--lease", "1", *extra]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        claim_errors = err.count('"worker.claim_error"')
        pytest.fail(f"the worker did not stop in {timeout:.0f} s ({claim_errors} claim errors): "
                    f"{err[-1500:]}")  # fmt: skip
    return proc.returncode, err


def jobs_of(root: Path) -> list[Any]:
    with Project.open(root) as p:
        return p.jobs.query()


def handed_back(root: Path) -> list[Any]:
    """Every job is back in the queue (or done): none failed for good because of the disk,
    none left ``running`` by the stopped worker, and no attempt spent on the disk."""
    jobs = jobs_of(root)
    for job in jobs:
        assert job.status.value in ("queued", "done"), (job.status, job.error)
        assert job.attempts == (1 if job.status.value == "done" else 0), job
    return jobs


def test_a_batch_on_a_full_disk_backs_off_stops_and_finishes_once_there_is_room(
    tmp_path: Path,
) -> None:
    from sim.batch import parse_manifest, queue_batch

    manifest = {"format": "workbench-batch/1", "name": "full",
                "scenarios": ["cook-patty"], "personas": ["novice"], "assistants": ["oracle"],
                "runs": 4}  # fmt: skip
    with small_disk(tmp_path / "disk", 16) as disk:
        root = disk / "p"
        with Project.create(root) as p:
            _, job_ids = queue_batch(p, parse_manifest(manifest, source="test"),
                                     retry_backoff_s=0.2)  # fmt: skip
        with Project.open(root):  # open elsewhere (the GUI): its journal files stay
            ballast = fill(disk, leave=96 << 10)  # a claim fits; an episode does not
            code, err = run_worker_cli(root)
        assert code == 2, err[-2000:]
        (last,) = [line for line in err.splitlines() if line.startswith("error:")]
        assert f"the disk holding {root} is full" in last and "free some space" in last, last
        assert "bug" not in last
        assert '"job.retry"' in err  # claims worked, episodes could not be stored: retried
        handed_back(root)
        ballast.unlink()
        code, err = run_worker_cli(root)
        assert code == 0, err[-2000:]
        jobs = jobs_of(root)
        assert [j.status.value for j in jobs] == ["done"] * len(job_ids), [j.error for j in jobs]
        with Project.open(root) as p:
            assert len(p.episodes.list(reference=False)) == len(job_ids)


def test_a_judge_worker_whose_disk_fills_mid_job_stops_and_hands_the_job_back(
    tmp_path: Path, cases_dir: Path
) -> None:
    from judge import ModelProfile, queue_judge, save_profile
    from judge.models.loopback import FakeServer
    from judge.video.loopback import wire_responder

    inner = wire_responder()
    ballast: list[Path] = []
    with small_disk(tmp_path / "disk", 16) as disk:

        def responder(body: dict[str, Any], n: int) -> Any:
            if not ballast:  # the job is claimed and running: now the disk fills
                ballast.append(fill(disk))
            return inner(body, n)

        root = disk / "p"
        with FakeServer(responder) as srv:
            with Project.create(root) as p:
                import_cases(p, cases_dir / "stack_blocks")
                loop = ModelProfile(name="loop", base_url=srv.base_url, model="fake-vlm",
                                    api_key_env="")  # fmt: skip
                save_profile(p.profiles, loop)
                videos = [r[0] for r in p.db.execute("SELECT id FROM videos ORDER BY id")]
                queue_judge(p, videos, profile="loop", mode="independent", retry_backoff_s=0.2)
            code, err = run_worker_cli(root)
            assert ballast, "the model was never called"
            assert code == 2, err[-2000:]
            (last,) = [line for line in err.splitlines() if line.startswith("error:")]
            assert f"the disk holding {root} is full" in last, last
            # the job it held was put back (then, or once stopped: its failure was not stored)
            assert '"job.released"' in err or '"job.retry"' in err, err[-2000:]
            handed_back(root)
            ballast[0].unlink()
            code, err = run_worker_cli(root)
        assert code == 0, err[-2000:]
        jobs = jobs_of(root)
        assert [j.status.value for j in jobs] == ["done"] * len(videos), [j.error for j in jobs]
        records = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
        assert not [r for r in records if r["event"] == "job.crashed"]
