"""Import case folders into a project: all or nothing, idempotent.

Everything is validated first (case files, every referenced file, images, video indexing); only
then are media copied in (to temporary names) and rows written in one transaction. On any error
the temporary files are removed and the project is exactly as it was. Media are stored by sha256,
so importing the same files again finds them already present and changes nothing.

A full disk, while copying or at the commit, is a :class:`annotation.DiskFullError` ("free some
space and import again") with nothing left behind.

Each video the import adds gets its continuity scan in the same transaction: made while the
import checks the other files if the clip is short, else queued as a ``continuity.scan`` job
(:mod:`storage.jobs._continuity_kind`); a scan that fails is queued too and never fails the import.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from annotation import DiskFullError, disk_full
from storage._caseformat import CASE_FILE, CaseFile, CaseImportError, read_case_file
from storage._continuity_scans import ImportScans
from storage._db import write
from storage._history import now
from storage._staging import (
    MediaFile,
    Staged,
    disk_full_error,
    insert_media,
    stage,
    unplace,
    unstage,
)
from storage.media import (
    MediaError,
    check_video_container,
    file_sha256,
    index_video,
    probe_image,
)

if TYPE_CHECKING:
    from storage._project import Project

Progress = Callable[[str], None]
Steps = Callable[[int, int], None]
# (case id, sha256, file, duration s, step): the step is taken once the file's scan is done
OfferScan = Callable[[str, str, Path, float, Callable[[], None]], None]


@dataclass
class ImportReport:
    cases_added: list[str] = field(default_factory=list)
    cases_unchanged: list[str] = field(default_factory=list)
    videos_added: int = 0
    videos_unchanged: int = 0
    scans_made: int = 0  # continuity scans made during the import
    scans_queued: int = 0  # continuity scans left to a job (long clips, failed scans)

    @property
    def changed(self) -> bool:
        return bool(self.cases_added or self.videos_added)

    def summary(self) -> str:
        text = (
            f"{len(self.cases_added)} case(s) added, {len(self.cases_unchanged)} unchanged; "
            f"{self.videos_added} video(s) added, {self.videos_unchanged} already present"
        )
        if self.scans_made or self.scans_queued:
            text += f"; {self.scans_made} scanned for continuity, {self.scans_queued} queued"
        return text


@dataclass(frozen=True)
class _Case:
    folder: Path
    spec: CaseFile
    image: MediaFile
    videos: tuple[MediaFile, ...]


def find_case_folders(folder: Path) -> list[Path]:
    """``folder`` itself if it holds a case.json, else its immediate subfolders that do."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CaseImportError(f"{folder}: not a folder")
    if (folder / CASE_FILE).is_file():
        return [folder]
    found = sorted(p for p in folder.iterdir() if (p / CASE_FILE).is_file())
    if not found:
        raise CaseImportError(f"{folder}: no {CASE_FILE} here or in any subfolder")
    return found


def import_cases(
    project: Project,
    folder: Path,
    progress: Progress | None = None,
    *,
    steps: Steps | None = None,
) -> ImportReport:
    """Import one case folder or a folder of case folders.

    Args:
        project: The project to import into.
        folder: A case folder, or a folder of case folders.
        progress: Called with a line of text as each case is checked.
        steps: Called as ``steps(done, total)`` from ``(0, total)`` to ``(total, total)``: one
            step per file checked (indexing a video, and scanning a short new one, are the
            slow parts) and per file copied in. It is called on the importing thread, so a GUI
            must hand it to its own thread.
    """
    say = progress or (lambda _m: None)
    folders = find_case_folders(folder)
    specs = [read_case_file(f) for f in folders]
    total = 2 * sum(1 + len(spec.videos) for spec in specs)  # check each file, then copy it
    done = 0

    def step() -> None:
        nonlocal done
        done += 1
        if steps is not None:
            steps(done, total)

    if steps is not None:
        steps(0, total)
    scans = ImportScans(project)
    staged: Staged = []
    moved: list[Path] = []  # staged files moved in place, until the transaction commits
    try:
        cases = [_validate(f, spec, say, step, scans.offer)
                 for f, spec in zip(folders, specs, strict=True)]  # fmt: skip
        ids = [c.spec.id for c in cases]
        dupes = {i for i in ids if ids.count(i) > 1}
        if dupes:
            raise CaseImportError(
                f"{folder}: case id(s) used by more than one folder: {sorted(dupes)}"
            )
        scans.collect()  # the videos' check steps come as their scans finish
        for c in cases:
            for m in (c.image, *c.videos):
                staged.extend(stage(project, m, staged, again="import again"))
                step()
        with write(project.db):
            report = _write_rows(project, cases)
            report.scans_made, report.scans_queued = scans.store()
            for tmp, final in staged:
                os.replace(tmp, final)
                moved.append(final)
    except Exception as e:  # the rows were rolled back: so are the files moved in for them
        unplace(project, moved)
        if disk_full(e) and not isinstance(e, DiskFullError):  # SQLite's "disk is full"
            raise disk_full_error(project, "import again") from e
        raise
    finally:
        scans.close()
        unstage(staged)
    return report


