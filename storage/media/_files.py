"""File checks, content addresses and atomic writes shared by the media modules."""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path

from storage.media._errors import MediaError


def check_readable_file(path: Path) -> None:
    """Raise MediaError unless `path` is an existing, non-empty regular file.

    Done before handing the file to FFmpeg or OpenCV, whose own errors for these cases are vague.
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        raise MediaError(path, "file not found") from None
    except OSError as exc:
        raise MediaError(path, f"cannot be read ({exc.strerror or exc})") from None
    if path.is_dir():
        raise MediaError(path, "is a folder, not a file")
    if st.st_size == 0:
        raise MediaError(path, "file is empty (0 bytes)")


def file_sha256(path: Path) -> str:
    """The sha256 of the file's bytes (hex): the name a project's ``media/`` stores it under."""
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def temp_sibling(path: Path) -> Path:
    """A unique temporary name in the folder of `path`, for write-then-rename.

    Same folder so the final ``os.replace`` is an atomic rename on the same file system; hidden
    and suffixed ``.tmp`` so a half-written file is never mistaken for the real one.
    """
    return path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
