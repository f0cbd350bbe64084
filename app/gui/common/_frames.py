"""Frames for the player: decode off the GUI thread, decode ahead, build the seek cache.

One :class:`FrameFeed` per open video. ``request(i)`` decodes on the bridge's ``frame`` channel,
so a burst of requests while scrubbing shows only the latest frame. After each delivered frame
the feed prefetches in the direction of travel (and a little behind), so stepping either way is a
cache hit. The seek cache (``FrameStore``) is built on its own thread once per video; its
progress is a plain attribute the GUI polls, so that thread never calls into Qt.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6.QtGui import QImage

from app.gui.common._bridge import Bridge
from storage.media import DEFAULT_STORE_CRF, FrameSource, VideoIndex

log = logging.getLogger(__name__)


def to_qimage(rgb: np.ndarray) -> QImage:
    """Wrap an RGB uint8 array as a QImage that owns its pixels."""
    h, w, _ = rgb.shape
    arr = np.ascontiguousarray(rgb)
    return QImage(arr.data, w, h, 3 * w, QImage.Format.Format_RGB888).copy()


class FrameFeed:
    """Decoded frames of one video, delivered on the GUI thread."""

    def __init__(
        self,
        bridge: Bridge,
        path: Path,
        index: VideoIndex,
        store_path: Path | None,
        cache_bytes: int,
        on_frame: Callable[[int, QImage], None],
        store_crf: int = DEFAULT_STORE_CRF,
    ) -> None:
        """`store_crf` is the seek cache's quality (the window passes ``WB_FRAME_STORE_CRF``)."""
        self.index = index
        self._path = path
        self._bridge = bridge
        self._on_frame = on_frame
        self._source = FrameSource(
            path, index, store_path=store_path, cache_bytes=cache_bytes, store_crf=store_crf
        )
        self._last = -1
        self.store_progress: tuple[int, int] | None = None  # (done, total) while building
        self.store_error: str | None = None  # why the build failed; frames decode exactly
        self._closed = threading.Event()
        self._store_thread: threading.Thread | None = None
        if store_path is not None and not self._source.seekable_fast:
            self._store_thread = threading.Thread(
                target=self._build_store, name="wb-framestore", daemon=True
            )
            self._store_thread.start()

    @property
    def source(self) -> FrameSource:
        return self._source

    def request(self, i: int) -> None:
        """Ask for frame ``i``; only the newest request is shown."""
        direction = 1 if i >= self._last else -1
        self._last = i

        def work() -> tuple[int, QImage]:
            img = to_qimage(self._source.frame(i))
            self._source.prefetch(i, direction, 8)
            return i, img

        self._bridge.submit("frame", work, on_done=lambda r: self._on_frame(*r))

    def _build_store(self) -> None:
        def progress(done: int, total: int) -> None:
            self.store_progress = (done, total)  # polled by the GUI; no Qt call off-thread

        try:
            self._source.ensure_store(progress=progress, cancel=self._closed.is_set)
        except Exception as e:  # the exact decoder still works; the cache is only for speed
            if not self._closed.is_set():
                log.warning("seek cache for %s not built: %s", self._path, e)
                self.store_error = str(e) or type(e).__name__  # polled, like the progress
            return
        self.store_progress = (self.index.frame_count, self.index.frame_count)

    def close(self) -> None:
        self._closed.set()
        if self._store_thread is not None:
            self._store_thread.join(timeout=5)
        self._source.close()
