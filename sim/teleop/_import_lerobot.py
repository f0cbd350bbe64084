"""Read a LeRobotDataset v3.0 directory back as Demonstrations.

It reads what ``export_lerobot`` writes and any v3.0 dataset with the same columns. Where
``meta/workbench.json`` is absent, names, scenario and success come from the dataset itself
(``episode_<i>``, the robot type, ``next.reward`` at the last frame) and states are empty.
Scene graphs and spans are not in the format, so they come back empty.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sim.teleop._demo import Demonstration
from sim.teleop._demo_io import DemoFileError
from sim.teleop._export_lerobot import EPISODES_PATH, SIDECAR_PATH

_REQUIRED = ("episode_index", "frame_index", "timestamp", "observation.state", "action")


def import_lerobot(root: Path) -> list[Demonstration]:
    """The demonstrations of the LeRobotDataset v3.0 at ``root``, in episode order."""
    root = Path(root)
    info = _load_json(root / "meta/info.json")
    version = str(info.get("codebase_version", ""))
    if not version.startswith("v3."):
        raise DemoFileError(f"{root / 'meta/info.json'}: codebase_version {version!r}, not v3.x")
    fps, features = info.get("fps"), info.get("features")
    if not isinstance(fps, int | float) or fps <= 0 or not isinstance(features, dict):
        raise DemoFileError(f"{root / 'meta/info.json'}: missing a positive fps or features")
    episodes = _read_table(root / EPISODES_PATH, ("episode_index", "length", "tasks"))
    data = _read_data(root, info, episodes)
    sidecar = _sidecar(root)
    cams = [k for k, f in features.items() if isinstance(f, dict) and f.get("dtype") == "video"]
    videos = {key: _VideoFile(root, info, key) for key in cams}
    state_names = list(features["observation.state"].get("names") or [])
    demos = []
    for row, ep in enumerate(episodes["episode_index"]):
        mask = data["episode_index"] == ep
        if not mask.any():
            raise DemoFileError(f"{root}: data has no frames for episode {ep}")
        cols = {k: v[mask] for k, v in data.items()}
        order = np.argsort(cols["frame_index"], kind="stable")
        cols = {k: v[order] for k, v in cols.items()}
        n = int(order.shape[0])
        frames = {
            key.removeprefix("observation.images."): vf.episode(episodes, row, n, float(fps))
            for key, vf in videos.items()
        }
        extra = sidecar.get(int(ep), {})
        demos.append(_demo(root, int(ep), cols, episodes, row, frames, extra, state_names, fps))
    return demos


def _demo(
    root: Path, ep: int, cols: dict[str, NDArray[Any]], episodes: dict[str, Any], row: int,
    frames: dict[str, NDArray[np.uint8]], extra: dict[str, Any], state_names: list[str],
    fps: float,
) -> Demonstration:  # fmt: skip
    state = cols["observation.state"].astype(np.float64)
    n_joints = state.shape[1] - 1
    names = extra.get("joint_names") or state_names[:n_joints] or [f"j{i}" for i in range(n_joints)]
    t = cols["timestamp"].shape[0]
    pose = cols.get("observation.ee_pose")
    if pose is None:
        pose = np.tile([np.nan, np.nan, np.nan, 1.0, 0.0, 0.0, 0.0], (t, 1))
    vel = cols.get("observation.velocity", np.zeros((t, n_joints)))
    states = cols.get("observation.sim_state", np.zeros((t, 0)))
    reward = cols.get("next.reward")
    success = extra.get("success", bool(reward is not None and float(reward[-1]) > 0.5))
    tasks = episodes["tasks"][row]
    demo = Demonstration(
        name=str(extra.get("name", f"episode_{ep}")),
        scenario=str(extra.get("scenario", "")),
        task=str(tasks[0]) if len(tasks) else "",
        arm=str(extra.get("arm", "")),
        fps=float(fps),
        timestamps=cols["timestamp"].astype(np.float64),
        joint_names=tuple(str(n) for n in names),
        joint_pos=state[:, :n_joints],
        joint_vel=np.asarray(vel, dtype=np.float64),
        gripper=state[:, n_joints],
        ee_pos=np.asarray(pose[:, :3], dtype=np.float64),
        ee_quat=np.asarray(pose[:, 3:7], dtype=np.float64),
        actions=cols["action"].astype(np.float64),
        states=np.asarray(states, dtype=np.float64),
        model_xml=str(extra.get("model_xml", "")),
        success=bool(success),
        frames=frames,
        meta=dict(extra.get("meta", {})),
    )
    try:
        demo.check()
    except ValueError as exc:
        raise DemoFileError(f"{root}: episode {ep}: {exc}") from exc
    return demo


def _load_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DemoFileError(f"{path}: missing; not a LeRobot dataset") from None
    except (OSError, ValueError) as exc:
        raise DemoFileError(f"{path}: not readable JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise DemoFileError(f"{path}: not a JSON object")
    return data


def _read_table(path: Path, required: tuple[str, ...]) -> dict[str, Any]:
    """The parquet file's columns as numpy arrays (lists stay lists), checking ``required``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.is_file():
        raise DemoFileError(f"{path}: missing")
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as exc:
        raise DemoFileError(f"{path}: not a readable parquet file ({exc})") from exc
    missing = [c for c in required if c not in table.column_names]
    if missing:
        raise DemoFileError(f"{path}: missing column(s) {', '.join(missing)}")
    out: dict[str, Any] = {}
    for name in table.column_names:
        col = table.column(name).combine_chunks()
        if (
            pa.types.is_fixed_size_list(col.type)
            and col.null_count == 0
            and (
                pa.types.is_floating(col.type.value_type)
                or pa.types.is_integer(col.type.value_type)
            )
        ):
            width = col.type.list_size
            out[name] = col.flatten().to_numpy(zero_copy_only=False).reshape(-1, width)
        elif pa.types.is_fixed_size_list(col.type) or pa.types.is_list(col.type):
            values = col.to_pylist()
            # numeric vectors become 2-D arrays; string lists (the tasks) stay lists
            numeric = pa.types.is_floating(col.type.value_type) or pa.types.is_integer(
                col.type.value_type
            )
            out[name] = np.asarray(values, dtype=np.float64) if numeric else values
        else:
            out[name] = col.to_numpy(zero_copy_only=False)
    return out


