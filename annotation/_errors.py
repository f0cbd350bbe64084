"""The one user-facing error base of the workbench, and what every error message must not say.

Every error that means "what you gave or asked for cannot be used" — a file, a field, an id, a
setting, missing data — derives from :class:`UserError`, whichever package raises it. The CLI
catches this base once (one line, exit 2) and the GUI once (a message box); any other exception
is a bug and is reported as one, with its traceback written to a log file.

A full disk is the user's to fix too, but it reaches us from deep inside (``OSError`` ENOSPC,
SQLite's "database or disk is full"): :func:`disk_full` recognises it wherever it was raised,
and :class:`DiskFullError` says it in plain words.

An API key must never be shown or stored, yet an endpoint's error may quote it back ("Incorrect
API key provided: sk-…"). :func:`redact` removes the keys this process uses and anything shaped
like one from a text; every error the CLI, the GUI, the self-test and the worker print or log
goes through it, and :class:`RedactingFilter` does the same for ``logging``.

It lives in ``annotation`` because that is the bottom layer: every other package may import it.
"""

from __future__ import annotations

import errno
import logging
import re
import threading
from collections.abc import Iterable


class UserError(Exception):
    """A user's input or request that cannot be carried out; the message says what and why.

    Subclasses keep their historical second base (``ValueError``, ``LookupError`` …) so existing
    ``except ValueError`` callers go on working.
    """


class DiskFullError(UserError, OSError):
    """The disk (or quota) holding the project is full: nothing was half-written, and the same
    command works again once there is space. An ``OSError`` too, as the ENOSPC it replaces."""


# ---- a full disk ---------------------------------------------------------------------------

_SQLITE_FULL = 13  # "database or disk is full"
_SQLITE_IOERR_SHMSIZE = 4874  # the WAL's shared-memory file cannot grow: the disk is full
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def _chain(err: BaseException) -> Iterable[BaseException]:
    """``err`` and what caused it (a job error raised ``from`` a sqlite3 error)."""
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen and len(seen) < 20:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def disk_full(err: BaseException) -> bool:
    """Whether ``err``, or an error that caused it, says the disk or a quota is full.

    Recognised by code, not by importing ``sqlite3`` (this layer imports nothing): ``OSError``
    ENOSPC/EDQUOT, and SQLite's SQLITE_FULL and SQLITE_IOERR_SHMSIZE (the only reason a WAL
    database cannot grow its shared-memory file is a full disk).
    """
    for e in _chain(err):
        if isinstance(e, DiskFullError):
            return True
        if isinstance(e, OSError) and e.errno in _FULL_ERRNOS:
            return True
        code = getattr(e, "sqlite_errorcode", None)
        if isinstance(code, int) and (code & 0xFF == _SQLITE_FULL or code == _SQLITE_IOERR_SHMSIZE):
            return True
    return False


# ---- secrets -------------------------------------------------------------------------------

_MASK = "***"
_SHORTEST_SECRET = 6  # replacing a 1-5 character "key" everywhere would mangle every message
_VALUE = r"[^\s\"'`,;}&)\]]*[^\s\"'`,;}&)\].]"  # a token, less a full stop after it
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # an Authorization header or field, whatever its scheme: keep the scheme, hide the rest
    (
        re.compile(
            r"(?i)\b((?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token)\s+)?+)"
            rf"(?!\*\*\*){_VALUE}"
        ),
        r"\1" + _MASK,
    ),
    (re.compile(rf"(?i)\b(bearer\s+)(?!\*\*\*){_VALUE}"), r"\1" + _MASK),
    # the endpoint quoting the key it refused: "Incorrect API key provided: …"
    (
        re.compile(rf"(?i)\b(api[ _-]?key provided\s*:\s*[\"']?)(?!\*\*\*|bearer\s){_VALUE}"),
        r"\1" + _MASK,
    ),
    # api_key=…, "x-api-key": "…", OPENAI_API_KEY=…, access_token=… (not api_key_env=NAME)
    (
        re.compile(
            r"(?i)\b([\w-]*?(?:api[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|"
            r"client[_-]?secret|secret[_-]?key|password)[\"']?\s*[:=]\s*[\"']?)"
            rf"(?!\*\*\*){_VALUE}"
        ),
        r"\1" + _MASK,
    ),
    # keys by their shape: OpenAI and compatible (sk-…, sk-proj-…), Groq, xAI, Google
    (re.compile(r"\b(sk|gsk|xai)-[A-Za-z0-9_\-]{6,}"), r"\1-" + _MASK),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), _MASK),
)
_remembered: set[str] = set()
_remembered_lock = threading.Lock()


def remember_secret(value: str) -> None:
    """Have every later :func:`redact` in this process remove ``value`` (an API key just read
    from the environment or the keyring), even where nothing marks it as a key."""
    value = value.strip()
    if len(value) >= _SHORTEST_SECRET:
        with _remembered_lock:
            _remembered.add(value)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` without ``secrets``, the keys this process has read (:func:`remember_secret`),
    or anything that looks like a key: ``sk-…``, ``Bearer <token>``, ``Authorization: …``,
    ``api_key=…``, ``x-api-key: …``. Each becomes ``***`` (a scheme or prefix is kept)."""
    with _remembered_lock:
        known = set(_remembered)
    known.update(s.strip() for s in secrets if len(s.strip()) >= _SHORTEST_SECRET)
    for secret in sorted(known, key=len, reverse=True):  # a key containing another goes first
        text = text.replace(secret, _MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class RedactingFilter(logging.Filter):
    """Redacts a log record's message, exception and stack text before any handler formats it.

    Installed on the handlers the workbench writes through (:func:`redact_logging`); the record
    is rewritten in place (its arguments merged into the message), so every later handler sees
    the redacted text too.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # arguments that do not fit the format: leave it to the handler
            return True
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def redact_logging(*handlers: logging.Handler) -> None:
    """Put a :class:`RedactingFilter` on ``handlers`` (default: the root logger's handlers and
    ``logging.lastResort``, which prints warnings when nothing else is configured); a handler
    that has one already is left as it is."""
    targets: list[logging.Handler | None] = [*handlers]
    if not targets:
        targets = [*logging.getLogger().handlers, logging.lastResort]
    for handler in targets:
        if handler is not None and not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
