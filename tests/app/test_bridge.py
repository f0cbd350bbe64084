"""The bridge runs only the newest waiting request of a channel and delivers only the newest."""

from __future__ import annotations

import threading

import pytest
from pytestqt.qtbot import QtBot

from app.gui.common._bridge import Bridge

pytestmark = pytest.mark.gui


def test_a_superseded_request_that_has_not_started_never_runs(qtbot: QtBot) -> None:
    bridge = Bridge(workers=1)
    release = threading.Event()
    ran: list[str] = []
    shown: list[str] = []

    def work(name: str) -> str:
        if name == "busy":
            release.wait(5)
        ran.append(name)
        return name

    bridge.submit("other", work, "busy")  # occupies the only worker thread
    for name in ("frame 1", "frame 2", "frame 3"):  # scrubbing: three requests queue behind it
        bridge.submit("frame", work, name, on_done=shown.append)
    release.set()
    qtbot.waitUntil(lambda: shown == ["frame 3"])
    bridge.shutdown()
    assert ran == ["busy", "frame 3"]  # frames 1 and 2 were never decoded


def test_nothing_is_delivered_once_its_window_has_closed(qtbot: QtBot) -> None:
    bridge = Bridge(workers=1)
    release = threading.Event()
    finished = threading.Event()
    shown: list[str] = []

    def work() -> str:
        release.wait(5)
        finished.set()
        return "late"

    bridge.submit("episode-live", work, on_done=shown.append, on_error=shown.append)
    bridge.close()  # the window closes while the work still runs
    release.set()
    assert finished.wait(5)
    qtbot.wait(100)  # the relay's queued call has run by now
    assert shown == []
    bridge.shutdown()
