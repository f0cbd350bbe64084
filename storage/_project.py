"""A project on disk: ``project.sqlite`` plus ``media/`` (content-addressed, never modified).

``arms/`` holds the files of the project's arm profiles, one folder per digest (never modified).

``cache/`` holds rebuildable data (the per-video seek cache) and may be deleted at any time.

``backups/`` holds backups (:mod:`storage._backup`); opening checks the file is a project's
before trusting it, and never creates one where one was expected (:mod:`storage._project_file`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from contextlib import AbstractContextManager
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any

import sqlite_utils

from storage._annotations import Annotations
from storage._arm_profiles import ArmProfiles
from storage._backup import backup_before_migration, backup_project
from storage._batches import Batches
from storage._blinding import Blinding
from storage._continuity_scans import ContinuityScans
from storage._db import APPLICATION_ID, SchemaTooNewError, connect, migrate, write
from storage._episode_notes import EpisodeNotes
from storage._episodes import Episodes
from storage._history import History, now
from storage._jobs import Jobs
from storage._profiles import Profiles
from storage._project_file import DB_NAME as DB_NAME  # re-exported: bundles name the file
from storage._project_file import (
    BackupInfo,
    ProjectReadOnlyError,
    application_id,
    check_ours,
    damaged,
    inspect_header,
    looks_like_project,
    open_read_only,
    read_only_reason,
    translate,
    verify,
    verify_once,
)
from storage._project_file import ProjectError as ProjectError
from storage._records import Case, Video
from storage._schema import MIGRATIONS
from storage._studies import Studies
from storage.media import VideoIndex


class Project:
    """An open project. Use :meth:`create`, :meth:`open` or :meth:`open_or_create`.

    Used as a context manager, it also turns SQLite's "malformed"/"not a database" and "attempt
    to write a readonly database" raised inside the block into the one message for each
    (:func:`storage._project_file.translate`), so every command says them the same way.
    """

    def __init__(self, root: Path, db: sqlite_utils.Database, *, read_only: bool = False) -> None:
        self.root = root
        self.db = db
        self.read_only = read_only  # opened with Project.open(readonly=True)
        self.history = History(db)
        self.annotations = Annotations(db, self.history)
        self.jobs = Jobs(db)
        self.profiles = Profiles(db)
        self.studies = Studies(db)
        self.episodes = Episodes(self)
        self.batches = Batches(self)
        self.notes = EpisodeNotes(self)
        self.arms = ArmProfiles(self)
        self.continuity = ContinuityScans(self)
        self.blinding = Blinding(db)  # blind mode: whether results are the lead's only

    # ---- lifecycle ----------------------------------------------------------------------
    @classmethod
    def create(cls, root: Path) -> Project:
        """A new, empty project in ``root`` (an empty or new folder): ``workbench init``."""
        root = Path(root)
        if os.path.lexists(root / DB_NAME):
            raise ProjectError(f"{root}: a project already exists here")
        if looks_like_project(root):  # its file is gone: that is a damaged project, not a new one
            raise damaged(root, f"{DB_NAME} is missing")
        if root.exists() and any(root.iterdir()):
            raise ProjectError(f"{root}: folder is not empty; choose an empty or new folder")
        root.mkdir(parents=True, exist_ok=True)
        try:
            return cls._open(root, new=True)
        except BaseException:  # leave the folder as empty as it was, not a file that looks damaged
            for suffix in ("", "-wal", "-shm", "-journal"):
                (root / f"{DB_NAME}{suffix}").unlink(missing_ok=True)
            raise

    @classmethod
    def open(cls, root: Path, *, readonly: bool = False) -> Project:
        """Open the project in ``root``, which must hold a sound ``project.sqlite``.

        ``readonly``: the caller only reads. The file is opened read-only, so a read-only mount
        or a file without write permission still opens; a project that must first be upgraded
        to this schema is upgraded when it can be written (with its automatic backup). Without
        it, a project that cannot be written is refused at once, saying why.
        """
        root = Path(root)
        if not os.path.lexists(root / DB_NAME):
            if looks_like_project(root):
                raise damaged(root, f"{DB_NAME} is missing")
            raise ProjectError(f"{root}: not a workbench project (no {DB_NAME})")
        inspect_header(root)
        why = read_only_reason(root)
        if readonly:
            return cls._open_read_only(root, why)
        if why is not None:
            raise ProjectReadOnlyError(
                f"the project is read-only ({why}); this command writes to it"
            )
        return cls._open(root, new=False)

    @classmethod
    def open_or_create(cls, root: Path) -> Project:
        """:meth:`open` the project in ``root``, or :meth:`create` one where none was: an
        empty or new folder. A ``project.sqlite`` that is there, even empty, is opened (and
        refused if damaged), never replaced."""
        root = Path(root)
        return cls.open(root) if os.path.lexists(root / DB_NAME) else cls.create(root)

    @classmethod
    def _open(cls, root: Path, *, new: bool) -> Project:
        path = root / DB_NAME

        def ours(db: sqlite_utils.Database) -> None:  # before anything is written to it
            if not new:
                check_ours(db, root)
                verify_once(db, root)

        try:
            db = connect(path, check=ours)
        except sqlite3.DatabaseError as e:
            raise (translate(e, root) or e) from e
        try:
            if application_id(db) == 0:  # new, or made before projects had an id
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            migrate(db, MIGRATIONS, path, before=partial(backup_before_migration, db, root))
            with write(db):
                db.table("meta").insert(
                    {"key": "project_id", "value": uuid.uuid4().hex}, ignore=True
                )
                db.table("meta").insert({"key": "created_at", "value": now()}, ignore=True)
        except sqlite3.DatabaseError as e:
            db.close()
            raise (translate(e, root) or e) from e
        except BaseException:
            db.close()
            raise
        (root / "media").mkdir(exist_ok=True)
        return cls(root, db)

    @classmethod
    def _open_read_only(cls, root: Path, why: str | None) -> Project:
        versions: list[int] = []

        def ours(db: sqlite_utils.Database) -> None:
            versions.append(check_ours(db, root))
            verify_once(db, root)

        try:
            db = open_read_only(root, check=ours)
        except sqlite3.DatabaseError as e:
            raise (translate(e, root) or e) from e
        (version,) = versions
        try:
            if version > len(MIGRATIONS):
                raise SchemaTooNewError(
                    f"{root / DB_NAME}: project schema v{version} is newer than this workbench "
                    f"supports (v{len(MIGRATIONS)}); update the workbench to open it"
                )
        except sqlite3.DatabaseError as e:
            db.close()
            raise (translate(e, root) or e) from e
        except BaseException:
            db.close()
            raise
        if version < len(MIGRATIONS):  # written by an older workbench: upgrade it first
            db.close()
            if why is not None:
                raise ProjectReadOnlyError(
                    f"the project is read-only ({why}) and was written by an older workbench "
                    f"(schema v{version}; this one reads v{len(MIGRATIONS)}): open it once "
                    "where it can be written, which upgrades it"
                )
            cls._open(root, new=False).close()
            return cls._open_read_only(root, why)
        return cls(root, db, read_only=True)

    # ---- the file itself ----------------------------------------------------------------
    def check(self, *, full: bool = False) -> str:
        """Check every page now (``quick_check``; ``full``: ``integrity_check``), whatever the
        file's size; a damaged project raises the one message. Returns what was found."""
        pragma = verify(self.db, self.root, full=full)
        size = (self.root / DB_NAME).stat().st_size
        version = self.db.table("meta").get("schema_version")["value"]
        return f"{DB_NAME} passes {pragma}: schema v{version}, {size / 1e6:.1f} MB"

    def backup(self, to: Path | None = None) -> BackupInfo:
        """A full backup (database, media, arm files) in ``to`` or ``<project>/backups``."""
        return backup_project(self.db, self.root, to)

    def transaction(self) -> AbstractContextManager[sqlite_utils.Database]:
        """One write transaction over several stores (nested blocks join it): all or nothing."""
        return write(self.db)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Project:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
        said = translate(e, self.root) if e is not None else None
        if said is not None:
            raise said from e

    # ---- paths --------------------------------------------------------------------------
    @property
    def media_dir(self) -> Path:
        return self.root / "media"

    @property
    def cache_dir(self) -> Path:
        return self.root / "cache"

    @property
    def project_id(self) -> str:
        return str(self.db.table("meta").get("project_id")["value"])

    def media_path(self, sha256: str) -> Path:
        row = self.db.table("media").get(sha256)
        return self.media_dir / str(row["rel_path"])

    # ---- cases and videos ---------------------------------------------------------------
    def cases(self) -> list[Case]:
        return [_case(r) for r in self.db.table("cases").rows_where(order_by="id")]

    def case(self, case_id: str) -> Case:
        rows = list(self.db.table("cases").rows_where("id = ?", [case_id]))
        if not rows:
            raise ProjectError(f"no case {case_id!r} in this project")
        return _case(rows[0])

    def videos(self, case_id: str | None = None) -> list[Video]:
        where, args = ("case_id = ?", [case_id]) if case_id else (None, [])
        return [_video(r) for r in self.db.table("videos").rows_where(where, args, order_by="id")]

    def video(self, video_id: str) -> Video:
        rows = list(self.db.table("videos").rows_where("id = ?", [video_id]))
        if not rows:
            raise ProjectError(f"no video {video_id!r} in this project")
        return _video(rows[0])

    def video_path(self, video: Video) -> Path:
        return self.media_path(video.media)

    def video_index(self, video: Video) -> VideoIndex:
        row = self.db.table("video_index").get(video.media)
        return VideoIndex.from_json(json.loads(row["data"]))

    def video_truth(self, video_id: str) -> dict[str, Any] | None:
        """Demo ground truth, for tests and agreement demos; never shown to raters."""
        raw = self.db.table("videos").get(video_id)["truth"]
        return dict(json.loads(raw)) if raw else None

    def store_path(self, video: Video) -> Path:
        """Where the video's seek cache lives (rebuildable; the folder is made on demand)."""
        folder = self.cache_dir / "frames"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{video.media}.wbframes"


def _case(r: dict[str, Any]) -> Case:
    return Case(**{k: r[k] for k in Case.model_fields})


def _video(r: dict[str, Any]) -> Video:
    return Video(
        **{k: r[k] for k in Video.model_fields}
        | {"source_name": r["source_name"] or "", "role": r["role"] or None}
    )
