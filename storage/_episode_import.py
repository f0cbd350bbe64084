"""An episode from elsewhere (an episode bundle), written without holding the write lock long.

:meth:`storage.Episodes.add_video` indexes, hashes and copies a file and then writes its rows,
right for a recorder adding one video; an import that called it inside one big transaction did
all of that holding the project's write lock, and a bundle with 100,000 video entries kept
another writer out for over two minutes ("database is locked"). So an import here is:

1. before any lock: :meth:`EpisodeImport.stage_video` refuses a playlist, indexes, hashes and
   copies each file (once, however many entries name it) to a temporary name beside its place
   in ``media/``; the importer builds every row;
2. the episode is created and its rows appended in chunks (:meth:`storage.Episodes.append`,
   :meth:`EpisodeImport.add_beliefs`), each a transaction of a fraction of a second whose rows
   were validated before it took the lock;
3. one brief last transaction (:meth:`EpisodeImport.complete`, inside the caller's) writes the
   video rows, moves the staged files into place and records the bundle's digest, which is
   what marks the import done: :meth:`EpisodeImport.found` looks only for that digest, so the
   same bundle again changes nothing.

If anything fails after the episode was created, the importer deletes it, and when the block
ends on an error whatever is still staged is removed, and so is a file moved into ``media/``
whose row did not commit (a full disk at COMMIT): the project and ``media/`` are as they were.
A full disk while copying is :class:`annotation.DiskFullError`, in plain words. Only
a process killed in the middle leaves something: a ``running`` episode without the digest,
as a killed recording does (delete it; importing the bundle again makes a whole one).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from storage._db import write
from storage._episode_records import EpisodeError, check_json, check_unique
from storage._staging import MediaFile, Staged, insert_media, stage, unplace, unstage
from storage.media import MediaError, check_video_container, file_sha256, index_video

if TYPE_CHECKING:
    from storage._project import Project

CHUNK = 20_000  # rows per transaction: well under a second of the write lock
DIGEST_KEY = "bundle_sha256"  # where in sim_episodes.config an imported bundle's digest is


@dataclass(frozen=True)
class StagedVideo:
    """A checked, indexed video copied beside its place in ``media/``, not yet in the project."""

    sha256: str
    fps: float
    frames: int


class EpisodeImport:
    """One import of an episode with the content digest ``digest`` (see the module);
    use as a context manager."""

    chunk = CHUNK  # rows per transaction, for the importer's appends too

    def __init__(self, project: Project, digest: str) -> None:
        self._project = project
        self.digest = digest
        self._staged: Staged = []
        self._files: dict[str, MediaFile] = {}
        self._by_path: dict[Path, StagedVideo] = {}
        self._moved: list[Path] = []  # staged files moved into media/ by complete()

    def found(self) -> str | None:
        """The episode an earlier import of the same content became, if there is one."""
        row = self._project.db.execute(
            "SELECT id FROM sim_episodes WHERE json_extract(config_json, ?) = ? "
            "ORDER BY started LIMIT 1",
            [f"$.{DIGEST_KEY}", self.digest],
        ).fetchone()
        return None if row is None else str(row[0])

    def stage_video(self, path: Path, sha256: str | None = None) -> StagedVideo:
        """Check, index and stage the video at ``path`` (no lock held); a path staged before
        returns what it returned then. ``sha256``: the file's, if the caller hashed it already.

        Raises:
            MediaError: A playlist, not a video, unreadable, or without a frame rate.
        """
        key = Path(path).resolve()
        if key in self._by_path:
            return self._by_path[key]
        check_video_container(key)
        index = index_video(key)
        if not index.fps > 0:
            raise MediaError(key, "has no frame rate (a single frame is not a video)")
        sha = sha256 or file_sha256(key)
        if sha not in self._files:
            media = MediaFile(key, sha, "video", index)
            self._files[sha] = media
            self._staged.extend(stage(self._project, media, self._staged,
                                      again="import the bundle again"))  # fmt: skip
        staged = StagedVideo(sha, float(index.fps), int(index.frame_count))
        self._by_path[key] = staged
        return staged

    def add_beliefs(self, episode_id: str, beliefs: Sequence[tuple[int, str]]) -> None:
        """Add believed scene graphs ``(tick, graph json)`` to the episode, validated first,
        then in transactions of :attr:`chunk` rows (``Episodes.set_beliefs`` replaces all in
        one)."""
        for k, (tick, text) in enumerate(beliefs):
            if not isinstance(tick, int) or isinstance(tick, bool) or tick < 0:
                raise EpisodeError(f"beliefs[{k}].tick: expected a tick >= 0, got {tick!r}")
            check_json(text, f"beliefs[{k}].graph_json")
        check_unique([t for t, _ in beliefs], "beliefs", "tick")
        db = self._project.db
        for start in range(0, len(beliefs), self.chunk):
            with write(db):
                db.conn.executemany(
                    "INSERT INTO sim_beliefs (episode_id, tick, graph_json) VALUES (?, ?, ?)",
                    [(episode_id, t, text) for t, text in beliefs[start : start + self.chunk]],
                )

    def complete(self, episode_id: str, videos: Sequence[tuple[str, StagedVideo]]) -> None:
        """The last step, inside the caller's transaction: register ``(camera, video)`` pairs
        as the episode's videos (a later camera of the same name replaces an earlier one, as
        ``add_video`` does), move the staged files into place and record the digest."""
        project, db = self._project, self._project.db
        with write(db):
            for media in self._files.values():
                insert_media(project, media)
            db.conn.executemany(
                "INSERT INTO sim_artifacts (episode_id, kind, camera, media_sha, fps, frames) "
                "VALUES (?, 'video', ?, ?, ?, ?) ON CONFLICT (episode_id, kind, camera) "
                "DO UPDATE SET media_sha = excluded.media_sha, fps = excluded.fps, "
                "frames = excluded.frames",
                [(episode_id, cam, v.sha256, v.fps, v.frames) for cam, v in videos],
            )
            db.execute(
                "UPDATE sim_episodes SET config_json = json_set(config_json, ?, ?) WHERE id = ?",
                [f"$.{DIGEST_KEY}", self.digest, episode_id],
            )
            for tmp, final in self._staged:
                os.replace(tmp, final)
                self._moved.append(final)

    def close(self, failed: bool = False) -> None:
        """Remove whatever is still staged (nothing, after a committed :meth:`complete`) and,
        if the import ``failed``, the files :meth:`complete` moved in whose rows are not there."""
        unstage(self._staged)
        if failed:
            unplace(self._project, self._moved)
        self._staged, self._moved = [], []

    def __enter__(self) -> EpisodeImport:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close(failed=e is not None)