def _validate(
    folder: Path, spec: CaseFile, say: Progress, step: Callable[[], None], offer: OfferScan
) -> _Case:
    say(f"checking {spec.id}")
    img_path = _resolve(folder, spec.initial_image, "initial_image")
    try:
        probe_image(img_path)
    except MediaError as e:
        raise CaseImportError(f"{folder / CASE_FILE}: initial_image: {e}") from None
    image = MediaFile(img_path, file_sha256(img_path), "image")
    step()
    videos = []
    seen: dict[str, str] = {}
    for k, entry in enumerate(spec.videos):
        path = _resolve(folder, entry.file, f"videos.{k}.file")
        try:
            check_video_container(path)  # one file, not a playlist of files elsewhere
            index = index_video(path)
        except MediaError as e:
            raise CaseImportError(f"{folder / CASE_FILE}: videos.{k}: {e}") from None
        sha = file_sha256(path)
        if sha in seen:
            raise CaseImportError(f"{folder / CASE_FILE}: videos.{k}: same file as {seen[sha]}")
        seen[sha] = entry.file
        videos.append(MediaFile(path, sha, "video", index))
        offer(spec.id, sha, path, index.duration_s, step)  # a short clip's scan starts now
    return _Case(folder, spec, image, tuple(videos))


def _resolve(folder: Path, rel: str, field_name: str) -> Path:
    path = (folder / rel).resolve()
    if not path.is_relative_to(folder.resolve()):
        raise CaseImportError(
            f"{folder / CASE_FILE}: field '{field_name}': {rel!r} is outside the case folder"
        )
    if not path.is_file():
        raise CaseImportError(f"{folder / CASE_FILE}: field '{field_name}': file {rel!r} not found")
    return path


def _write_rows(project: Project, cases: list[_Case]) -> ImportReport:
    db = project.db
    report = ImportReport()
    for c in cases:
        for m in (c.image, *c.videos):
            insert_media(project, m)
        spec = c.spec
        row = {
            "id": spec.id,
            "goal": spec.goal,
            "domain": spec.domain.value,
            "clutter": spec.clutter.value,
            "initial_image": c.image.sha256,
            "extra": json.dumps(spec.extra_fields(), sort_keys=True),
        }
        existing = list(db.table("cases").rows_where("id = ?", [spec.id]))
        if existing:
            old = {k: existing[0][k] for k in row}
            if old != row:
                changed = sorted(k for k in row if old[k] != row[k])
                raise CaseImportError(
                    f"{c.folder / CASE_FILE}: case {spec.id!r} is already in the project with "
                    f"different {', '.join(changed)}; give the new case another id"
                )
        else:
            db.table("cases").insert(row | {"imported_at": now()})
        added_here = 0
        for entry, m in zip(spec.videos, c.videos, strict=True):
            hit = db.execute(
                "SELECT id FROM videos WHERE case_id = ? AND media = ?", [spec.id, m.sha256]
            ).fetchone()
            if hit:
                report.videos_unchanged += 1
                continue
            db.table("videos").insert(
                {
                    "id": _anon_id(project.project_id, spec.id, m.sha256),
                    "case_id": spec.id,
                    "media": m.sha256,
                    "role": entry.role.value,
                    "model": entry.model,
                    "seed": entry.seed,
                    "source_name": Path(entry.file).name,
                    "truth": json.dumps(entry.demo_truth) if entry.demo_truth else None,
                    "imported_at": now(),
                }
            )
            added_here += 1
        report.videos_added += added_here
        if existing:
            report.cases_unchanged.append(spec.id)
        else:
            report.cases_added.append(spec.id)
    return report


def _anon_id(project_id: str, case_id: str, sha: str) -> str:
    """A short id that reveals nothing about model, seed or file, stable for this project."""
    digest = hashlib.sha256(f"{project_id}:{case_id}:{sha}".encode()).hexdigest()
    return f"V-{digest[:8].upper()}"
