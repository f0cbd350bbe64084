"""Reuse the media tests' clips (made with the ffmpeg CLI) for command-line checks."""

from tests.storage.media.conftest import clip_dir, clips  # noqa: F401  (pytest fixtures)
