"""The lead → rater direction: a blind assignment bundle out, a rater project in.

``export_assignment`` writes one ``.wbz`` file with the rater's videos (named by their anonymous
ids, remuxed without any of their metadata by :func:`storage.media.blind_copy`), each case's scene
image and goal under an opaque case token, and the rater's own order. Until the rater has passed
calibration it carries the calibration videos only. ``open_assignment`` turns it into a *rater
project*: a normal project folder the workbench opens, holding only those blinded cases and
videos (no roles, models or seeds), with the origin (lead project, study, rater) in its ``meta``
table. The way back, the rater's work to the lead, is :mod:`storage.bundles._work`; bundle
verification (truncation, edits, foreign project, newer schema) is in
:mod:`storage.bundles._format`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from storage._db import write
from storage._history import now
from storage._project import DB_NAME, Project
from storage._records import NO_ROLE
from storage._schema import MIGRATIONS
from storage._staging import Staged, insert_index, rel_path
from storage._study_calibration import StudyError
from storage.bundles._format import (
    PAYLOAD,
    AssignmentPayload,
    Bundle,
    BundleCase,
    BundleError,
    BundleItem,
    read_bundle,
    write_bundle,
)
from storage.media import (
    BlindingError,
    MediaError,
    VideoIndex,
    blind_copy,
    index_video,
    probe_image,
)

SCHEMA_VERSION = len(MIGRATIONS)
_META = {"rater_id": "rater_id", "project_id": "origin_project_id", "study_id": "origin_study_id"}


@dataclass(frozen=True)
class BundleOrigin:
    """Where a rater project came from: the lead's project, the study and the rater."""

    project_id: str
    study_id: str
    rater_id: str


def bundle_origin(project: Project) -> BundleOrigin | None:
    """The origin of a rater project, or None for any other project."""
    got = dict(
        project.db.execute(
            f"SELECT key, value FROM meta WHERE key IN ({','.join('?' * len(_META))})",
            list(_META.values()),
        ).fetchall()
    )
    if len(got) < len(_META):
        return None
    return BundleOrigin(**{field: got[key] for field, key in _META.items()})


def case_token(project_id: str, study_id: str, case_id: str) -> str:
    """The opaque name a case goes by in a study's bundles (the case id may say too much)."""
    digest = hashlib.sha256(f"{project_id}:{study_id}:{case_id}".encode()).hexdigest()
    return f"C-{digest[:8].upper()}"


@dataclass(frozen=True)
class AssignmentExport:
    """What :func:`export_assignment` wrote."""

    path: Path
    study_id: str
    rater_id: str
    videos: int
    calibration_only: bool

    def summary(self) -> str:
        what = "calibration and production videos"
        if self.calibration_only:
            what = "calibration videos only (production unlocks after calibration)"
        return f"wrote {self.path}: {self.videos} video(s) for {self.rater_id}, {what}"


