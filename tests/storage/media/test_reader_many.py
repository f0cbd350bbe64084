"""FrameReader.read_many: one forward pass gives exactly what read() gives, frame by frame."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from storage.media import FrameReader, index_video
from tests.storage.media.conftest import CLIPS


@pytest.mark.parametrize("name", CLIPS)
def test_read_many_equals_read(clips: dict[str, Path], name: str) -> None:
    path = clips[name]
    index = index_video(path)
    rng = random.Random(name)
    wanted = sorted(rng.sample(range(index.frame_count), min(12, index.frame_count)))
    with FrameReader(path, index) as many, FrameReader(path, index) as one:
        got = many.read_many(wanted + wanted[:2])  # duplicates are fine
        assert sorted(got) == wanted
        for i in wanted:
            assert np.array_equal(got[i], one.read(i)), (name, i)
        # the reader is still usable for ordinary reads afterwards
        j = wanted[len(wanted) // 2]
        assert np.array_equal(many.read(j), got[j])


def test_read_many_rejects_out_of_range(clips: dict[str, Path]) -> None:
    path = clips["h264_bframes"]
    index = index_video(path)
    with FrameReader(path, index) as r, pytest.raises(IndexError):
        r.read_many([0, index.frame_count])
    with FrameReader(path, index) as r:
        assert r.read_many([]) == {}
