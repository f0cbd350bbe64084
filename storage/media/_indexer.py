"""index_video: read a video's frame table from its container without decoding every frame."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from storage.media._av import decode_packet, frame_rotation, frame_timestamp, open_video
from storage.media._errors import MediaError
from storage.media._index import Int64Array, VideoIndex

if TYPE_CHECKING:
    from av.container import InputContainer
    from av.video.frame import VideoFrame
    from av.video.stream import VideoStream


def index_video(path: Path) -> VideoIndex:
    """Build the VideoIndex of the first video stream of `path`.

    Demuxes every packet of the stream (no full decode) to collect its timestamp and keyframe
    flag, sorts them into presentation order, and decodes only the first frame, to prove the
    stream is decodable and to learn its size and rotation. A 60 s clip takes a fraction of a
    second.

    Raises:
        MediaError: The file is missing, empty, not a video, has no decoder for its codec, is
            truncated, or its first frame cannot be decoded. The message names the file.
    """
    import av

    container, stream = open_video(path)
    with container:
        try:
            return _index_stream(path, container, stream)
        except av.FFmpegError as exc:
            raise MediaError(path, f"truncated or corrupt ({exc.strerror or exc})") from None


def _index_stream(path: Path, container: InputContainer, stream: VideoStream) -> VideoIndex:
    timestamps: list[int] = []
    keyframe_ts: list[int] = []
    durations: dict[int, int] = {}
    packets_read = 0
    first: VideoFrame | None = None

    for packet in container.demux(stream):
        if packet.size == 0:
            continue  # the empty flush packet PyAV adds at the end of the stream
        packets_read += 1
        if first is None:
            # Decoding the first packets (a frame or a few, with B-frames) proves the codec works
            # on this file; the rest of the file is only demuxed.
            frames = decode_packet(stream, packet)
            first = frames[0] if frames else None
        if packet.is_discard:
            continue  # e.g. before an edit list's start: decoders drop these frames
        ts = packet.pts if packet.pts is not None else packet.dts
        if ts is None:
            raise MediaError(path, f"packet {packets_read} has no timestamp; cannot index frames")
        timestamps.append(ts)
        if packet.is_keyframe:
            keyframe_ts.append(ts)
        if packet.duration:
            durations[ts] = packet.duration

    if first is None:
        frames = stream.decode(None)  # the stream is shorter than the decoder's delay
        first = frames[0] if frames else None
    if not timestamps:
        raise MediaError(path, "not a video file (its video stream has no frames)")
    if first is None:
        raise MediaError(path, "truncated or corrupt: no frame could be decoded")
    if frame_timestamp(first) != min(timestamps):
        raise MediaError(path, "truncated or corrupt: decoding failed at frame 0")
    if stream.frames and packets_read < stream.frames:
        # MP4/MOV list every frame up front; fewer packets on disk means the file was cut short.
        raise MediaError(
            path,
            f"truncated: the file lists {stream.frames} frames but only {packets_read} are present",
        )

    pts = np.sort(np.array(timestamps, dtype=np.int64))
    if np.any(np.diff(pts) == 0):
        raise MediaError(path, "two frames share a timestamp; frames cannot be addressed exactly")
    time_base = stream.time_base or Fraction(1, 90000)
    duration_ticks = int(pts[-1] - pts[0]) + _last_frame_ticks(pts, durations)
    duration_s = float(duration_ticks * time_base)
    return VideoIndex(
        frame_count=len(pts),
        width=first.width,
        height=first.height,
        rotation=frame_rotation(first, stream),
        fps=len(pts) / duration_s if duration_s > 0 else 0.0,
        duration_s=duration_s,
        codec=stream.codec_context.codec.canonical_name,
        time_base=time_base,
        pts=pts,
        keyframes=np.searchsorted(pts, np.array(keyframe_ts, dtype=np.int64)),
    )


def _last_frame_ticks(pts: Int64Array, durations: dict[int, int]) -> int:
    """How long the last frame is shown: its packet duration, else the typical frame spacing."""
    last = int(pts[-1])
    if last in durations:
        return durations[last]
    if len(pts) > 1:
        return int(np.median(np.diff(pts)))
    return 0