def export_assignment(
    project: Project, study_id: str, rater_id: str, out: Path
) -> AssignmentExport:
    """Write the rater's blind assignment to ``out`` (one file)."""
    if bundle_origin(project) is not None:
        raise StudyError(f"{project.root}: is a rater project; assignments come from the lead's")
    st = project.studies
    st.study(study_id)
    rater = st.rater(rater_id)
    items = st.assignments(study_id, rater_id)
    if not items:
        raise StudyError(f"rater {rater_id!r} has no assignments in study {study_id!r}")
    locked = not st.production_unlocked(study_id, rater_id)
    if locked:
        items = [a for a in items if a.calibration]
    pid = project.project_id
    tokens = {a.case_id: case_token(pid, study_id, a.case_id) for a in items}
    if len(set(tokens.values())) != len(tokens):
        raise StudyError(f"study {study_id!r}: two cases share a token; rename the study")
    with write_bundle(
        out,
        kind="assignment",
        schema_version=SCHEMA_VERSION,
        project_id=pid,
        study_id=study_id,
        rater_id=rater_id,
        created_at=now(),
    ) as w:
        cases = []
        for case_id, token in sorted(tokens.items(), key=lambda kv: kv[1]):
            case = project.case(case_id)
            image = project.media_path(case.initial_image)
            name = f"images/{token}{image.suffix.lower()}"
            w.add_file(name, image)
            cases.append(
                BundleCase(
                    token=token,
                    goal=case.goal,
                    domain=case.domain,
                    clutter=case.clutter,
                    image=name,
                )
            )
        listed = []
        for a in items:
            video = project.video(a.video_id)
            path = project.video_path(video)
            name = f"videos/{a.video_id}{path.suffix.lower()}"
            with tempfile.TemporaryDirectory(prefix=".wb-blind-", dir=w.out.parent) as tmp:
                blind = Path(tmp) / f"{a.video_id}{path.suffix.lower()}"
                try:
                    blind_copy(path, blind, project.video_index(video))
                except BlindingError as e:
                    raise BlindingError(path, f"video {a.video_id}: {e.problem}") from None
                w.add_file(name, blind)
            listed.append(
                BundleItem(
                    position=a.position,
                    video=a.video_id,
                    case=tokens[a.case_id],
                    file=name,
                    calibration=a.calibration,
                )
            )
        payload = AssignmentPayload(rater_name=rater.name, cases=cases, items=listed)
        w.add_json(PAYLOAD, payload.model_dump(mode="json"))
    st.set_status(
        study_id, rater_id, [a.video_id for a in items if a.status == "assigned"], "exported"
    )
    return AssignmentExport(Path(out), study_id, rater_id, len(items), locked)


@dataclass(frozen=True)
class OpenedAssignment:
    """What :func:`open_assignment` did to the rater project."""

    root: Path
    study_id: str
    rater_id: str
    videos_added: int
    videos_total: int
    already_opened: bool = False

    def summary(self) -> str:
        if self.already_opened:
            return f"{self.root}: this bundle was already opened here; nothing changed"
        return (
            f"{self.root}: rater project for {self.rater_id} in study {self.study_id}: "
            f"{self.videos_added} video(s) added, {self.videos_total} in all"
        )


def open_assignment(bundle: Path, rater_project_dir: Path) -> OpenedAssignment:
    """Create (or extend, for a later bundle of the same assignment) a blind rater project."""
    root = Path(rater_project_dir)
    with read_bundle(bundle, kind="assignment", schema_version=SCHEMA_VERSION) as b:
        payload = b.payload(AssignmentPayload)
        names = [c.image for c in payload.cases] + [i.file for i in payload.items]
        for name in names:
            if name not in b.manifest.files:
                raise BundleError(f"{b.path}: {PAYLOAD} lists {name}, which is not in the bundle")
        m = b.manifest
        origin = BundleOrigin(m.project_id, m.study_id, m.rater_id)
        fresh = not (root / DB_NAME).is_file()
        existed = root.exists()
        if fresh and existed and any(root.iterdir()):
            raise BundleError(f"{root}: folder is not empty; open the bundle into a new folder")
        try:
            with Project.open_or_create(root) as project:
                if not fresh and bundle_origin(project) != origin:
                    raise BundleError(
                        f"{root}: is not the rater project of {m.rater_id} in study "
                        f"{m.study_id} of that lead project; open the bundle into a new folder"
                    )
                if _imported(project, b.sha256):
                    n = len(project.studies.assignments(m.study_id, m.rater_id))
                    return OpenedAssignment(root, m.study_id, m.rater_id, 0, n, True)
                added = _fill(project, b, payload, origin)
                total = len(project.studies.assignments(m.study_id, m.rater_id))
        except BaseException:
            if fresh:  # leave the folder as it was: absent, or empty
                shutil.rmtree(root, ignore_errors=True)
                if existed:
                    root.mkdir(parents=True, exist_ok=True)
            raise
    return OpenedAssignment(root, m.study_id, m.rater_id, added, total)


def _imported(project: Project, sha: str) -> bool:
    return bool(
        project.db.execute("SELECT 1 FROM bundle_imports WHERE sha256 = ?", [sha]).fetchone()
    )


