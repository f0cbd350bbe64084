"""Still images: write a PNG, read it back, probe its size."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from storage.media import MediaError, probe_image, read_image_rgb, write_png


def test_png_round_trip(tmp_path: Path) -> None:
    rgb = np.zeros((30, 41, 3), np.uint8)
    rgb[..., 0] = 255  # pure red: channel order must survive OpenCV's BGR
    rgb[5, 7] = (1, 2, 3)
    path = tmp_path / "still.png"
    write_png(path, rgb)
    assert probe_image(path) == (41, 30)
    back = read_image_rgb(path)
    assert np.array_equal(back, rgb)
    assert back.flags.c_contiguous
    assert [p.name for p in tmp_path.iterdir()] == ["still.png"]  # no temporary left behind


def test_write_png_rejects_wrong_arrays(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        write_png(tmp_path / "x.png", np.zeros((4, 4, 3), np.float32))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        write_png(tmp_path / "x.png", np.zeros((4, 4, 4), np.uint8))


def test_write_png_into_missing_folder_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(MediaError, match=r"^x\.png: cannot be written"):
        write_png(tmp_path / "no" / "such" / "x.png", np.zeros((4, 4, 3), np.uint8))
