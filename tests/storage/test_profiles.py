"""Model profiles in the project: save, read, list, replace, delete, persist across reopen."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage import ProfileNotFoundError, Profiles, Project


def test_round_trip_list_replace_delete(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as project:
        store = Profiles(project.db)
        assert store.list() == []
        store.save("openrouter", {"base_url": "https://openrouter.ai/api/v1", "model": "g"})
        store.save("local", {"base_url": "http://127.0.0.1:8000/v1", "extra": {"a": [1, 2]}})
        assert store.list() == ["local", "openrouter"]
        assert store.get("local") == {
            "base_url": "http://127.0.0.1:8000/v1",
            "extra": {"a": [1, 2]},
        }
        assert "local" in store and "nope" not in store

        first = store.updated_at("local")
        store.save("local", {"model": "other"})  # replaces, never merges
        assert store.get("local") == {"model": "other"}
        assert store.updated_at("local") >= first

        assert store.delete("local") is True
        assert store.delete("local") is False
        assert store.list() == ["openrouter"]
        with pytest.raises(ProfileNotFoundError, match="no model profile 'local'"):
            store.get("local")


def test_profiles_persist_across_reopen(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as project:
        Profiles(project.db).save("a", {"timeout_s": 180})
    with Project.open(tmp_path / "p") as project:
        assert Profiles(project.db).get("a") == {"timeout_s": 180}


def test_bad_input_is_refused(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as project:
        store = Profiles(project.db)
        with pytest.raises(ValueError, match="non-empty name"):
            store.save(" ", {})
        with pytest.raises(ValueError, match="not JSON-serialisable"):
            store.save("x", {"f": object()})
        with pytest.raises(ValueError, match="not JSON-serialisable"):
            store.save("x", {"f": float("nan")})
        assert store.list() == []
