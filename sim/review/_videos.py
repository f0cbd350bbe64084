"""An episode's recorded videos at the playhead: the frame each camera showed at that tick.

Episode time ``tick × Δ`` maps to a video's own time through the offset its bundle declared
(a video of a recorded physics episode starts at tick 0), and the frame is the one shown at
that instant (``VideoIndex.index_at``, exact by timestamp). Decoding runs on a thread of its
own, newest request first, like the MuJoCo view's renders.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from sim._worker import Worker
from sim.review._worlds import Frame
from storage import Project
from storage.media import FrameSource, index_video


class VideoFrames(Worker):
    def __init__(
        self, root: Path, episode_id: str, on_frame: Callable[[Frame], None],
        on_error: Callable[[BaseException], None],
        on_ready: Callable[[], None] | None = None,
    ) -> None:  # fmt: skip
        super().__init__("wb-videos", on_error, on_ready)  # on_ready: once cameras are known
        self.root, self.episode_id, self.on_frame = root, episode_id, on_frame
        self.cameras: list[str] = []
        self._want: tuple[int, str] | None = None
        self._start()

    def request(self, tick: int, camera: str, **_options: Any) -> None:
        with self._cv:
            self._want = (tick, camera)
            self._cv.notify()

    def _serve(self) -> None:
        with Project.open(self.root) as project:
            ep = project.episodes.get(self.episode_id)
            arts = [a for a in project.episodes.artifacts(ep.id) if a.kind == "video"]
            paths = {a.camera: project.media_path(a.media_sha) for a in arts}
        offsets = {str(v.get("camera")): float(v.get("offset_s", 0.0))
                   for v in ep.config.get("videos", []) if isinstance(v, dict)}  # fmt: skip
        sources = {cam: FrameSource(p, index_video(p), store_path=None)
                   for cam, p in paths.items()}  # fmt: skip
        self.cameras = sorted(sources)
        self._started()
        while True:
            with self._cv:
                if not self._wait(lambda: self._want is not None):
                    return
                want, self._want = self._want, None
            assert want is not None
            tick, camera = want
            source = sources.get(camera)
            if source is None:
                continue
            t = tick * ep.delta - offsets.get(camera, 0.0)
            image = source.frame(source.index.index_at(t))
            self.on_frame(Frame(tick, camera, np.ascontiguousarray(image[..., :3])))
