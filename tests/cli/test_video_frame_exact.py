"""``workbench video frame FILE N`` writes exactly frame N, checked against ffmpeg's decode
on clips with B-frames, a variable frame rate and odd dimensions."""

from __future__ import annotations

import random
from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner

from app.cli._main import cli
from tests.storage.media.conftest import closest_frame, reference


def cli_frame(tmp_path: Path, clip: Path, n: int) -> np.ndarray:
    out = tmp_path / f"{clip.stem}_{n}.png"
    res = CliRunner().invoke(cli, ["video", "frame", str(clip), str(n), "--out", str(out)])
    assert res.exit_code == 0, res.output
    bgr = cv2.imread(str(out), cv2.IMREAD_COLOR)
    assert bgr is not None
    return np.ascontiguousarray(bgr[:, :, ::-1])


@pytest.mark.parametrize("name", ["h264_bframes", "vfr", "odd_444", "open_gop", "odd_420"])
def test_video_frame_is_exactly_frame_n(tmp_path: Path, clips: dict[str, Path], name: str) -> None:
    clip = clips[name]
    ref = reference(clip)
    count = len(ref.rgb)
    picks = sorted({0, 1, count // 2, count - 1, *random.Random(name).sample(range(count), 6)})
    for n in picks:
        got = cli_frame(tmp_path, clip, n)
        assert got.shape == ref.rgb[n].shape
        if name == "odd_420":
            # odd 4:2:0 chroma is upsampled differently by FFmpeg versions; identity still holds
            assert closest_frame(got, ref.rgb, n) == n
        else:
            assert np.abs(got.astype(int) - ref.rgb[n]).max() <= 1, f"{name} frame {n}"
            for m in (n - 1, n + 1):
                if 0 <= m < count:
                    assert np.abs(got.astype(int) - ref.rgb[m]).max() > 1, f"{name} {n} vs {m}"
