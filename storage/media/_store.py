"""FrameStore: every frame of a video JPEG-compressed into one file, for fast random access.

File layout (all integers little-endian)::

    header   _HEADER struct, see _Header below; written last, so a partial file never validates
    frames   frame_count JPEG images back to back, in presentation order, display orientation
    table    frame_count + 1 uint64 offsets: frame i is bytes [table[i], table[i + 1])
"""

from __future__ import annotations

import hashlib
import mmap
import os
import struct
from collections import deque
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from storage.media._av import decoded_frames, frame_timestamp, open_video, to_bgr
from storage.media._errors import MediaError
from storage.media._files import temp_sibling
from storage.media._index import VideoIndex
from storage.media._types import Image

if TYPE_CHECKING:
    from av.video.frame import VideoFrame

_MAGIC = b"RWFSTORE"
_VERSION = 1
# magic, version, quality, frame_count, width, height, rotation, first pts, last pts,
# blake2b-128 of all pts, offset of the table.
_HEADER = struct.Struct("<8sIIQIIIqq16sQ")


@dataclass(frozen=True)
class _Header:
    version: int
    quality: int
    frame_count: int
    width: int
    height: int
    rotation: int
    first_pts: int
    last_pts: int
    pts_digest: bytes
    table_offset: int

    @staticmethod
    def for_index(index: VideoIndex, quality: int, table_offset: int) -> _Header:
        width, height = index.display_size
        return _Header(
            version=_VERSION,
            quality=quality,
            frame_count=index.frame_count,
            width=width,
            height=height,
            rotation=index.rotation,
            first_pts=int(index.pts[0]),
            last_pts=int(index.pts[-1]),
            pts_digest=_pts_digest(index),
            table_offset=table_offset,
        )

    def pack(self) -> bytes:
        return _HEADER.pack(
            _MAGIC,
            self.version,
            self.quality,
            self.frame_count,
            self.width,
            self.height,
            self.rotation,
            self.first_pts,
            self.last_pts,
            self.pts_digest,
            self.table_offset,
        )

    @staticmethod
    def unpack(data: bytes) -> _Header | None:
        if len(data) < _HEADER.size:
            return None
        magic, *fields = _HEADER.unpack_from(data)
        return _Header(*fields) if magic == _MAGIC else None

    def matches(self, index: VideoIndex) -> bool:
        """Whether this store was built for `index` (same frames, timestamps and orientation)."""
        expected = _Header.for_index(index, self.quality, self.table_offset)
        return self == expected


