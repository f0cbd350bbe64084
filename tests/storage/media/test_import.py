"""Importing the media package stays cheap: FFmpeg and OpenCV load only when used."""

from __future__ import annotations

import subprocess
import sys


def test_import_does_not_load_av_or_cv2() -> None:
    code = "import sys, storage.media; print('av' in sys.modules, 'cv2' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "False"]
