"""Paths named by a file stay inside their root; names that become file names are safe.

``inside(root, name)`` is the one check: ``name`` is taken as relative to ``root`` (an absolute
name, a drive, ``..`` that climbs out, a NUL byte are refused), resolved with symlinks followed,
and must still be under ``root`` resolved. ``safe_name(text)`` turns a camera or track name into
one path component (no separators, no ``..``, no control characters, not empty, bounded).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path, PurePosixPath, PureWindowsPath

from annotation import UserError

MAX_NAME = 120  # characters of a file name made from a camera or track name


class PathError(UserError, ValueError):
    """A path from a file points outside where it belongs."""


def inside(root: Path, name: str | Path, *, what: str = "path", source: str = "") -> Path:
    """``root / name`` resolved, refused unless it stays under ``root`` (symlinks followed).

    ``what`` names the field (``"video file"``, ``"include"``), ``source`` the file it came
    from; both go into the message."""
    text = str(name)
    where = f"{source}: " if source else ""
    if not text or "\x00" in text:
        raise PathError(f"{where}{what} {text!r} is not a usable path")
    posix, win = PurePosixPath(text), PureWindowsPath(text)
    if posix.is_absolute() or win.is_absolute() or win.drive:
        raise PathError(f"{where}{what} {text!r} is absolute: it must be inside {root.name}/")
    base = root.resolve()
    target = (base / text).resolve()
    if target != base and base not in target.parents:
        raise PathError(f"{where}{what} {text!r} leads outside {root.name}/ (to {target})")
    return target


_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def safe_name(text: str, *, fallback: str = "unnamed") -> str:
    """One safe path component made from ``text`` (a camera or track name): letters, digits,
    ``._+-``; anything else becomes ``_``; never ``.``/``..``, never empty, at most
    :data:`MAX_NAME` characters."""
    norm = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    out = _UNSAFE.sub("_", norm).strip("._")[:MAX_NAME]
    return out or fallback