def _read_data(root: Path, info: dict[str, Any], episodes: dict[str, Any]) -> dict[str, Any]:
    template = str(
        info.get("data_path", "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet")
    )
    chunks = episodes.get("data/chunk_index", np.zeros(len(episodes["episode_index"]), int))
    files = episodes.get("data/file_index", np.zeros(len(episodes["episode_index"]), int))
    parts: list[dict[str, Any]] = []
    for c, f in sorted({(int(c), int(f)) for c, f in zip(chunks, files, strict=True)}):
        path = root / template.format(chunk_index=c, file_index=f)
        parts.append(_read_table(path, _REQUIRED))
    keys = set.intersection(*(set(p) for p in parts))
    return {k: np.concatenate([np.asarray(p[k]) for p in parts]) for k in keys}


def _sidecar(root: Path) -> dict[int, dict[str, Any]]:
    path = root / SIDECAR_PATH
    if not path.is_file():
        return {}
    data = _load_json(path)
    return {int(e["episode_index"]): e for e in data.get("episodes", []) if "episode_index" in e}


class _VideoFile:
    """One camera's video files, decoded once each and sliced per episode by from_timestamp."""

    def __init__(self, root: Path, info: dict[str, Any], key: str) -> None:
        self.root, self.key = root, key
        self.template = str(info.get("video_path") or "")
        self._decoded: dict[tuple[int, int], NDArray[np.uint8]] = {}

    def episode(self, episodes: dict[str, Any], row: int, n: int, fps: float) -> NDArray[np.uint8]:
        col = f"videos/{self.key}/from_timestamp"
        if col not in episodes:
            raise DemoFileError(f"{self.root / EPISODES_PATH}: missing column {col}")
        c = int(episodes.get(f"videos/{self.key}/chunk_index", [0] * (row + 1))[row])
        f = int(episodes.get(f"videos/{self.key}/file_index", [0] * (row + 1))[row])
        frames = self._frames(c, f)
        first = round(float(episodes[col][row]) * fps)
        if first + n > frames.shape[0]:
            path = self.template.format(video_key=self.key, chunk_index=c, file_index=f)
            raise DemoFileError(
                f"{self.root / path}: {frames.shape[0]} frames; episode row {row} needs "
                f"frames {first}…{first + n - 1}"
            )
        return frames[first : first + n]

    def _frames(self, chunk: int, file: int) -> NDArray[np.uint8]:
        if (chunk, file) not in self._decoded:
            rel = self.template.format(video_key=self.key, chunk_index=chunk, file_index=file)
            self._decoded[(chunk, file)] = decode_rgb(self.root / rel)
        return self._decoded[(chunk, file)]


def decode_rgb(path: Path) -> NDArray[np.uint8]:
    """Every frame of the video at ``path`` as ``N × H × W × 3`` uint8, in presentation order."""
    import av

    if not path.is_file():
        raise DemoFileError(f"{path}: missing video")
    try:
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            frames = [
                (fr.pts or 0, fr.to_ndarray(format="rgb24")) for fr in container.decode(stream)
            ]
    except (av.error.FFmpegError, IndexError) as exc:
        raise DemoFileError(f"{path}: not a decodable video ({exc})") from exc
    if not frames:
        raise DemoFileError(f"{path}: no frames")
    frames.sort(key=lambda pf: pf[0])
    return np.stack([f for _, f in frames])
