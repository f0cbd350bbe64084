"""The real server every test here talks to: the one ``make test-real`` started (its URL in
``RW_REAL_SERVER_URL``), else one started for this session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from judge.models import ModelProfile
from tests.realserver.llama import MODEL_ALIAS, LlamaServer

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test here needs the real server: ``make test`` leaves them out (-m), and
    ``make test-real`` runs them."""
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.realserver)


@pytest.fixture(scope="session")
def real_url() -> Iterator[str]:
    given = os.environ.get("RW_REAL_SERVER_URL")
    if given:
        yield given
        return
    server = LlamaServer().start()
    try:
        yield server.base_url
    finally:
        server.stop()


def real_profile(base_url: str, name: str = "smol", **overrides: object) -> ModelProfile:
    """A profile for the real server: no key, a short timeout, small caps."""
    fields: dict[str, object] = {
        "name": name, "base_url": base_url, "model": MODEL_ALIAS, "api_key_env": "",
        "timeout_s": 120.0, "max_retries": 2, "max_output_tokens": 256, "spend_cap_usd": 1.0,
    }  # fmt: skip
    return ModelProfile.model_validate({**fields, **overrides})
