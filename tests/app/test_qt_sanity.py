"""Guards against a known-bad Qt binding: PySide6 6.12.0 leaks a reference to None per
``processEvents()`` call, which aborts the interpreter in long sessions (and in pytest-qt's
``waitUntil``). pyproject.toml excludes that release; this test fails if it comes back."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication


def test_process_events_keeps_none_refcount(qapp: QApplication) -> None:
    before = sys.getrefcount(None)
    for _ in range(2000):
        qapp.processEvents()
    assert sys.getrefcount(None) >= before - 100
