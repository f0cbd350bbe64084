"""The one exception type of the media layer."""

from __future__ import annotations

from pathlib import Path

from annotation import UserError


class MediaError(UserError):
    """A media file could not be used.

    ``str(err)`` names the file and says what is wrong in words a user can act on, for example
    ``"clip.mp4: file is empty (0 bytes)"`` or
    ``"clip.mp4: truncated or corrupt: decoding failed at frame 212"``.

    Attributes:
        path: The file the problem is about.
        problem: The problem alone, without the file name.
    """

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path.name}: {problem}")
        self.path = path
        self.problem = problem
