"""Small PyAV helpers shared by the indexer, the exact reader and the seek cache.

PyAV is imported inside functions (and only for type checking at module level) so that importing
`storage` does not load FFmpeg.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from storage.media._container import check_video_container
from storage.media._errors import MediaError
from storage.media._files import check_readable_file
from storage.media._types import Image

if TYPE_CHECKING:
    from av.container import InputContainer
    from av.packet import Packet
    from av.video.frame import VideoFrame
    from av.video.stream import VideoStream


def open_video(path: Path) -> tuple[InputContainer, VideoStream]:
    """Open `path` and return its container and first real video stream, ready to decode.

    Raises:
        MediaError: Missing or empty file, not a media file, a playlist or list of other files
            (:func:`check_video_container`, before FFmpeg could follow it and after it chose
            its demuxer), no video stream, or no decoder.
    """
    import av

    check_readable_file(path)
    check_video_container(path)
    try:
        container = av.open(str(path), mode="r")
    except OSError as exc:  # first: PyAV's permission and I/O errors are OSErrors too
        raise MediaError(path, f"cannot be read ({exc.strerror or exc})") from None
    except av.FFmpegError as exc:
        raise MediaError(path, f"not a video file, or truncated or corrupt ({_why(exc)})") from None
    try:
        check_video_container(path, container.format.name)
        stream = _first_video_stream(container, path)
    except BaseException:
        container.close()
        raise
    return container, stream


def _first_video_stream(container: InputContainer, path: Path) -> VideoStream:
    import av

    # Cover art in audio files shows up as a one-picture "video" stream; it is not a video.
    videos = [
        s for s in container.streams.video if not s.disposition & av.stream.Disposition.attached_pic
    ]
    if not videos:
        raise MediaError(path, "not a video file (no video stream)")
    stream = videos[0]
    # PyAV leaves codec_context unset when FFmpeg has no decoder for the stream's codec.
    if stream.codec_context is None:
        raise MediaError(
            path, "unsupported codec: no decoder for its video stream (re-encode it, e.g. to H.264)"
        )
    # Frame threads decode several frames at once; output is identical, throughput much higher.
    stream.thread_type = "AUTO"
    return stream


def decoded_frames(container: InputContainer, stream: VideoStream) -> Iterator[VideoFrame]:
    """Decode `stream` from the container's current position, frames in presentation order.

    The last packet PyAV demuxes is an empty one that flushes the decoder, so the frames the
    decoder still holds at the end of the file come out too.
    """
    for packet in container.demux(stream):
        yield from decode_packet(stream, packet)


def decode_packet(stream: VideoStream, packet: Packet[VideoStream]) -> list[VideoFrame]:
    """Frames the decoder outputs after `packet`; none if the packet is damaged.

    Like the ffmpeg command line, a packet the decoder rejects is skipped and decoding goes on:
    later frames still decode (perhaps with visible damage) and the frame of the bad packet
    never comes out, which readers report as that frame failing to decode.
    """
    import av

    try:
        return stream.decode(packet)
    except av.InvalidDataError:
        return []


def frame_timestamp(frame: VideoFrame) -> int | None:
    """The timestamp that identifies `frame` in a VideoIndex: pts, else dts (as indexing does)."""
    return frame.pts if frame.pts is not None else frame.dts


def frame_rotation(frame: VideoFrame, stream: VideoStream) -> int:
    """Counter-clockwise display rotation (0/90/180/270) from a decoded frame and its stream.

    FFmpeg attaches the container's display matrix to decoded frames. Files whose demuxer only
    gives the legacy ``rotate`` tag get it from stream metadata; that tag counts clockwise.
    """
    degrees = float(frame.rotation)
    if degrees == 0:
        tag = stream.metadata.get("rotate", "0")
        try:
            degrees = -float(tag)
        except ValueError:
            degrees = 0.0
    # Only right angles can be shown without resampling; snap odd matrices to the nearest one.
    return round(degrees / 90.0) % 4 * 90


def to_rgb(frame: VideoFrame, rotation: int) -> Image:
    """The frame as HxWx3 uint8 RGB in display orientation, C-contiguous."""
    return rotate(np.asarray(frame.to_ndarray(format="rgb24"), dtype=np.uint8), rotation)


def rotate(image: Image, rotation: int) -> Image:
    """Rotate an image counter-clockwise by `rotation` degrees (a multiple of 90)."""
    if rotation % 360 == 0:
        return np.ascontiguousarray(image)
    return np.ascontiguousarray(np.rot90(image, k=rotation // 90))


def _why(exc: BaseException) -> str:
    """FFmpeg's reason without the file name PyAV appends (MediaError names the file already)."""
    strerror = getattr(exc, "strerror", None)
    return str(strerror) if strerror else str(exc)