def _fill(project: Project, b: Bundle, payload: AssignmentPayload, origin: BundleOrigin) -> int:
    """Copy the media in and write the blinded rows, all or nothing."""
    staged: Staged = []
    media: dict[str, tuple[str, str, VideoIndex | None, int]] = {}  # sha → kind, name, index, size
    try:
        for name, shown, kind in [(c.image, c.token, "image") for c in payload.cases] + [
            (i.file, i.video, "video") for i in payload.items
        ]:
            sha = b.manifest.files[name]
            if sha in media:  # several cases may share one scene image
                continue
            suffix = Path(name).suffix
            final = project.media_dir / rel_path(sha, suffix)
            src = final
            if not final.exists():
                final.parent.mkdir(parents=True, exist_ok=True)
                src = final.with_name(f"{sha}.importing{suffix}")
                b.extract(name, src)
                staged.append((src, final))
            try:
                index = index_video(src) if kind == "video" else None
                if kind == "image":
                    probe_image(src)
            except MediaError as e:
                raise BundleError(f"{b.path}: {name}: {e}") from None
            media[sha] = (kind, f"{shown}{suffix}", index, src.stat().st_size)
        db = project.db
        with write(db):
            for field, key in _META.items():
                db.table("meta").upsert({"key": key, "value": getattr(origin, field)}, pk="key")
            db.table("raters").insert(
                {"id": origin.rater_id, "name": payload.rater_name, "created_at": now()},
                ignore=True,
            )
            for sha, (kind, shown, index, size) in media.items():
                _media_rows(project, sha, kind, shown, index, size)
            for c in payload.cases:
                db.table("cases").insert(
                    {
                        "id": c.token,
                        "goal": c.goal,
                        "domain": c.domain.value,
                        "clutter": c.clutter.value,
                        "initial_image": b.manifest.files[c.image],
                        "extra": "{}",
                        "imported_at": now(),
                    },
                    ignore=True,
                )
            db.table("studies").insert(
                {
                    "id": origin.study_id,
                    "name": origin.study_id,
                    "created_at": now(),
                    "config": json.dumps({"rater_project": True}),
                },
                ignore=True,
            )
            before = len(project.studies.assignments(origin.study_id, origin.rater_id))
            for i in payload.items:
                # No role: the real one stays in the lead's project. The column is required
                # (schema v1), so it holds the empty string, which reads back as None.
                db.table("videos").insert(
                    {
                        "id": i.video,
                        "case_id": i.case,
                        "media": b.manifest.files[i.file],
                        "role": NO_ROLE,
                        "model": None,
                        "seed": None,
                        "source_name": Path(i.file).name,
                        "truth": None,
                        "imported_at": now(),
                    },
                    ignore=True,
                )
                db.execute(
                    "INSERT OR IGNORE INTO study_videos VALUES (?, ?, ?)",
                    [origin.study_id, i.video, int(i.calibration)],
                )
                db.execute(
                    "INSERT INTO assignments (study_id, rater_id, video_id, position, status, "
                    "updated_at) VALUES (?, ?, ?, ?, 'assigned', ?) ON CONFLICT "
                    "(study_id, rater_id, video_id) DO UPDATE SET position = excluded.position",
                    [origin.study_id, origin.rater_id, i.video, i.position, now()],
                )
            db.table("bundle_imports").insert(
                {
                    "sha256": b.sha256,
                    "study_id": origin.study_id,
                    "rater_id": origin.rater_id,
                    "kind": "assignment",
                    "imported_at": now(),
                    "summary": json.dumps({"videos": len(payload.items)}),
                }
            )
            for tmp, final in staged:
                os.replace(tmp, final)
        return len(project.studies.assignments(origin.study_id, origin.rater_id)) - before
    finally:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)


def _media_rows(
    project: Project, sha: str, kind: str, shown: str, ix: VideoIndex | None, size: int
) -> None:
    db = project.db
    if db.execute("SELECT 1 FROM media WHERE sha256 = ?", [sha]).fetchone():
        return
    # The shown name is the anonymous id: the lead's file name never reaches the rater.
    db.table("media").insert(
        {
            "sha256": sha,
            "kind": kind,
            "rel_path": rel_path(sha, Path(shown).suffix),
            "bytes": size,
            "original_name": shown,
            "imported_at": now(),
        }
    )
    if ix is not None:
        insert_index(db, sha, ix)
