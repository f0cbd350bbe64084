"""How big, how deep, how many a file from elsewhere may be: limits as data, checked first.

Each check refuses in one line naming the file, the field and the limit, before any of the work
(a 2 GB member is refused by its header, not after it has been read). The numbers are generous
for real use and small enough that no input takes the machine down (peak memory stays well
under 1 GB).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotation import UserError

SQLITE_MIN, SQLITE_MAX = -(2**63), 2**63 - 1


class LimitError(UserError, ValueError):
    """A file from elsewhere is bigger, deeper or longer than the workbench accepts."""


@dataclass(frozen=True)
class Limits:
    json_bytes: int = 64 * 2**20  # one JSON document (manifest, payload, meta)
    json_depth: int = 64  # nesting of objects and arrays
    member_bytes: int = 512 * 2**20  # one archive member, uncompressed
    member_ratio: int = 200  # uncompressed / compressed size of one archive member
    stream_bytes: int = 256 * 2**20  # an episode bundle's stream.jsonl
    stream_lines: int = 500_000  # lines of that stream (each becomes rows held in memory)
    line_bytes: int = 4 * 2**20  # one line of a JSON-lines stream
    text_chars: int = 20_000  # one utterance, note, label or reply text stored
    reply_bytes: int = 1 * 2**20  # one model reply kept (longer: refused, stored cut)
    videos: int = 1_000  # video entries in one bundle
    bundle_entries: int = 10_000  # goal conditions, and events, in one episode bundle
    mesh_bytes: int = 200 * 2**20  # one mesh or texture file of an arm model
    model_bodies: int = 2_000  # bodies in an arm model
    mjcf_bytes: int = 32 * 2**20  # one XML file of an arm model (the MJCF, an include)
    agent_message_bytes: int = 256 * 2**10  # one message an external agent sends


LIMITS = Limits()


def _where(source: str | Path, field: str) -> str:
    return f"{source}: {field}" if field else str(source)


def check_size(size: int, limit: int, *, source: str | Path, field: str = "",
               unit: str = "bytes") -> None:  # fmt: skip
    """Refuse ``size`` above ``limit``."""
    if size > limit:
        raise LimitError(f"{_where(source, field)} is {size:,} {unit}; the limit is {limit:,}")


def check_int(value: Any, *, source: str | Path, field: str, lo: int = SQLITE_MIN,
              hi: int = SQLITE_MAX) -> int:  # fmt: skip
    """``value`` as an int within [lo, hi] (SQLite's integer range by default); a bool, a float
    or anything else is refused."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise LimitError(f"{_where(source, field)} must be an integer, not {value!r:.40}")
    if not lo <= value <= hi:
        raise LimitError(f"{_where(source, field)} = {value!s:.40} is outside {lo}…{hi}")
    return value


def check_text(value: Any, *, source: str | Path, field: str,
               limit: int = LIMITS.text_chars) -> str:  # fmt: skip
    """``value`` as a string of at most ``limit`` characters."""
    if not isinstance(value, str):
        raise LimitError(f"{_where(source, field)} must be text, not {type(value).__name__}")
    check_size(len(value), limit, source=source, field=field, unit="characters")
    return value


def _depth(obj: Any, limit: int) -> int:
    """The nesting depth of ``obj``, walked without recursion (stops past ``limit``)."""
    deepest = 0
    stack = [(obj, 1)]
    while stack:
        item, d = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, d)
            if deepest > limit:
                return deepest
            children = item.values() if isinstance(item, dict) else item
            stack.extend((c, d + 1) for c in children if isinstance(c, dict | list))
    return deepest


def loads_json(data: bytes | str, *, source: str | Path, field: str = "",
               limits: Limits = LIMITS, max_bytes: int | None = None) -> Any:  # fmt: skip
    """Parse JSON from elsewhere: size first, then UTF-8, then nesting depth, each refused in one
    line (never a RecursionError or UnicodeDecodeError from deep inside)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    check_size(len(raw), max_bytes or limits.json_bytes, source=source, field=field)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise LimitError(f"{_where(source, field)} is not UTF-8 (byte {err.start})") from None
    try:  # the C parser raises RecursionError (cleanly) far past any depth we accept
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as err:
        why = "nested too deep" if isinstance(err, RecursionError) else str(err)
        raise LimitError(f"{_where(source, field)} is not valid JSON ({why})") from None
    if _depth(value, limits.json_depth) > limits.json_depth:
        raise LimitError(
            f"{_where(source, field)} is nested deeper than {limits.json_depth} levels"
        )
    return value


def load_json(path: Path, *, field: str = "", limits: Limits = LIMITS,
              max_bytes: int | None = None) -> Any:  # fmt: skip
    """:func:`loads_json` of a file, its size checked before it is read."""
    check_size(path.stat().st_size, max_bytes or limits.json_bytes, source=path, field=field)
    return loads_json(path.read_bytes(), source=path, field=field, limits=limits,
                      max_bytes=max_bytes)  # fmt: skip
