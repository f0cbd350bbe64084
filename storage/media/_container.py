"""A video is one file: playlists and concat lists, which name other files, are refused.

FFmpeg opens an HLS playlist (``.m3u8``), a DASH manifest or a concat list as if it were a
video, reading the segments it names from wherever they are: a case folder's ``clip.m3u8``
was indexed from a ``.ts`` outside the folder while the project stored only the 122-byte
playlist, which nobody else could then play. A project stores the bytes it indexed, so every
video it takes must be a single-file container. :func:`check_video_container` is the one
check, used by every door that takes a video (case import, episode bundles) and by
:func:`storage.media.open_video` itself, so no reader ever follows a list either.

Three layers, because each alone can be dodged: the file's suffix, its first bytes (a
playlist renamed ``.mp4`` still starts ``#EXTM3U``), and the demuxer FFmpeg picked once it is
open (``hls``, ``concat``, ``dash``, ``imf``: formats made of other files).
"""

from __future__ import annotations

from pathlib import Path

from storage.media._errors import MediaError

LIST_SUFFIXES = {
    ".m3u8": "an HLS playlist",
    ".m3u": "a playlist",
    ".ffconcat": "an FFmpeg concat list",
    ".txt": "a text file",  # how FFmpeg concat lists are usually named
    ".mpd": "a DASH manifest",
}
LIST_DEMUXERS = {
    "hls": "an HLS playlist",
    "applehttp": "an HLS playlist",  # the hls demuxer's name in older FFmpeg
    "concat": "an FFmpeg concat list",
    "dash": "a DASH manifest",
    "imf": "an IMF composition",
}
SNIFF_BYTES = 4096  # FFmpeg's probes look at about this much too
_MARKS = ((b"#EXTM3U", "an HLS playlist"), (b"ffconcat", "an FFmpeg concat list"))


def check_video_container(path: Path, demuxer: str | None = None) -> None:
    """Refuse ``path`` unless it can be a single-file video container.

    Without ``demuxer``: by suffix and by content (call it before FFmpeg opens the file, so a
    playlist is never followed). With ``demuxer`` (``container.format.name`` once open, e.g.
    ``"mov,mp4,m4a,3gp,3g2,mj2"``): by the format FFmpeg chose.

    Raises:
        MediaError: Naming the file, what it is and what to give instead.
    """
    if demuxer is not None:
        for name in demuxer.split(","):
            if name.strip() in LIST_DEMUXERS:
                _refuse(path, LIST_DEMUXERS[name.strip()])
        return
    what = LIST_SUFFIXES.get(path.suffix.lower())
    if what is not None:
        _refuse(path, what)
    try:
        with path.open("rb") as f:
            head = f.read(SNIFF_BYTES)
    except OSError as exc:
        raise MediaError(path, f"cannot be read ({exc.strerror or exc})") from None
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    for mark, kind in _MARKS:
        if text.startswith(mark):
            _refuse(path, kind)
    if b"<MPD" in head and text.startswith(b"<"):
        _refuse(path, "a DASH manifest")


def _refuse(path: Path, what: str) -> None:
    raise MediaError(
        path,
        f"is {what}, not a video file: a video must be one file, not a list naming others "
        "(the project keeps only the file it is given); give the video itself, e.g. an MP4",
    )
