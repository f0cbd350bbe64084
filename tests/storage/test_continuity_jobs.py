"""Continuity scans as stored evidence: the ``continuity.scan`` job run by a real worker
process, queueing what is missing, and the scans an import makes (short clips) or queues
(long ones, or any whose scan fails)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import storage._continuity_scans as kind_module
from storage import (
    CONTINUITY_KIND,
    JobStatus,
    Project,
    continuity_status,
    import_cases,
    queue_continuity_scans,
    run_worker,
)
from storage.media import MediaError
from storage.media.continuity import Scan, scan_video
from tests.casefactory import make_case

REPO = Path(__file__).resolve().parents[2]


def _scan_rows(p: Project) -> dict[str, tuple[str, str]]:
    rows = p.db.execute("SELECT sha256, version, scanned_at FROM continuity_scans").fetchall()
    return {sha: (version, at) for sha, version, at in rows}


def _video_shas(p: Project) -> list[str]:
    return sorted({v.media for v in p.videos()})


def _worker_process(root: Path) -> subprocess.CompletedProcess[str]:
    """``workbench worker --drain`` as its own process: the kind must be there with nothing
    but the CLI's own worker composition."""
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "worker", "--project", str(root), "--drain"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_job_runs_in_a_worker_process_stores_the_scan_then_is_a_no_op_until_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = tmp_path / "cases"
    make_case(cases, "stack_blocks", n_videos=2)
    monkeypatch.setattr(kind_module, "INLINE_SCAN_MAX_S", 0.0)  # every clip is "long": queued
    root = tmp_path / "p"
    with Project.create(root) as p:
        report = import_cases(p, cases)
        shas = _video_shas(p)
        assert report.scans_made == 0 and report.scans_queued == 2
        assert _scan_rows(p) == {}
        jobs = p.jobs.query()
        assert sorted(j.payload["sha256"] for j in jobs) == shas
        assert {j.kind for j in jobs} == {CONTINUITY_KIND}
        assert queue_continuity_scans(p) == 0  # already queued: not twice
        status = continuity_status(p)
        assert (status.videos, status.scanned, status.missing, status.queued) == (2, 0, 2, 2)

    out = _worker_process(root)
    assert out.returncode == 0, out.stderr[-2000:]
    with Project.open(root) as p:
        assert p.jobs.counts()["done"] == 2, [j.error for j in p.jobs.query()]
        for job in p.jobs.query():
            assert job.result_ref == f"continuity_scans:{job.payload['sha256']}"
        first = _scan_rows(p)
        assert sorted(first) == shas
        assert {v for v, _at in first.values()} == {p.continuity.current_version}
        for sha in shas:  # what the worker stored is the scan of that file
            stored = p.continuity.get(sha)
            again = scan_video(p.media_path(sha))
            assert stored is not None and stored.windows == again.windows
            assert stored.frame_scores == again.frame_scores
        status = continuity_status(p)
        assert (status.scanned, status.missing, status.queued) == (2, 0, 0)
        assert queue_continuity_scans(p) == 0  # nothing missing

        # A second job for a file already scanned at the current version changes nothing.
        p.jobs.enqueue(CONTINUITY_KIND, [{"sha256": shas[0]}])
    run_worker(root, drain=True, log=lambda _r: None)
    with Project.open(root) as p:
        assert p.jobs.counts()["done"] == 3
        assert _scan_rows(p) == first

        # A scan of another version is stale: reported missing, queued, and made again.
        p.db.execute("UPDATE continuity_scans SET version = '0-old' WHERE sha256 = ?", [shas[1]])
        p.db.conn.commit()
        assert p.continuity.get(shas[1]) is None
        status = continuity_status(p)
        assert (status.scanned, status.missing, status.stale, status.queued) == (1, 1, 1, 0)
        assert queue_continuity_scans(p) == 1
    run_worker(root, drain=True, log=lambda _r: None)
    with Project.open(root) as p:
        rows = _scan_rows(p)
        assert rows[shas[0]] == first[shas[0]]
        assert rows[shas[1]][0] == p.continuity.current_version
        assert rows[shas[1]][1] != first[shas[1]][1]
        assert p.jobs.counts()["done"] == 4


