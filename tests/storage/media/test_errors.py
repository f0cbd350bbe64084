"""Bad input: every failure is a MediaError that names the file and says what is wrong."""

from __future__ import annotations

import random
import subprocess
from collections.abc import Callable
from pathlib import Path

import av
import numpy as np
import pytest

from storage.media import (
    FrameReader,
    FrameStore,
    MediaError,
    index_video,
    probe_image,
    read_image_rgb,
)

MakeFile = Callable[[str, bytes], Path]


def expect_error(path: Path, *words: str) -> pytest.ExceptionInfo[MediaError]:
    with pytest.raises(MediaError) as info:
        index_video(path)
    message = str(info.value)
    assert message.startswith(f"{path.name}: "), message
    for word in words:
        assert word in message, message
    assert info.value.path == path
    return info


def test_missing_file(tmp_path: Path) -> None:
    expect_error(tmp_path / "gone.mp4", "file not found")


def test_zero_byte_file(make_file: MakeFile) -> None:
    expect_error(make_file("empty.mp4", b""), "file is empty (0 bytes)")


def test_text_file(make_file: MakeFile) -> None:
    expect_error(make_file("notes.mp4", b"these are my notes, not a video\n" * 20), "not a video")


def test_audio_only_file(clip_dir: Path) -> None:
    path = clip_dir / "voice.m4a"
    with av.open(str(path), "w") as out:
        stream = out.add_stream("aac", rate=44100)
        tone = np.sin(np.arange(44100) * 2 * np.pi * 440 / 44100).astype(np.float32)
        frame = av.AudioFrame.from_ndarray(tone[None, :], format="fltp", layout="mono")
        frame.sample_rate = 44100
        out.mux(stream.encode(frame))
        out.mux(stream.encode())
    expect_error(path, "not a video file (no video stream)")


def test_unsupported_codec(clip_dir: Path, h264_bframes: Path) -> None:
    # An AVI whose codec tag (FourCC) no decoder knows: FFmpeg opens it and finds a video stream
    # it cannot decode, exactly what a file from an exotic camera codec looks like.
    avi = clip_dir / "known.avi"
    with av.open(str(h264_bframes)) as inp, av.open(str(avi), "w") as out:
        stream = out.add_stream("mpeg4", rate=30)
        stream.width, stream.height, stream.pix_fmt = 176, 144, "yuv420p"
        stream.codec_tag = "FMP4"
        for frame in inp.decode(video=0):
            frame.pict_type = av.video.frame.PictureType.NONE
            out.mux(stream.encode(frame))
        out.mux(stream.encode())
    data = avi.read_bytes()
    assert data.count(b"FMP4") == 2  # stream header and bitmap header
    unknown = clip_dir / "exotic.avi"
    unknown.write_bytes(data.replace(b"FMP4", b"QZQZ"))
    expect_error(unknown, "unsupported codec")


def test_truncated_mp4_with_index_at_the_end(h264_bframes: Path, make_file: MakeFile) -> None:
    # ffmpeg writes the frame table (moov) last: half a file has no table at all.
    data = h264_bframes.read_bytes()
    expect_error(make_file("half.mp4", data[: len(data) // 2]), "truncated or corrupt")


def test_truncated_mp4_with_index_at_the_start(h264_faststart: Path, make_file: MakeFile) -> None:
    # With +faststart the table survives but lists frames that are no longer in the file.
    data = h264_faststart.read_bytes()
    info = expect_error(make_file("half_fs.mp4", data[: len(data) // 2]), "truncated")
    assert "lists 75 frames" in str(info.value)


def test_corrupt_bytes_decode_or_raise_naming_the_frame(
    h264_faststart: Path, make_file: MakeFile, tmp_path: Path, needs_ffmpeg: None
) -> None:
    data = bytearray(h264_faststart.read_bytes())
    rng = random.Random(3)
    middle = len(data) // 2
    for k in range(middle, middle + 3000):
        data[k] = rng.randrange(256)
    path = make_file("corrupt.mp4", bytes(data))

    index = index_video(path)  # the frame table is intact; the damage is in frame data
    failed = []
    with FrameReader(path, index) as reader:
        for n in [*range(index.frame_count), *random.Random(1).sample(range(75), 75)]:
            try:
                image = reader.read(n)
            except MediaError as err:
                assert str(err).startswith("corrupt.mp4: ") and f"frame {n}" in str(err)
                failed.append(n)
            else:
                assert image.shape == (144, 176, 3)
    # ffmpeg drops the frames of the damaged packets and decodes the rest; so do we.
    dropped = index.frame_count - int(
        subprocess.run(
            ["ffprobe", "-v", "quiet", "-count_frames", "-select_streams", "v:0",
             "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", str(path)],
            capture_output=True, check=True, text=True,
        ).stdout.strip()
    )  # fmt: skip
    assert len(set(failed)) == dropped
    assert failed, "the damage must hit decoded frames, or this test checks nothing"
    with pytest.raises(MediaError, match=r"corrupt\.mp4: truncated or corrupt: .*frame \d+"):
        FrameStore.build(path, index, tmp_path / "corrupt.frames")
    assert list(tmp_path.iterdir()) == []


def test_image_probe_rejects_text(make_file: MakeFile) -> None:
    path = make_file("photo.png", b"not a picture")
    with pytest.raises(MediaError, match=r"^photo\.png: not an image file"):
        probe_image(path)


def test_image_probe_rejects_empty_and_missing(make_file: MakeFile, tmp_path: Path) -> None:
    with pytest.raises(MediaError, match=r"^blank\.jpg: file is empty \(0 bytes\)$"):
        probe_image(make_file("blank.jpg", b""))
    with pytest.raises(MediaError, match=r"^nope\.png: file not found$"):
        read_image_rgb(tmp_path / "nope.png")


def test_image_probe_rejects_truncated_png(make_file: MakeFile, tmp_path: Path) -> None:
    import cv2

    ok, png = cv2.imencode(".png", np.full((64, 64, 3), 200, np.uint8))
    assert ok
    path = make_file("cut.png", png.tobytes()[:40])
    with pytest.raises(MediaError, match=r"^cut\.png: "):
        read_image_rgb(path)
