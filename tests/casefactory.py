"""Small, valid case folders for tests, made with our own encoder (no external files)."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np


def write_video(path: Path, n: int = 12, size: tuple[int, int] = (64, 48), seed: int = 0) -> Path:
    """A short H.264 clip whose frames all differ (a moving bar plus the frame number's shade)."""
    import av

    w, h = size
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 255, (h, w, 3), dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=12)
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        stream.options = {"crf": "18", "bf": "2", "g": "6"}
        for i in range(n):
            img = base.copy()
            img[:, (i * 5) % w : (i * 5) % w + 4] = 255
            img[: h // 4] = (i * 19) % 255
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


def write_image(path: Path, size: tuple[int, int] = (64, 48)) -> Path:
    import cv2

    w, h = size
    img = np.zeros((h, w, 3), np.uint8)
    img[:, : w // 2] = (40, 120, 200)
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), img)
    return path


def make_case(
    root: Path, case_id: str = "stack_blocks", n_videos: int = 2, **overrides: Any
) -> Path:
    """Write ``root/case_id`` with case.json, initial.png and ``n_videos`` clips."""
    folder = root / case_id
    write_image(folder / "initial.png")
    videos = []
    for k in range(n_videos):
        name = f"videos/gen_{k}.mp4"
        write_video(folder / name, seed=zlib.crc32(f"{case_id}/{k}".encode()))
        videos.append(
            {"file": name, "role": "generated", "model": f"model_{k}", "seed": 101 + 101 * k}
        )
    data: dict[str, Any] = {
        "format": "rollout-workbench/case@1",
        "id": case_id,
        "goal": "Put the red block on the blue plate.",
        "domain": "household_org_storage",
        "clutter": "none",
        "initial_image": "initial.png",
        "videos": videos,
    }
    data.update(overrides)
    (folder / "case.json").write_text(json.dumps(data, indent=2))
    return folder
