"""Model profiles: validation (never a key), key resolution, and storage in the project."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import keyring
import pytest
from pydantic import ValidationError

from judge.models import (
    CallFailed,
    Message,
    ModelCallFailed,
    ModelProfile,
    OpenAIModel,
    Tool,
    load_profile,
    resolve_api_key,
    save_profile,
)
from judge.models.loopback import FakeServer, Reply
from storage import Project

BASE = {"name": "local", "base_url": "http://127.0.0.1:8000/v1", "model": "qwen-vl"}
PASTED = "sk-proj-PASTED-abcdef123456"


@pytest.fixture(autouse=True)
def _no_real_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither the developer's environment nor their keyring leaks into these tests."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr(keyring, "get_password", lambda service, user: None)


def test_defaults_follow_the_spec() -> None:
    p = ModelProfile(**BASE)
    assert (p.timeout_s, p.max_output_tokens, p.spend_cap_usd) == (180, 4096, 2.0)
    assert (p.max_retries, p.schema_retries, p.tokens_per_image) == (4, 2, 800)
    assert p.api_key_env == "OPENAI_API_KEY" and p.temperature is None


@pytest.mark.parametrize("field", ["api_key", "key", "openai_token", "client_secret", "apiKey"])
def test_key_like_fields_are_refused_without_echoing_them(field: str) -> None:
    with pytest.raises(ValidationError, match="looks like a secret") as info:
        ModelProfile(**{**BASE, field: PASTED})
    assert PASTED not in str(info.value)


def test_unknown_fields_and_bad_values_are_refused() -> None:
    with pytest.raises(ValidationError, match="Extra inputs"):
        ModelProfile(**{**BASE, "colour": "blue"})
    with pytest.raises(ValidationError, match="name of an environment variable") as info:
        ModelProfile(**{**BASE, "api_key_env": PASTED})  # the key pasted in the wrong box
    assert PASTED not in str(info.value)
    with pytest.raises(ValidationError, match="looks like a credential"):
        ModelProfile(**{**BASE, "extra_headers": {"Authorization": f"Bearer {PASTED}"}})
    with pytest.raises(ValidationError, match="credentials"):
        ModelProfile(**{**BASE, "base_url": "https://me:pw@api.example.com/v1"})
    with pytest.raises(ValidationError, match="http"):
        ModelProfile(**{**BASE, "base_url": "api.example.com"})
    with pytest.raises(ValidationError):
        ModelProfile(**{**BASE, "timeout_s": 0})


def test_profile_is_frozen_and_round_trips_through_config() -> None:
    p = ModelProfile(**BASE, price_in_per_mtok=0.3, extra_headers={"X-Title": "wb"})
    with pytest.raises(ValidationError):
        p.model = "other"  # type: ignore[misc]
    config = p.to_config()
    assert "name" not in config and config["price_in_per_mtok"] == 0.3
    assert ModelProfile.from_config("local", config) == p


def test_key_from_env_then_keyring_else_actionable_error(monkeypatch: pytest.MonkeyPatch) -> None:
    p = ModelProfile(**BASE)
    with pytest.raises(CallFailed, match=r"no API key: set OPENAI_API_KEY \(profile 'local'\)"):
        resolve_api_key(p)

    asked: list[tuple[str, str]] = []

    def fake_get(service: str, user: str) -> str | None:
        asked.append((service, user))
        return "sk-from-keyring"

    monkeypatch.setattr(keyring, "get_password", fake_get)
    assert resolve_api_key(p) == "sk-from-keyring"
    assert asked == [("rollout-workbench", "local")]
    custom = ModelProfile(**BASE, keyring_service="my-lab")
    resolve_api_key(custom)
    assert asked[-1] == ("my-lab", "local")

    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    assert resolve_api_key(p) == "sk-from-env"  # the environment wins


def test_a_broken_keyring_is_tolerated(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(service: str, user: str) -> str | None:
        raise keyring.errors.NoKeyringError("no backend")

    monkeypatch.setattr(keyring, "get_password", broken)
    with pytest.raises(CallFailed, match="no API key"):
        resolve_api_key(ModelProfile(**BASE))
    with pytest.raises(ModelCallFailed, match="no API key") as info:
        OpenAIModel(ModelProfile(**BASE))  # fails before any request
    assert info.value.kind == "no_key" and not info.value.retryable


def test_keyless_profile_talks_to_a_keyless_server() -> None:
    tool = Tool("answer", "", {"type": "object"})
    with FakeServer([Reply("answer", {})]) as srv:
        p = ModelProfile(**{**BASE, "base_url": srv.base_url, "api_key_env": ""})
        assert resolve_api_key(p) == "not-needed"
        OpenAIModel(p).call(
            stage="s", prompt_version="v", messages=[Message("user", "hi")], tools=[tool]
        )
        assert srv.chat_requests[0].authorization == "Bearer not-needed"


def test_keyring_key_is_used_by_the_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyring, "get_password", lambda s, u: "sk-ring-777777")
    tool = Tool("answer", "", {"type": "object"})
    with FakeServer([Reply("answer", {})], expected_key="sk-ring-777777") as srv:
        p = ModelProfile(**{**BASE, "base_url": srv.base_url})
        call, _ = OpenAIModel(p).call(
            stage="s", prompt_version="v", messages=[Message("user", "hi")], tools=[tool]
        )
    assert call.name == "answer"


def test_save_and_load_through_the_project(tmp_path: Path) -> None:
    from storage import Profiles

    with Project.create(tmp_path / "p") as project:
        store = Profiles(project.db)
        p = ModelProfile(**BASE, reasoning_effort="low")
        save_profile(store, p)
        assert load_profile(store, "local") == p
        raw: dict[str, Any] = store.get("local")
        # nothing else, no key; capabilities only once probed
        assert set(raw) == set(ModelProfile.model_fields) - {"name", "capabilities"}
