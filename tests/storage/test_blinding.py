"""Blind mode of a shared project: on with the lead's passphrase, checked, off only with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation import UserError
from storage import BlindModeError, Project

PASS = "correct horse"


def test_blind_mode_round_trip_and_only_a_hash_is_stored(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        assert not p.blinding.enabled
        assert p.blinding.unlock(None)  # not blind: everyone is the lead
        p.blinding.require_lead(None, "the leaderboard")
        p.blinding.enable(PASS)
        assert p.blinding.enabled
    with Project.open(tmp_path / "p") as p:  # stored in the project, not in the session
        assert p.blinding.enabled
        assert p.blinding.unlock(PASS)
        assert not p.blinding.unlock("wrong horse")
        assert not p.blinding.unlock("")
        assert not p.blinding.unlock(None)
        raw = p.db.execute("SELECT value FROM meta WHERE key = 'blinding'").fetchone()[0]
        assert PASS not in raw
        stored = json.loads(raw)
        assert stored["kdf"] == "scrypt" and len(bytes.fromhex(stored["salt"])) == 16
        with pytest.raises(BlindModeError, match="wrong passphrase"):
            p.blinding.disable("wrong horse")
        assert p.blinding.enabled
        p.blinding.disable(PASS)
        assert not p.blinding.enabled


def test_same_passphrase_gets_a_new_salt(tmp_path: Path) -> None:
    hashes = []
    for name in ("a", "b"):
        with Project.create(tmp_path / name) as p:
            p.blinding.enable(PASS)
            row = p.db.execute("SELECT value FROM meta WHERE key = 'blinding'").fetchone()
            hashes.append(json.loads(row[0])["hash"])
    assert hashes[0] != hashes[1]


def test_refusals_say_why(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        with pytest.raises(BlindModeError, match="at least 8 characters"):
            p.blinding.enable("short")
        p.blinding.enable(PASS)
        with pytest.raises(BlindModeError, match="already on"):
            p.blinding.enable("another passphrase")
        with pytest.raises(UserError, match=r"the agreement table is hidden.*no passphrase"):
            p.blinding.require_lead(None, "the agreement table", how="with --passphrase")
        with pytest.raises(BlindModeError, match="passphrase given is wrong; give the lead's"):
            p.blinding.require_lead("nope", "the agreement table", how="with --passphrase")
        p.blinding.require_lead(PASS, "the agreement table")


def test_a_damaged_setting_keeps_the_project_blind(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        p.db.table("meta").upsert({"key": "blinding", "value": "{broken"}, pk="key")
        assert p.blinding.enabled
        assert not p.blinding.unlock(PASS)
        with pytest.raises(BlindModeError, match="unreadable"):
            p.blinding.enable(PASS)
