"""What the demonstration exporters and importers share: their error, checks and resampling.

Both formats hold one schema for the whole set (one joint list, one camera set, one state size),
so a set of demonstrations is checked once, up front, before anything is written.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from annotation import UserError
from sim.teleop._demo import Demonstration


class DemoFileError(UserError, ValueError):
    """A demonstration file or set that cannot be written or read; the message names the file
    (or demonstration) and the field that is missing or wrong."""


def check_set(demos: Sequence[Demonstration], where: str) -> None:
    """Raise DemoFileError unless ``demos`` is non-empty, each is consistent, names are unique,
    and all share joint names, cameras (with frame sizes) and the state size."""
    if not demos:
        raise DemoFileError(f"{where}: no demonstrations to export")
    first = demos[0]
    seen: set[str] = set()
    for demo in demos:
        try:
            demo.check()
        except ValueError as exc:
            raise DemoFileError(f"{where}: {exc}") from exc
        if demo.steps == 0:
            raise DemoFileError(f"{where}: {demo.name}: no steps")
        if demo.name in seen:
            raise DemoFileError(f"{where}: two demonstrations are named {demo.name!r}")
        seen.add(demo.name)
        if demo.joint_names != first.joint_names:
            raise DemoFileError(
                f"{where}: {demo.name}: joint_names {list(demo.joint_names)} differ from "
                f"{first.name}'s {list(first.joint_names)}"
            )
        if demo.states.shape[1:] != first.states.shape[1:]:
            raise DemoFileError(
                f"{where}: {demo.name}: states have {demo.states.shape[1:]} columns, "
                f"{first.name}'s have {first.states.shape[1:]}"
            )
        if sorted(demo.frames) != sorted(first.frames):
            raise DemoFileError(
                f"{where}: {demo.name}: cameras {sorted(demo.frames)} differ from "
                f"{first.name}'s {sorted(first.frames)}"
            )
        for cam, frames in demo.frames.items():
            if frames.shape[1:] != first.frames[cam].shape[1:]:
                raise DemoFileError(
                    f"{where}: {demo.name}: frames[{cam}] are {frames.shape[1:]}, "
                    f"{first.name}'s are {first.frames[cam].shape[1:]}"
                )
            if frames.dtype != np.uint8:
                raise DemoFileError(f"{where}: {demo.name}: frames[{cam}] are not uint8")


def resample_index(timestamps: NDArray[np.float64], fps: int) -> NDArray[np.int64]:
    """Indices of the steps nearest to ``t0 + k / fps`` for every k within the demonstration.

    LeRobot readers check that a frame's timestamp is ``frame_index / fps`` within a tolerance,
    so a demonstration recorded with a jittery control loop (or at another rate) is put on that
    grid. Already-uniform timestamps at ``fps`` give ``arange(T)``.
    """
    t = timestamps - timestamps[0]
    count = int(np.floor(t[-1] * fps + 1e-6)) + 1
    grid = np.arange(count, dtype=np.float64) / fps
    right = np.clip(np.searchsorted(t, grid), 1, max(len(t) - 1, 1))
    left = right - 1
    if len(t) == 1:
        return np.zeros(count, dtype=np.int64)
    nearer_left = (grid - t[left]) <= (t[right] - grid)
    return np.where(nearer_left, left, right).astype(np.int64)


@contextmanager
def staged_output(target: Path) -> Iterator[Path]:
    """Yield a sibling staging path that is renamed to ``target`` only when the block succeeds,
    so a failed export never leaves a half-written dataset under the name the user gave."""
    target = Path(target)
    if target.exists() and (target.is_file() or any(target.iterdir())):
        raise DemoFileError(f"{target}: already exists; choose a new name or remove it")
    stage = target.with_name(f".{target.name}.partial")
    if stage.exists():
        _remove(stage)
    stage.parent.mkdir(parents=True, exist_ok=True)
    try:
        yield stage
    except BaseException:
        _remove(stage)
        raise
    if target.exists():
        target.rmdir()  # the empty directory checked above
    stage.rename(target)


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
