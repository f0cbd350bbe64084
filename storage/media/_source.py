"""FrameSource: what a player reads frames from (cache, then seek cache, then exact decode)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType

from storage.media._cache import FrameCache
from storage.media._index import VideoIndex
from storage.media._prefetch import Prefetcher
from storage.media._proxy import DEFAULT_STORE_CRF
from storage.media._reader import FrameReader
from storage.media._store import FrameStore
from storage.media._types import Image


class FrameSource:
    """Frames of one video for a player: cached, from the seek cache when built, else exact.

    `frame(i)` looks in the in-memory FrameCache, then in the FrameStore (the H.264 proxy seek
    cache, if built), and only then decodes the original file with a FrameReader. `prefetch` plans
    decode-ahead on one internal background thread (the simplest thing that keeps a decoder on
    one thread); a new plan replaces the previous one. `ensure_store` builds the seek cache; call
    it from a background thread or job.

    Thread-safe: `frame` may be called from any thread. Returned arrays are shared with the cache
    and read-only.
    """

    def __init__(
        self,
        path: Path,
        index: VideoIndex,
        *,
        store_path: Path | None,
        cache_bytes: int = 256 * 2**20,
        store_crf: int = DEFAULT_STORE_CRF,
    ) -> None:
        """`store_crf` is the seek cache's quality; a cache built with another is rebuilt."""
        self._path = path
        self._index = index
        self._store_path = store_path
        self._store_crf = store_crf
        self._cache = FrameCache(cache_bytes)
        self._store = (
            FrameStore.open(store_path, index, crf=store_crf) if store_path is not None else None
        )
        self._closed = False
        # One reader for callers of frame(), shared under a lock, and one owned by the
        # prefetch thread, so a long prefetch decode never holds up a frame someone waits for.
        self._reader: FrameReader | None = None
        self._reader_lock = threading.Lock()
        self._build_lock = threading.Lock()
        self._prefetch_reader: FrameReader | None = None
        self._prefetcher = Prefetcher(
            self._load_ahead, self._cache, on_exit=self._close_prefetch_reader
        )

    @property
    def index(self) -> VideoIndex:
        """The index of the video."""
        return self._index

    @property
    def cache(self) -> FrameCache:
        """The in-memory cache of decoded frames."""
        return self._cache

    @property
    def seekable_fast(self) -> bool:
        """Whether the seek cache is built, so any frame loads in a few milliseconds."""
        return self._store is not None

    def frame(self, i: int) -> Image:
        """Frame `i` as HxWx3 uint8 RGB in display orientation (read-only, shared with the cache).

        Raises:
            IndexError: `i` is not a frame index.
            MediaError: The frame cannot be decoded.
            ValueError: The source is closed.
        """
        if not 0 <= i < self._index.frame_count:
            raise IndexError(f"frame {i} out of range 0..{self._index.frame_count - 1}")
        if self._closed:
            raise ValueError("FrameSource is closed")
        image = self._cache.get(i)
        if image is None:
            image = self._load(i)
            self._cache.put(i, image)
        return image

    def prefetch(self, center: int, direction: int, count: int) -> None:
        """Decode ahead around frame `center` in the background.

        Loads `count` frames in the direction of travel (`direction` > 0 forwards, < 0
        backwards, 0 treated as forwards) and a quarter as many (at least 2) the other way, so
        reversing is as fast as going on; backwards without the seek cache it looks further
        ahead (see below). Frames of the plan that are already cached are marked as recently
        used so they stay. Returns at once.
        """
        if self._closed or count <= 0:
            return
        step = -1 if direction < 0 else 1
        reach = count
        store = self._store
        if store is None and step < 0:
            # Without the seek cache every backward refill seeks to a keyframe and decodes
            # forward, which on a long GOP takes longer than stepping through a few frames: look
            # as far back as a quarter of the cache holds, so refills start early enough.
            width, height = self._index.display_size
            reach = max(count, self._cache.max_bytes // (4 * 3 * width * height))
        ahead = self._missing(center + step * k for k in range(1, reach + 1))
        behind = self._missing(center - step * k for k in range(1, max(2, count // 4) + 1))
        if store is not None:
            # The store decodes forward from its keyframe every few frames: load the GOP nearest
            # the playhead first, each GOP in ascending order, so every GOP is one seek.
            here = store.keyframe_before(center)
            ahead.sort(key=lambda i: (abs(store.keyframe_before(i) - here), i))
            behind.sort(key=lambda i: (abs(store.keyframe_before(i) - here), i))
        else:
            # The exact reader goes forwards cheaply but backwards only by seeking to a keyframe,
            # so load each group in ascending order. A backward group would decode the frames
            # between its keyframe and its first frame anyway: keep up to `count` of those too.
            ahead.sort()
            behind.sort()
            if step < 0 and ahead:
                low = max(self._index.keyframe_before(ahead[0]), ahead[0] - count)
                ahead = self._missing(range(low, ahead[0])) + ahead
        self._prefetcher.submit(ahead + behind)

    def wait_prefetch(self, timeout: float | None = None) -> bool:
        """Wait until the current prefetch plan is loaded; False on timeout. For tests and bench."""
        return self._prefetcher.wait_idle(timeout)

    def ensure_store(
        self,
        progress: Callable[[int, int], None] | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> None:
        """Build the seek cache at `store_path` unless it exists; slow, so not on the GUI thread.

        Does nothing without a `store_path`. Closing the source cancels a build in progress.

        Raises:
            MediaError: The video does not decode completely, or the store cannot be written.
            concurrent.futures.CancelledError: `cancel` returned True or the source was closed.
        """
        with self._build_lock:  # a second caller waits for the first build, then returns
            if self._store is not None or self._store_path is None:
                return
            store = FrameStore.open(
                self._store_path, self._index, crf=self._store_crf
            ) or FrameStore.build(
                self._path,
                self._index,
                self._store_path,
                crf=self._store_crf,
                progress=progress,
                cancel=lambda: self._closed or (cancel is not None and cancel()),
            )
            self._use_store(store)

    def _use_store(self, store: FrameStore) -> None:
        with self._reader_lock:
            if self._closed:
                store.close()
                return
            self._store = store
            # From now on frames come from the store; free the foreground decoder.
            if self._reader is not None:
                self._reader.close()
                self._reader = None

    def close(self) -> None:
        """Stop prefetching and release the file, decoders and seek cache."""
        self._closed = True
        self._prefetcher.close()
        with self._reader_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
            if self._store is not None:
                self._store.close()
                self._store = None

    def __enter__(self) -> FrameSource:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _missing(self, candidates: Iterable[int]) -> list[int]:
        """Candidates inside the video that are not cached; cached ones are marked as used."""
        n = self._index.frame_count
        return [i for i in candidates if 0 <= i < n and self._cache.get(i) is None]

    def _load(self, i: int) -> Image:
        """Frame `i` from the store if built, else decoded exactly; on the calling thread."""
        store = self._store
        if store is not None:
            return _read_only(store.read(i))
        with self._reader_lock:
            if self._closed:
                raise ValueError("FrameSource is closed")
            if self._reader is None:
                self._reader = FrameReader(self._path, self._index)
            return _read_only(self._reader.read(i))

    def _load_ahead(self, i: int) -> Image:
        """Like `_load`, on the prefetch thread, with that thread's own reader."""
        store = self._store
        if store is not None:
            self._close_prefetch_reader()
            return _read_only(store.read(i))
        if self._prefetch_reader is None:
            self._prefetch_reader = FrameReader(self._path, self._index)
        return _read_only(self._prefetch_reader.read(i))

    def _close_prefetch_reader(self) -> None:
        if self._prefetch_reader is not None:
            self._prefetch_reader.close()
            self._prefetch_reader = None


def _read_only(image: Image) -> Image:
    image.flags.writeable = False
    return image