class FrameStore:
    """A seek cache: every frame decoded once and stored JPEG-compressed in one file.

    Built in the background with `build`; afterwards any frame decodes in a few milliseconds,
    whatever the video's keyframe spacing. Frames are stored in display orientation, so `read`
    returns the same orientation as `FrameReader.read`, within JPEG tolerance.

    `read` is thread-safe: the file is memory-mapped once and each read copies its bytes out.
    """

    def __init__(self, path: Path, mapped: mmap.mmap, offsets: npt.NDArray[np.uint64]) -> None:
        """Use `open` or `build`; this only wraps an already validated file."""
        self._path = path
        self._mm: mmap.mmap | None = mapped
        self._offsets = offsets

    @property
    def path(self) -> Path:
        """The store file."""
        return self._path

    @property
    def frame_count(self) -> int:
        """Number of frames in the store."""
        return len(self._offsets) - 1

    @staticmethod
    def build(
        video: Path,
        index: VideoIndex,
        out: Path,
        *,
        quality: int = 95,
        progress: Callable[[int, int], None] | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> FrameStore:
        """Decode every frame of `video` once and write the store to `out`.

        The store is written to a temporary file beside `out` and renamed over it at the end, so
        a partial or cancelled build never looks complete.

        Args:
            video: The video file `index` describes.
            index: Its index; every decoded frame must match it, timestamp for timestamp.
            out: Where the store goes (replaced if it exists).
            quality: JPEG quality, 1..100.
            progress: Called as ``progress(done, total)`` after each frame.
            cancel: Polled after each frame; when it returns True the build stops.

        Raises:
            MediaError: The video cannot be decoded completely (names the first missing frame),
                or `out` cannot be written.
            concurrent.futures.CancelledError: `cancel` returned True.
        """
        if not 1 <= quality <= 100:
            raise ValueError(f"quality must be 1..100, not {quality}")
        tmp = temp_sibling(out)
        try:
            try:
                with tmp.open("xb") as f, closing(_encoded_frames(video, index, quality)) as jpegs:
                    f.write(bytes(_HEADER.size))  # placeholder: the real header goes in last
                    offsets = [_HEADER.size]
                    for jpeg in jpegs:
                        f.write(jpeg)
                        offsets.append(offsets[-1] + len(jpeg))
                        if progress is not None:
                            progress(len(offsets) - 1, index.frame_count)
                        if cancel is not None and cancel():
                            raise CancelledError(f"building the seek cache of {video.name}")
                    f.write(np.array(offsets, dtype="<u8").tobytes())
                    f.seek(0)
                    f.write(_Header.for_index(index, quality, offsets[-1]).pack())
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, out)
            finally:
                tmp.unlink(missing_ok=True)
        except OSError as exc:
            raise MediaError(out, f"cannot write the seek cache ({exc.strerror or exc})") from None
        store = FrameStore.open(out, index)
        if store is None:
            raise MediaError(out, "the seek cache was written but does not read back")
        return store

    @staticmethod
    def open(path: Path, index: VideoIndex) -> FrameStore | None:
        """Open the store at `path` if it is complete and was built for `index`, else None.

        None covers a missing file, a partial or corrupt one, and a stale one (built for a
        different video or an older format): in every case the caller should rebuild.
        """
        try:
            with path.open("rb") as f:
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # ValueError: mapping an empty file
            return None
        header = _Header.unpack(mapped[: _HEADER.size])
        table_end = (header.table_offset + 8 * (header.frame_count + 1)) if header else -1
        if header is None or not header.matches(index) or table_end != len(mapped):
            mapped.close()
            return None
        offsets = np.frombuffer(
            mapped[header.table_offset :], dtype="<u8", count=header.frame_count + 1
        ).astype(np.uint64)
        if (
            offsets[0] != _HEADER.size
            or offsets[-1] != header.table_offset
            or np.any(np.diff(offsets.astype(np.int64)) <= 0)
        ):
            mapped.close()
            return None
        return FrameStore(path, mapped, offsets)

    def read(self, i: int) -> Image:
        """Frame `i` as HxWx3 uint8 RGB in display orientation, C-contiguous.

        Raises:
            IndexError: `i` is not a frame index.
            MediaError: The stored JPEG does not decode (the store file was damaged).
            ValueError: The store is closed.
        """
        import cv2

        if not 0 <= i < self.frame_count:
            raise IndexError(f"frame {i} out of range 0..{self.frame_count - 1}")
        mm = self._mm
        if mm is None:
            raise ValueError("FrameStore is closed")
        # Slicing copies the bytes out while holding the GIL, so a concurrent close() cannot
        # unmap them mid-read.
        jpeg = mm[int(self._offsets[i]) : int(self._offsets[i + 1])]
        bgr = cv2.imdecode(
            np.frombuffer(jpeg, dtype=np.uint8), cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION
        )
        if bgr is None:
            raise MediaError(
                self._path, f"seek cache is damaged at frame {i}; delete it to rebuild"
            )
        return np.ascontiguousarray(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), dtype=np.uint8)

    def close(self) -> None:
        """Unmap the file. Reading afterwards raises ValueError."""
        mm, self._mm = self._mm, None
        if mm is not None:
            mm.close()


def _pts_digest(index: VideoIndex) -> bytes:
    """A fingerprint of every timestamp, so a store built for another video never validates."""
    return hashlib.blake2b(index.pts.astype("<i8").tobytes(), digest_size=16).digest()


def _encoded_frames(video: Path, index: VideoIndex, quality: int) -> Generator[bytes]:
    """JPEG bytes of every frame of `video`, in presentation order, checked against `index`.

    Decoding stays on this thread; colour conversion and JPEG encoding, which release the GIL,
    run on a few worker threads, with a bounded number of frames in flight to cap memory.
    """
    workers = min(4, os.cpu_count() or 1)
    container, stream = open_video(video)
    pending: deque[Future[bytes]] = deque()
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="frame-store-encode")
    try:
        for frame in _checked_frames(video, index, decoded_frames(container, stream)):
            pending.append(pool.submit(_encode, frame, index.rotation, quality))
            if len(pending) >= 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        container.close()


def _checked_frames(
    video: Path, index: VideoIndex, frames: Iterator[VideoFrame]
) -> Iterator[VideoFrame]:
    """Pass `frames` through, raising MediaError at the first one that is not the next expected."""
    import av

    n = 0
    try:
        for frame in frames:
            if n >= index.frame_count or frame_timestamp(frame) != index.pts[n]:
                break
            yield frame
            n += 1
    except av.FFmpegError:
        pass  # reported below, as the first frame that did not decode
    if n != index.frame_count:
        raise MediaError(video, f"truncated or corrupt: decoding failed at frame {n}")


def _encode(frame: VideoFrame, rotation: int, quality: int) -> bytes:
    import cv2

    ok, jpeg = cv2.imencode(".jpg", to_bgr(frame, rotation), [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise RuntimeError("OpenCV could not encode a JPEG")
    return jpeg.tobytes()
