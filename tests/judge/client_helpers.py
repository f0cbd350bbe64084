"""Helpers shared by the model-client tests: a keeping recorder and a profile for a fake server."""

from __future__ import annotations

from typing import Any

from judge.models import ModelProfile
from judge.models.loopback import FakeServer
from storage import RunCall


class Records(list[RunCall]):
    """A recorder that keeps what it is given."""

    def __call__(self, record: RunCall) -> None:
        self.append(record)


def profile(srv: FakeServer, **kw: Any) -> ModelProfile:
    """A profile pointing at ``srv`` (model ``fake-model``), with ``kw`` overriding fields."""
    base: dict[str, Any] = {"name": "test", "base_url": srv.base_url, "model": "fake-model"}
    return ModelProfile(**{**base, **kw})
