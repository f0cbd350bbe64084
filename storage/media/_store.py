"""FrameStore: a video's frames as a short-GOP H.264 proxy in one file, for fast random access.

File layout (all integers little-endian)::

    header   _HEADER struct, see _Header below; written last, so a partial file never validates
    packets  frame_count H.264 packets back to back: packet i is frame i (presentation order,
             coded orientation); frames 0, gop, 2*gop, ... are keyframes
    table    frame_count + 1 uint64 offsets: packet i is bytes [table[i], table[i + 1])

See `storage.media._proxy` for the codec settings and why they were chosen.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import struct
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from storage.media._av import decoded_frames, frame_timestamp, open_video, to_rgb
from storage.media._errors import MediaError
from storage.media._files import temp_sibling
from storage.media._index import VideoIndex
from storage.media._proxy import (
    DEFAULT_GOP,
    DEFAULT_STORE_CRF,
    DecoderPool,
    ProxyEncoder,
    decode_packet,
)
from storage.media._types import Image

if TYPE_CHECKING:
    from av.video.frame import VideoFrame

_MAGIC = b"RWFSTORE"
_VERSION = 2  # 1 was one JPEG per frame
# magic, version, crf, gop, frame_count, width, height, rotation, first pts, last pts,
# blake2b-128 of all pts, offset of the table.
_HEADER = struct.Struct("<8sIIIQIIIqq16sQ")


@dataclass(frozen=True)
class _Header:
    version: int
    crf: int
    gop: int
    frame_count: int
    width: int
    height: int
    rotation: int
    first_pts: int
    last_pts: int
    pts_digest: bytes
    table_offset: int

    @staticmethod
    def for_index(index: VideoIndex, crf: int, gop: int, table_offset: int) -> _Header:
        return _Header(
            version=_VERSION,
            crf=crf,
            gop=gop,
            frame_count=index.frame_count,
            width=index.width,
            height=index.height,
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
            self.crf,
            self.gop,
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
        expected = _Header.for_index(index, self.crf, self.gop, self.table_offset)
        return self == expected and self.gop >= 1


class FrameStore:
    """A seek cache: every frame decoded once and re-encoded as a short-GOP H.264 proxy.

    Built in the background with `build`; afterwards any frame decodes in a few milliseconds
    (at most `gop` small frames from its keyframe), whatever the original's keyframe spacing,
    and a minute of 480p takes some 35 MB instead of the ~320 MB of one JPEG per frame. `read`
    returns frames in display orientation, like `FrameReader.read`, within the proxy's lossy
    tolerance; frame i of the store is always frame i of the video.

    `read` is thread-safe: the file is memory-mapped once; each read takes a decoder from a
    small pool, preferring one that stopped between the keyframe and the frame wanted, so
    stepping forward decodes one frame.
    """

    def __init__(self, path: Path, mapped: mmap.mmap, header: _Header, offsets: _Offsets) -> None:
        """Use `open` or `build`; this only wraps an already validated file."""
        self._path = path
        self._mm: mmap.mmap | None = mapped
        self._header = header
        self._offsets = offsets
        self._decoders = DecoderPool()

    @property
    def path(self) -> Path:
        """The store file."""
        return self._path

    @property
    def frame_count(self) -> int:
        """Number of frames in the store."""
        return len(self._offsets) - 1

    @property
    def crf(self) -> int:
        """The x264 constant rate factor the proxy was encoded with."""
        return self._header.crf

    @property
    def gop(self) -> int:
        """Frames from one keyframe of the proxy to the next."""
        return self._header.gop

    def keyframe_before(self, i: int) -> int:
        """The proxy keyframe at or before frame `i`, where decoding `i` starts."""
        return i - i % self._header.gop

    @staticmethod
    def build(
        video: Path,
        index: VideoIndex,
        out: Path,
        *,
        crf: int = DEFAULT_STORE_CRF,
        gop: int = DEFAULT_GOP,
        progress: Callable[[int, int], None] | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> FrameStore:
        """Decode every frame of `video` once, encode the proxy, and write the store to `out`.

        The store is written to a temporary file beside `out` and renamed over it at the end, so
        a partial or cancelled build never looks complete.

        Args:
            video: The video file `index` describes.
            index: Its index; every decoded frame must match it, timestamp for timestamp.
            out: Where the store goes (replaced if it exists).
            crf: x264 constant rate factor, 0..51 (lower: sharper and larger).
            gop: Frames per keyframe, >= 1 (1 makes every frame a keyframe).
            progress: Called as ``progress(done, total)`` after each frame is written.
            cancel: Polled after each frame; when it returns True the build stops.

        Raises:
            MediaError: The video cannot be decoded completely (names the first missing frame),
                or `out` cannot be written.
            concurrent.futures.CancelledError: `cancel` returned True.
        """
        if not 0 <= crf <= 51:
            raise ValueError(f"crf must be 0..51, not {crf}")
        if gop < 1:
            raise ValueError(f"gop must be >= 1, not {gop}")
        tmp = temp_sibling(out)
        try:
            try:
                with tmp.open("xb") as f:
                    table_offset = _write_packets(
                        f, video, index, crf=crf, gop=gop, progress=progress, cancel=cancel
                    )
                    f.seek(0)
                    f.write(_Header.for_index(index, crf, gop, table_offset).pack())
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, out)
            finally:
                tmp.unlink(missing_ok=True)
        except OSError as exc:
            raise MediaError(out, f"cannot write the seek cache ({exc.strerror or exc})") from None
        store = FrameStore.open(out, index, crf=crf)
        if store is None:
            raise MediaError(out, "the seek cache was written but does not read back")
        return store

    @staticmethod
    def open(path: Path, index: VideoIndex, *, crf: int | None = None) -> FrameStore | None:
        """Open the store at `path` if it is complete and was built for `index`, else None.

        None covers a missing file, a partial or corrupt one, and a stale one (built for a
        different video, in an older format, or with another `crf` when one is given): in every
        case the caller should rebuild.
        """
        try:
            with path.open("rb") as f:
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # ValueError: mapping an empty file
            return None
        header = _Header.unpack(mapped[: _HEADER.size])
        table_end = (header.table_offset + 8 * (header.frame_count + 1)) if header else -1
        if (
            header is None
            or not header.matches(index)
            or (crf is not None and header.crf != crf)
            or table_end != len(mapped)
        ):
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
        return FrameStore(path, mapped, header, offsets)

    def read(self, i: int) -> Image:
        """Frame `i` as HxWx3 uint8 RGB in display orientation, C-contiguous.

        Raises:
            IndexError: `i` is not a frame index.
            MediaError: The stored proxy does not decode (the store file was damaged).
            ValueError: The store is closed.
        """
        if not 0 <= i < self.frame_count:
            raise IndexError(f"frame {i} out of range 0..{self.frame_count - 1}")
        if self._mm is None:
            raise ValueError("FrameStore is closed")
        keyframe = self.keyframe_before(i)
        decoder = self._decoders.take(keyframe, i)
        # Resume a decoder that stopped inside this GOP before `i`; otherwise start at the
        # keyframe (an IDR resets the decoder, so no flush is needed).
        start = decoder.last + 1 if keyframe <= decoder.last < i else keyframe
        frame: VideoFrame | None = None
        for j in range(start, i + 1):
            frame = decode_packet(decoder, self._packet(j), j)
            if frame is None:
                # The decoder's state is unknown now: drop it rather than give it back.
                raise MediaError(
                    self._path, f"seek cache is damaged at frame {j}; delete it to rebuild"
                )
        assert frame is not None
        image = to_rgb(frame, self._header.rotation)
        self._decoders.give_back(decoder)
        return image

    def close(self) -> None:
        """Unmap the file and drop the decoders. Reading afterwards raises ValueError."""
        mm, self._mm = self._mm, None
        self._decoders.clear()
        if mm is not None:
            mm.close()

    def _packet(self, j: int) -> bytes:
        mm = self._mm
        if mm is None:
            raise ValueError("FrameStore is closed")
        # Slicing copies the bytes out while holding the GIL, so a concurrent close() cannot
        # unmap them mid-copy.
        return mm[int(self._offsets[j]) : int(self._offsets[j + 1])]


_Offsets = npt.NDArray[np.uint64]


def _pts_digest(index: VideoIndex) -> bytes:
    """A fingerprint of every timestamp, so a store built for another video never validates."""
    return hashlib.blake2b(index.pts.astype("<i8").tobytes(), digest_size=16).digest()


def _write_packets(
    f: IO[bytes],
    video: Path,
    index: VideoIndex,
    *,
    crf: int,
    gop: int,
    progress: Callable[[int, int], None] | None,
    cancel: Callable[[], bool] | None,
) -> int:
    """Write the placeholder header, every proxy packet and the table; the table's offset."""
    f.write(bytes(_HEADER.size))  # placeholder: the real header goes in last
    offsets = [_HEADER.size]

    def cancelled() -> None:
        if cancel is not None and cancel():
            raise CancelledError(f"building the seek cache of {video.name}")

    def write(packets: Iterator[tuple[bool, bytes]]) -> None:
        for is_key, data in packets:
            n = len(offsets) - 1
            if is_key != (n % gop == 0) or n >= index.frame_count:
                raise RuntimeError(f"x264 broke the proxy's keyframe grid at frame {n}")
            f.write(data)
            offsets.append(offsets[-1] + len(data))
            if progress is not None:
                progress(n + 1, index.frame_count)
            cancelled()

    container, stream = open_video(video)
    with closing(container):
        encoder: ProxyEncoder | None = None
        for frame in _checked_frames(video, index, decoded_frames(container, stream)):
            if encoder is None:
                encoder = ProxyEncoder(index, frame, crf=crf, gop=gop)
            write(encoder.encode(frame))
            cancelled()  # the encoder holds frames back at first: poll while it fills
        assert encoder is not None  # _checked_frames raises unless every frame came
        write(encoder.encode(None))
    if len(offsets) - 1 != index.frame_count:
        raise RuntimeError(f"x264 gave {len(offsets) - 1} packets for {index.frame_count} frames")
    f.write(np.array(offsets, dtype="<u8").tobytes())
    return offsets[-1]


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
