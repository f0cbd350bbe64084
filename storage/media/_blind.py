"""Blind copies of videos for rater bundles: the same packets, none of the source's metadata.

A generated video's container often names its generator: the title, comment, encoder or
software tag, a stream's handler name or title, a creation time, an XMP or C2PA box, an audio
track or an attachment. :func:`blind_copy` remuxes the first real video stream alone into a new
file of the same container format: packets are copied (no re-encode), so every decoded frame is
bit-identical and keeps its timestamp, and the frame index (count, per-frame pts, keyframes,
rotation) is the same — which :func:`blind_copy` checks against the source's index before it
returns, because evidence marks travel between the lead's and the rater's projects by frame index.

Nothing of the source's tags, chapters, other streams or unknown boxes is copied. The muxer is run
bit-exact, so it writes no library version and the same source always gives the same bytes (a
later bundle of the same assignment then brings the same file, not a second copy). What the muxer
writes by itself (its name ``Lavf``, the file brand, a neutral handler name such as
``VideoHandler``) says nothing about where the video came from.

Not touched: the coded bitstream (an encoder may write its own name and settings into it, as
x264 does in an SEI message); removing that would mean rewriting the bitstream, which for some
streams changes the decoded pictures.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

from storage.media._errors import MediaError
from storage.media._index import VideoIndex
from storage.media._indexer import index_video

if TYPE_CHECKING:
    from av.container import InputContainer
    from av.video.stream import VideoStream


class BlindingError(MediaError):
    """A video that cannot be copied for a rater without its metadata; the message names it."""


def blind_copy(src: Path, dst: Path, expected: VideoIndex | None = None) -> VideoIndex:
    """Write ``src``'s video stream to ``dst`` without any of its metadata; return dst's index.

    ``dst`` keeps ``src``'s suffix (it chooses the container format). ``expected`` is the frame
    index the copy must have (default: ``src``'s own). On any failure ``dst`` is removed.

    Raises:
        BlindingError: ``src`` cannot be read or remuxed, or the copy's frame index differs.
    """
    import av

    src, dst = Path(src), Path(dst)
    if dst.suffix.lower() != src.suffix.lower():
        raise ValueError(f"{dst.name}: must keep the suffix of {src.name}")
    try:
        want = index_video(src) if expected is None else expected
        with av.open(str(src)) as inp:
            _remux(inp, _video_stream(inp, src), dst)
        got = index_video(dst)
    except BlindingError:
        dst.unlink(missing_ok=True)
        raise
    except MediaError as e:
        dst.unlink(missing_ok=True)
        raise BlindingError(src, e.problem) from None
    except (av.FFmpegError, ValueError, OSError) as e:
        dst.unlink(missing_ok=True)
        raise BlindingError(src, f"cannot be copied without its metadata ({_why(e)})") from None
    differs = _difference(want, got)
    if differs:
        dst.unlink(missing_ok=True)
        raise BlindingError(
            src,
            f"copying it without its metadata would change its frames ({differs}); "
            "re-encode it to MP4 (H.264) and import it again",
        )
    return got


def _video_stream(inp: InputContainer, src: Path) -> VideoStream:
    """The stream the frame index describes: the first video stream that is not cover art."""
    import av

    for s in inp.streams.video:
        if not s.disposition & av.stream.Disposition.attached_pic:
            return s
    raise BlindingError(src, "not a video file (no video stream)")


def _remux(inp: InputContainer, stream: VideoStream, dst: Path) -> None:
    import av

    # bitexact: no library version in the file, and the same bytes for the same source.
    with av.open(str(dst), "w", options={"fflags": "+bitexact"}) as out:
        # The template copies codec parameters only (and the coded side data with them, such as
        # the display matrix); stream tags and disposition stay behind.
        copy = out.add_stream_from_template(stream)
        copy.metadata.clear()
        copy.time_base = stream.time_base
        out.metadata.clear()
        for packet in inp.demux(stream):
            if packet.dts is None and packet.size == 0:
                continue  # the demuxer's end-of-stream marker, not a frame
            packet.stream = copy
            out.mux(packet)


def _difference(want: VideoIndex, got: VideoIndex) -> str:
    """What differs between two frame indices ("" if nothing a frame address depends on)."""
    if got.frame_count != want.frame_count:
        return f"{want.frame_count} frames became {got.frame_count}"
    if got.rotation != want.rotation:
        return f"rotation {want.rotation}° became {got.rotation}°"
    if (got.width, got.height) != (want.width, want.height):
        return f"{want.width}×{want.height} became {got.width}×{got.height}"
    if got.keyframes.tolist() != want.keyframes.tolist():
        return "keyframes moved"
    # Compared as times: a muxer may pick another time base for the same instants.
    tw, tg = Fraction(want.time_base), Fraction(got.time_base)
    for i, (a, b) in enumerate(zip(want.pts.tolist(), got.pts.tolist(), strict=True)):
        if a * tw != b * tg:
            return f"frame {i} moved from {float(a * tw):.6f} s to {float(b * tg):.6f} s"
    return ""


def _why(e: BaseException) -> str:
    return str(getattr(e, "strerror", None) or e)