def test_job_for_a_file_not_in_the_project_fails_with_a_reason(project_root: Path) -> None:
    with Project.open(project_root) as p:
        (bad,) = p.jobs.enqueue(CONTINUITY_KIND, [{"sha256": "ab" * 32}])
        (empty,) = p.jobs.enqueue(CONTINUITY_KIND, [{}])
    run_worker(project_root, drain=True, log=lambda _r: None)
    with Project.open(project_root) as p:
        job = p.jobs.get(bad)
        assert job.status is JobStatus.FAILED and job.attempts == 1
        assert job.error is not None and "no video file abababababab" in job.error
        job = p.jobs.get(empty)
        assert job.status is JobStatus.FAILED and "'sha256'" in (job.error or "")


def test_import_scans_a_short_clip_at_once(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    make_case(cases, "stack_blocks", n_videos=2)
    steps: list[tuple[int, int]] = []
    with Project.create(tmp_path / "p") as p:
        report = import_cases(p, cases, steps=lambda done, total: steps.append((done, total)))
        assert report.scans_made == 2 and report.scans_queued == 0
        assert "2 scanned for continuity" in report.summary()
        # a video's check step waits for its scan; the count still runs 0..total, once each
        assert [d for d, _t in steps] == list(range(7)) and {t for _d, t in steps} == {6}
        for sha in _video_shas(p):
            scan = p.continuity.get(sha)
            assert scan is not None and scan.frame_count == 12
        assert p.jobs.query() == []
        again = import_cases(p, cases)  # nothing new: nothing scanned or queued
        assert (again.scans_made, again.scans_queued) == (0, 0)


def test_import_queues_a_long_clip_instead_of_scanning_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = tmp_path / "cases"
    make_case(cases, "stack_blocks", n_videos=1)
    monkeypatch.setattr(kind_module, "INLINE_SCAN_MAX_S", 0.5)  # the clip lasts 1 s
    scanned: list[Path] = []

    def watched(path: Path) -> Scan:
        scanned.append(path)
        return scan_video(path)

    monkeypatch.setattr(kind_module, "scan_video", watched)
    with Project.create(tmp_path / "p") as p:
        report = import_cases(p, cases)
        assert (report.scans_made, report.scans_queued) == (0, 1)
        assert scanned == [] and _scan_rows(p) == {}
        (job,) = p.jobs.query()
        assert job.kind == CONTINUITY_KIND and job.payload == {"sha256": _video_shas(p)[0]}
        assert job.status is JobStatus.QUEUED


def test_a_scan_that_fails_at_import_leaves_the_video_imported_and_queued(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = tmp_path / "cases"
    make_case(cases, "stack_blocks", n_videos=2)
    victim = sorted((cases / "stack_blocks" / "videos").iterdir())[0]

    def flaky(path: Path) -> Scan:
        if Path(path).name == victim.name:  # fault injection: this file's decode breaks
            raise MediaError(Path(path), "cannot decode frame 5 (injected)")
        return scan_video(path)

    monkeypatch.setattr(kind_module, "scan_video", flaky)
    with Project.create(tmp_path / "p") as p:
        report = import_cases(p, cases)
        assert report.videos_added == 2
        assert (report.scans_made, report.scans_queued) == (1, 1)
        (job,) = p.jobs.query()
        by_name = {v.source_name: v.media for v in p.videos()}
        assert job.payload == {"sha256": by_name[victim.name]}
        assert p.continuity.get(by_name[victim.name]) is None
        others = [sha for name, sha in by_name.items() if name != victim.name]
        assert p.continuity.get(others[0]) is not None
