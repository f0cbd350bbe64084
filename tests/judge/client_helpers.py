"""Helpers shared by the model-client tests: a keeping recorder and a profile for a fake server."""

from __future__ import annotations

from typing import Any

from judge._api import CallRecord
from judge._profiles import ModelProfile
from judge.loopback import FakeServer


class Records(list[CallRecord]):
    """A recorder that keeps what it is given."""

    def __call__(self, record: CallRecord) -> None:
        self.append(record)


def profile(srv: FakeServer, **kw: Any) -> ModelProfile:
    """A profile pointing at ``srv`` (model ``fake-model``), with ``kw`` overriding fields."""
    base: dict[str, Any] = {"name": "test", "base_url": srv.base_url, "model": "fake-model"}
    return ModelProfile(**{**base, **kw})
