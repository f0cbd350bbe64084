"""A seek cache that cannot be built says so once and clears its progress from the status bar;
the player goes on decoding exactly."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import av
import numpy as np
import pytest
from pytestqt.qtbot import QtBot

from app.gui._main_window import MainWindow
from storage import Project, import_cases
from tests.casefactory import make_case

pytestmark = pytest.mark.gui


def write_faststart_video(path: Path, n: int = 120) -> None:
    """Index at the front (like a camera or a web download), so a cut-off copy still opens and
    its first frames decode: the cache build gets part of the way, then runs out of frames."""
    rng = np.random.default_rng(7)
    with av.open(str(path), "w", options={"movflags": "faststart"}) as out:
        stream = out.add_stream("libx264", rate=24)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        stream.options = {"g": "12"}
        for _ in range(n):
            img = rng.integers(0, 255, (48, 64, 3), dtype=np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)


@pytest.fixture
def truncated_project(tmp_path: Path) -> Path:
    """A project whose one video was cut off after import (a partial copy, a failing disk)."""
    folder = make_case(tmp_path / "cases", "cut_off", n_videos=1)
    write_faststart_video(folder / "videos" / "gen_0.mp4")
    with Project.create(tmp_path / "project") as p:
        import_cases(p, folder)
        (video,) = p.videos()
        media = p.video_path(video)
    data = media.read_bytes()
    media.write_bytes(data[: int(len(data) * 0.6)])
    return tmp_path / "project"


def test_failed_cache_build_clears_its_progress(
    qtbot: QtBot, truncated_project: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    w = make_window(truncated_project)
    feed = w.annotate.feed
    assert feed is not None and feed._store_thread is not None
    qtbot.waitUntil(lambda: not feed._store_thread.is_alive(), timeout=30_000)  # type: ignore[union-attr]
    assert not feed.source.seekable_fast  # the build really failed
    qtbot.waitUntil(lambda: "decoded exactly" in w.statusBar().currentMessage(), timeout=5000)
    message = w.statusBar().currentMessage()
    assert "seek cache" in message.lower() and "slower" in message
    qtbot.wait(700)  # a few polls later, the progress has not come back
    assert "Building seek cache" not in w.statusBar().currentMessage()
    assert not w.annotate._store_timer.isActive()
    # the exact decoder still shows frames
    before = w.annotate.view._image
    w.annotate.player.step(5)
    qtbot.waitUntil(lambda: w.annotate.view._image is not before)
