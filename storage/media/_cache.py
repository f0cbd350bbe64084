"""FrameCache: a thread-safe LRU of decoded frames, bounded by bytes."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable

from storage.media._types import Image


class FrameCache:
    """Least-recently-used store of decoded frames whose total size never exceeds `max_bytes`.

    Bounded by bytes rather than frame count because frame size varies by a factor of 20 between
    a 480p and a 4K video. A frame larger than the whole bound is not cached at all. Arrays are
    stored as given, so callers should treat what `get` returns as read-only.

    Thread-safe: every method takes one lock, held only for dictionary bookkeeping.
    """

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError("max_bytes must be >= 0")
        self._max_bytes = max_bytes
        self._items: OrderedDict[Hashable, Image] = OrderedDict()
        self._bytes = 0
        self._peak = 0
        self._lock = threading.Lock()

    @property
    def max_bytes(self) -> int:
        """The bound on `current_bytes`."""
        return self._max_bytes

    @property
    def current_bytes(self) -> int:
        """Bytes of all frames held now."""
        with self._lock:
            return self._bytes

    @property
    def peak_bytes(self) -> int:
        """The largest `current_bytes` has been since creation."""
        with self._lock:
            return self._peak

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def __contains__(self, key: Hashable) -> bool:
        """Whether `key` is cached, without marking it as recently used."""
        with self._lock:
            return key in self._items

    def get(self, key: Hashable) -> Image | None:
        """The frame stored under `key` (now the most recently used), or None."""
        with self._lock:
            arr = self._items.get(key)
            if arr is not None:
                self._items.move_to_end(key)
            return arr

    def put(self, key: Hashable, arr: Image) -> None:
        """Store `arr` under `key`, evicting least recently used frames to stay in bounds."""
        size = arr.nbytes
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
            if size > self._max_bytes:
                return
            # Evict before inserting, so the total never exceeds the bound even for a moment.
            while self._bytes + size > self._max_bytes:
                _, evicted = self._items.popitem(last=False)
                self._bytes -= evicted.nbytes
            self._items[key] = arr
            self._bytes += size
            self._peak = max(self._peak, self._bytes)

    def clear(self) -> None:
        """Drop every frame (peak_bytes is kept)."""
        with self._lock:
            self._items.clear()
            self._bytes = 0
