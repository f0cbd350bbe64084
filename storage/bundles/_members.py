"""Reading the members of a bundle from elsewhere, bounded (DESIGN: hostile until checked).

A ``.wbz`` comes from another machine. A 2 MB bundle can declare a 2 GB ``payload.json``, so
:func:`check_members` checks every member's uncompressed size and compression ratio from the
zip's directory before anything is read; :func:`read_json` and :func:`copy_hashing` stop past the
limit all the same (a header can lie); JSON is parsed by the guard (size, UTF-8, depth) and
walked for integers outside SQLite's range and texts too long to store. Each refusal is a
one-line :class:`storage.guard.LimitError` naming the bundle, the member and the field.
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path
from typing import IO, Any

from storage.guard import LIMITS, LimitError, check_int, check_size, check_text, loads_json

_CHUNK = 1 << 20
_RATIO_FLOOR = 1 << 20  # members smaller than this cannot exhaust anything, whatever their ratio


def copy_hashing(
    src: IO[bytes], dst: IO[bytes] | None, limit: int | None = None, what: str = ""
) -> str:
    """Stream ``src`` (into ``dst``), returning its sha256; past ``limit`` bytes it stops with
    a LimitError (the zip header said less, or nothing bounded it)."""
    h = hashlib.sha256()
    read = 0
    for chunk in iter(lambda: src.read(_CHUNK), b""):
        read += len(chunk)
        if limit is not None and read > limit:
            raise LimitError(f"{what}: more than {limit:,} bytes uncompressed (past what its "
                             f"zip header says); the limit is {limit:,}")  # fmt: skip
        h.update(chunk)
        if dst is not None:
            dst.write(chunk)
    return h.hexdigest()


def member_limit(name: str) -> int:
    return LIMITS.json_bytes if name.endswith(".json") else LIMITS.member_bytes


def check_members(path: Path, zf: zipfile.ZipFile) -> None:
    """Every member's declared size and compression ratio, before any member is read."""
    for info in zf.infolist():
        where = f"{info.filename} (uncompressed)"
        check_size(info.file_size, member_limit(info.filename), source=path, field=where)
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > _RATIO_FLOOR and ratio > LIMITS.member_ratio:
            raise LimitError(
                f"{path}: {info.filename} expands {ratio:,.0f} times ({info.compress_size:,} "
                f"bytes to {info.file_size:,}); the limit is {LIMITS.member_ratio} "
                "(a zip bomb, or not a bundle the workbench wrote)"
            )


def read_json(path: Path, zf: zipfile.ZipFile, name: str) -> Any:
    """A JSON member: read no further than its limit, parsed by the guard, values checked."""
    limit = member_limit(name)
    with zf.open(name) as f:
        raw = f.read(limit + 1)
    check_size(len(raw), limit, source=path, field=f"{name} (uncompressed)")
    data = loads_json(raw, source=path, field=name)
    _check_values(data, path, name)
    return data


def _check_values(data: Any, path: Path, name: str) -> None:
    """Every integer within SQLite's range and every text (keys too) storable, named by its
    place in the document (``payload.json: videos.V-1.gates.0.note``)."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        value, at = stack.pop()
        field = f"{name}: {at}" if at else name
        if isinstance(value, dict):
            for k, v in value.items():
                check_text(k, source=path, field=f"{field} (a key)")
                stack.append((v, f"{at}.{k}" if at else str(k)))
        elif isinstance(value, list):
            stack.extend((v, f"{at}.{i}" if at else str(i)) for i, v in enumerate(value))
        elif isinstance(value, str):
            check_text(value, source=path, field=field)
        elif isinstance(value, int) and not isinstance(value, bool):
            check_int(value, source=path, field=field)
