"""Prefetcher: one background thread that loads planned frames into a FrameCache."""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable

from storage.media._cache import FrameCache
from storage.media._errors import MediaError
from storage.media._types import Image

_log = logging.getLogger(__name__)


class Prefetcher:
    """Loads the frames of the latest plan into a cache, one at a time, on its own thread.

    A new plan replaces the old one rather than queueing behind it: a player that keeps moving
    only ever wants the frames around where it is now. The thread starts with the first plan and
    runs `load` for every frame; `on_exit` runs on the same thread when it stops, so a decoder
    that `load` created there can be closed by the thread that owns it.
    """

    def __init__(
        self,
        load: Callable[[int], Image],
        cache: FrameCache,
        *,
        on_exit: Callable[[], None],
        name: str = "frame-prefetch",
    ) -> None:
        self._load = load
        self._cache = cache
        self._on_exit = on_exit
        self._name = name
        self._queue: deque[int] = deque()
        self._busy = False  # a frame is being loaded right now
        self._closed = False
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def submit(self, plan: list[int]) -> None:
        """Load the frames of `plan`, in order, dropping whatever the previous plan had left."""
        with self._wake:
            if self._closed:
                return
            self._queue = deque(plan)
            if self._thread is None:
                # Daemon, so a source someone forgot to close cannot keep the app from exiting.
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._wake.notify()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until every planned frame is loaded; False if `timeout` seconds pass first."""
        with self._wake:
            return self._wake.wait_for(lambda: not self._queue and not self._busy, timeout)

    def close(self) -> None:
        """Stop after the frame being loaded, and wait for the thread to finish."""
        with self._wake:
            self._closed = True
            self._queue.clear()
            self._wake.notify()
            thread = self._thread
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        try:
            while True:
                with self._wake:
                    self._busy = False
                    self._wake.notify_all()  # for wait_idle
                    while not self._queue and not self._closed:
                        self._wake.wait()
                    if self._closed:
                        return
                    i = self._queue.popleft()
                    self._busy = True
                if i in self._cache:
                    continue
                try:
                    self._cache.put(i, self._load(i))
                except MediaError:
                    pass  # a frame that does not decode is reported when someone asks for it
                except Exception:
                    _log.exception("prefetching frame %d failed", i)
        finally:
            self._on_exit()
            with self._wake:
                self._busy = False
                self._wake.notify_all()
