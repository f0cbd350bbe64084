"""A project on disk: ``project.sqlite`` plus ``media/`` (content-addressed, never modified).

``arms/`` holds the files of the project's arm profiles, one folder per digest (never modified).

``cache/`` holds rebuildable data (the per-video seek cache) and may be deleted at any time.
"""

from __future__ import annotations

import json
import uuid
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import Any

import sqlite_utils

from annotation import UserError
from storage._annotations import Annotations
from storage._arm_profiles import ArmProfiles
from storage._batches import Batches
from storage._blinding import Blinding
from storage._continuity_scans import ContinuityScans
from storage._db import connect, migrate, write
from storage._episode_notes import EpisodeNotes
from storage._episodes import Episodes
from storage._history import History, now
from storage._jobs import Jobs
from storage._profiles import Profiles
from storage._records import Case, Video
from storage._schema import MIGRATIONS
from storage._studies import Studies
from storage.media import VideoIndex

DB_NAME = "project.sqlite"


class ProjectError(UserError, RuntimeError):
    """A folder that is not a usable project."""


class Project:
    """An open project. Use :meth:`create`, :meth:`open` or :meth:`open_or_create`."""

    def __init__(self, root: Path, db: sqlite_utils.Database) -> None:
        self.root = root
        self.db = db
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
        root = Path(root)
        if (root / DB_NAME).exists():
            raise ProjectError(f"{root}: a project already exists here")
        if root.exists() and any(root.iterdir()):
            raise ProjectError(f"{root}: folder is not empty; choose an empty or new folder")
        root.mkdir(parents=True, exist_ok=True)
        return cls._open(root)

    @classmethod
    def open(cls, root: Path) -> Project:
        root = Path(root)
        if not (root / DB_NAME).is_file():
            raise ProjectError(f"{root}: not a workbench project (no {DB_NAME})")
        return cls._open(root)

    @classmethod
    def open_or_create(cls, root: Path) -> Project:
        root = Path(root)
        return cls.open(root) if (root / DB_NAME).is_file() else cls.create(root)

    @classmethod
    def _open(cls, root: Path) -> Project:
        db = connect(root / DB_NAME)
        try:
            migrate(db, MIGRATIONS, root / DB_NAME)
            with write(db):
                db.table("meta").insert(
                    {"key": "project_id", "value": uuid.uuid4().hex}, ignore=True
                )
                db.table("meta").insert({"key": "created_at", "value": now()}, ignore=True)
        except Exception:
            db.close()
            raise
        (root / "media").mkdir(exist_ok=True)
        return cls(root, db)

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
