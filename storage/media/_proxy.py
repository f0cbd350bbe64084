"""The seek cache's codec: a short-GOP H.264 proxy, encoded and decoded through PyAV.

Why this format (``bench/video.py --compare`` measures the alternatives on 480p handheld
footage): one JPEG q95 per frame, the former format, costs some 320 MB a minute; all-intra
H.264 reaches the size budget only at a visibly worse picture (27 dB); H.264 with a keyframe
every `DEFAULT_GOP` frames, no B-frames and x264's ``fastdecode`` tuning costs about 35 MB a
minute at a higher RGB fidelity than JPEG q95 (it encodes the decoded YUV planes as they are,
so colour is not subsampled a second time), and any frame decodes from its keyframe in under
10 ms. A bit-rate ceiling (`CAP_BITS_PER_PIXEL`) keeps even pathological input (per-pixel
noise) within the budget.

Each packet is one frame in presentation order (no B-frames, so decode order is the same) and
every keyframe is an IDR carrying its own SPS/PPS, so a fresh decoder can start at any keyframe.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from fractions import Fraction
from typing import TYPE_CHECKING

from storage.media._index import VideoIndex

if TYPE_CHECKING:
    from av.video.codeccontext import VideoCodecContext
    from av.video.frame import VideoFrame

DEFAULT_STORE_CRF = 20
"""x264's constant rate factor for the proxy: lower is sharper and larger (0 = lossless)."""

DEFAULT_GOP = 8
"""Frames from one keyframe to the next: a seek decodes at most this many frames."""

CAP_BITS_PER_PIXEL = 0.55
"""Bit-rate ceiling per pixel and frame: 6.8 Mbit/s at 854x480 30 fps, about 50 MB a minute."""

# Decoders kept for reuse between reads; more than the threads that read at once is waste.
_MAX_IDLE_DECODERS = 4


# Source pixel formats x264 encodes as they are, and whether they subsample chroma (which
# needs even sizes). A kept format decodes back to the same format, so the proxy's frames go to
# RGB through the same swscale path as the original's: converting a 10-bit frame to 8 bits
# first, for one, moves colour edges by several levels.
_KEPT_FORMATS = {
    "yuv420p": True, "yuvj420p": True, "yuv422p": True, "yuvj422p": True,
    "yuv420p10le": True, "yuv422p10le": True,
    "yuv444p": False, "yuvj444p": False, "yuv444p10le": False, "gray": False, "gray10le": False,
}  # fmt: skip


def proxy_pix_fmt(source: str, width: int, height: int) -> str:
    """The proxy's pixel format for frames of `source` format: kept when x264 takes it as is.

    Otherwise 8-bit 4:2:0, or 4:4:4 for odd sizes (4:2:0 needs even ones), rather than cropping
    or padding the picture.
    """
    even = width % 2 == 0 and height % 2 == 0
    subsampled = _KEPT_FORMATS.get(source)
    if subsampled is not None and (even or not subsampled):
        return source
    return "yuv420p" if even else "yuv444p"


class ProxyEncoder:
    """Encodes the frames of one video, in order, to one H.264 packet per frame."""

    def __init__(self, index: VideoIndex, first: VideoFrame, *, crf: int, gop: int) -> None:
        import av

        self._pix_fmt = proxy_pix_fmt(first.format.name, first.width, first.height)
        rate = Fraction(max(index.fps, 1.0)).limit_denominator(1001)
        ctx = av.CodecContext.create("libx264", "w")
        ctx.width, ctx.height, ctx.pix_fmt = first.width, first.height, self._pix_fmt
        ctx.framerate, ctx.time_base = rate, 1 / rate
        # Tag the proxy with the source's colour description, so converting its frames to RGB
        # uses the same matrix and range as converting the original's.
        ctx.colorspace, ctx.color_range = first.colorspace, first.color_range
        ctx.color_primaries, ctx.color_trc = first.color_primaries, first.color_trc
        max_bits = round(CAP_BITS_PER_PIXEL * first.width * first.height * float(rate))
        ctx.options = {
            "crf": str(crf),
            "g": str(gop), "keyint_min": str(gop), "sc_threshold": "0", "forced-idr": "1",
            "bf": "0",  # decode order = presentation order: packet i is frame i
            # superfast: 40% quicker to build than veryfast (the cache is ready sooner), for
            # 3% more bytes at the same PSNR.
            "preset": "superfast",
            "tune": "fastdecode",  # no CABAC or deblocking: decodes ~40% faster, ~10% larger
            "maxrate": str(max_bits), "bufsize": str(max_bits),
        }  # fmt: skip
        self._ctx = ctx
        self._gop = gop
        self._n = 0

    def encode(self, frame: VideoFrame | None) -> Iterator[tuple[bool, bytes]]:
        """(is keyframe, bytes) of the packets ready after `frame`; None flushes the encoder."""
        import av

        if frame is not None:
            if frame.format.name != self._pix_fmt:
                frame = frame.reformat(format=self._pix_fmt)
            # A decoded frame carries its own picture type, which x264 would obey: give the
            # proxy its own keyframe grid instead.
            types = av.video.frame.PictureType
            frame.pict_type = types.I if self._n % self._gop == 0 else types.NONE
            frame.pts, frame.time_base = self._n, self._ctx.time_base
            self._n += 1
        for packet in self._ctx.encode(frame):
            yield packet.is_keyframe, bytes(packet)


class _Decoder:
    """One single-threaded H.264 decoder and the proxy frame it decoded last."""

    def __init__(self) -> None:
        import av

        ctx: VideoCodecContext = av.CodecContext.create("h264", "r")
        # One thread: a seek is a handful of small frames, where thread hand-offs cost more
        # than they save, and frame threads would delay output by a frame per thread.
        ctx.thread_type = "NONE"
        ctx.thread_count = 1
        self.ctx = ctx
        self.last = -1


class DecoderPool:
    """Decoders shared by the threads reading one store, each resumed where it stopped."""

    def __init__(self) -> None:
        self._idle: list[_Decoder] = []
        self._lock = threading.Lock()

    def take(self, keyframe: int, i: int) -> _Decoder:
        """A decoder for frame `i`: one already between `keyframe` and `i` if any is idle."""
        with self._lock:
            resumable = [d for d in self._idle if keyframe <= d.last < i]
            if resumable:
                best = max(resumable, key=lambda d: d.last)
                self._idle.remove(best)
                return best
            if self._idle:
                return self._idle.pop()
        return _Decoder()

    def give_back(self, decoder: _Decoder) -> None:
        with self._lock:
            if len(self._idle) < _MAX_IDLE_DECODERS:
                self._idle.append(decoder)

    def clear(self) -> None:
        with self._lock:
            self._idle.clear()


def decode_packet(decoder: _Decoder, data: bytes, i: int) -> VideoFrame | None:
    """Feed packet `i` to `decoder`; its frame, or None if the packet does not decode to it."""
    import av

    packet = av.Packet(data)
    packet.pts = packet.dts = i
    try:
        frames = decoder.ctx.decode(packet)
    except av.FFmpegError:
        return None
    if len(frames) != 1 or frames[0].pts != i:
        return None
    decoder.last = i
    return frames[0]
