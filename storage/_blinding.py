"""Blind mode: a project-wide switch that keeps results away from raters in the lead's project.

A study bundle blinds a rater by what it leaves out; a *shared* project (one machine, raters told
apart by ``WB_RATER``) holds everything, so the lead can put it in blind mode instead. While it is
on, whoever opens the project is a rater until they give the lead's passphrase: the window starts
in its rater view (no results, judge scores or generator names) and the CLI's results commands
refuse. The rule lives here so the window and the CLI ask the same question.

Only a salted scrypt hash of the passphrase is stored, in the project's ``meta`` table (key
``blinding``, a JSON object), so reading the project file does not reveal it. This guards against
unblinding by accident or by a menu click; it is not a security boundary against someone who can
edit ``project.sqlite`` (they can read every model name in it directly).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from typing import Any

import sqlite_utils

from annotation import UserError
from storage._db import write

_KEY = "blinding"  # meta key
MIN_PASSPHRASE = 8
# scrypt's cost (RFC 7914's interactive setting): about 0.1 s and 16 MB per check on a laptop,
# stored with each hash so a later change of cost still verifies old hashes.
_N, _R, _P, _DKLEN = 2**14, 8, 1, 32


class BlindModeError(UserError, PermissionError):
    """A results request refused by blind mode, or a wrong or unusable passphrase."""


def _derive(passphrase: str, salt: bytes, n: int, r: int, p: int, dklen: int) -> bytes:
    return hashlib.scrypt(passphrase.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=dklen)


class Blinding:
    """Blind mode of one project: on or off, and the check of the lead's passphrase."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self._db = db

    def _stored(self) -> dict[str, Any] | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", [_KEY]).fetchone()
        if row is None:
            return None
        try:
            data = json.loads(row[0])
        except ValueError:
            data = None
        if not isinstance(data, dict) or data.get("kdf") != "scrypt":
            # a damaged setting keeps the project blind: nobody can unlock it by breaking it
            raise BlindModeError(
                f"project setting {_KEY!r} is unreadable; blind mode cannot be checked "
                "(ask the lead to turn it off and on again)"
            )
        return data

    @property
    def enabled(self) -> bool:
        """Whether the project is in blind mode (a damaged setting counts as on)."""
        try:
            return self._stored() is not None
        except BlindModeError:
            return True

    def unlock(self, passphrase: str | None) -> bool:
        """True when ``passphrase`` is the lead's, or when the project is not in blind mode."""
        try:
            data = self._stored()
        except BlindModeError:
            return False
        if data is None:
            return True
        if not passphrase:
            return False
        try:
            salt = bytes.fromhex(str(data["salt"]))
            want = bytes.fromhex(str(data["hash"]))
            got = _derive(
                passphrase, salt, int(data["n"]), int(data["r"]), int(data["p"]), len(want)
            )
        except (KeyError, ValueError, TypeError):
            return False
        return hmac.compare_digest(got, want)

    def enable(self, passphrase: str) -> None:
        """Turn blind mode on with the lead's passphrase (at least 8 characters).

        Raises:
            BlindModeError: already on (turn it off with the old passphrase first), or the
                passphrase is too short.
        """
        if self._stored() is not None:  # (an unreadable setting raises its own error)
            raise BlindModeError(
                "blind mode is already on; turn it off with the lead's passphrase first"
            )
        if len(passphrase) < MIN_PASSPHRASE:
            raise BlindModeError(f"a passphrase needs at least {MIN_PASSPHRASE} characters")
        salt = secrets.token_bytes(16)
        value = {
            "kdf": "scrypt",
            "n": _N,
            "r": _R,
            "p": _P,
            "salt": salt.hex(),
            "hash": _derive(passphrase, salt, _N, _R, _P, _DKLEN).hex(),
        }
        with write(self._db):
            self._db.table("meta").upsert({"key": _KEY, "value": json.dumps(value)}, pk="key")

    def disable(self, passphrase: str | None) -> None:
        """Turn blind mode off; only the lead's passphrase does.

        Raises:
            BlindModeError: the passphrase is wrong.
        """
        if not self.enabled:
            return
        if not self.unlock(passphrase):
            raise BlindModeError("wrong passphrase: blind mode stays on")
        with write(self._db):
            self._db.execute("DELETE FROM meta WHERE key = ?", [_KEY])

    def require_lead(self, passphrase: str | None, what: str, *, how: str = "") -> None:
        """Refuse ``what`` (e.g. "the agreement table") in blind mode without the passphrase.

        ``how`` says where the caller takes a passphrase from, for the message.

        Raises:
            BlindModeError: blind mode is on and ``passphrase`` is missing or wrong.
        """
        if self.unlock(passphrase):
            return
        given = "the passphrase given is wrong" if passphrase else "no passphrase was given"
        hint = f"; give the lead's passphrase {how}" if how else ""
        raise BlindModeError(
            f"{what} is hidden: this project is in blind mode for its raters and {given}{hint}"
        )
