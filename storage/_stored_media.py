"""A project's media file by its sha256, for readers that may be handed any sha256."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from storage._project import Project


def stored_media_path(project: Project, sha256: str) -> Path | None:
    """Where the project keeps the media file ``sha256``; None when it holds no such file
    (:meth:`Project.media_path` is for a sha256 the project is known to have)."""
    row = project.db.execute("SELECT rel_path FROM media WHERE sha256 = ?", [sha256]).fetchone()
    return None if row is None else project.media_dir / str(row[0])
