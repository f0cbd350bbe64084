"""Write demonstrations as a LeRobotDataset v3.0 directory.

Layout (as LeRobot's own writer makes it, one chunk and one file each, episodes concatenated):

    meta/info.json                                 schema, fps, path templates, totals, splits
    meta/stats.json                                min/max/mean/std/count per numeric feature
    meta/tasks.parquet                             task (index) → task_index
    meta/episodes/chunk-000/file-000.parquet       one row per episode: tasks, length, index
                                                   range, data/video file indices, video
                                                   from/to timestamps, per-episode stats
    data/chunk-000/file-000.parquet                one row per frame
    videos/observation.images.<cam>/chunk-000/file-000.mp4

Each camera is one H.264 (libx264, yuv420p) MP4 holding every episode back to back; the
episodes table says where each one starts and ends in it (``videos/<key>/from_timestamp`` and
``to_timestamp``, with its chunk and file index), which is how LeRobot finds an episode's
frames. The frames come from a :class:`~sim.teleop._demo_video.VideoSource`: those the
demonstrations carry, or (the project export) rendered from their recorded MuJoCo states.

What LeRobot has no column for (the demonstration's name, scenario, arm, success and the MJCF
that lets any camera be re-rendered) goes to ``meta/workbench.json``, which LeRobot ignores.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sim.teleop._demo import ACTION_NAMES, Demonstration
from sim.teleop._demo_io import DemoFileError, check_set, resample_index, staged_output
from sim.teleop._demo_video import RecordedVideos, VideoSource

CODEBASE_VERSION = "v3.0"
DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
EPISODES_PATH = "meta/episodes/chunk-000/file-000.parquet"
SIDECAR_PATH = "meta/workbench.json"
EE_POSE_NAMES = ("x", "y", "z", "qw", "qx", "qy", "qz")
VIDEO_CODEC = "h264"  # libx264, yuv420p (sim.synthetic.Mp4Writer)


def image_key(camera: str) -> str:
    return f"observation.images.{camera}"


def export_lerobot(
    demos: Sequence[Demonstration],
    out_dir: Path,
    *,
    fps: int | None = None,
    videos: VideoSource | None = None,
) -> Path:
    """Write ``demos`` as a LeRobotDataset v3.0 at ``out_dir`` (absent or empty); returns it.

    ``fps`` is the dataset's frame rate; None takes the demonstrations' own rate (they must
    agree). Each demonstration is put on the ``frame_index / fps`` grid LeRobot expects.
    ``videos`` gives each camera's frames (None: the frames the demonstrations carry); every
    camera it has becomes an MP4 and a ``video`` feature, and ``video_path`` is set.
    """
    out_dir = Path(out_dir)
    check_set(demos, str(out_dir))
    rate = _dataset_fps(demos, fps, out_dir)
    source = RecordedVideos(demos) if videos is None else videos
    picks = [resample_index(d.timestamps, rate) for d in demos]
    tasks = list(dict.fromkeys(d.task for d in demos))
    columns = _frame_columns(demos, picks, tasks, rate)
    features = _features(demos[0], rate, source)
    with staged_output(out_dir) as root:
        _write_data(root, columns, features)
        video_rows, hists = _write_videos(root, demos, source, picks, rate)
        stats, per_episode = _stats(columns, hists, [len(p) for p in picks])
        _write_episodes(root, demos, picks, video_rows, per_episode)
        _write_tasks(root, tasks)
        total = int(sum(len(p) for p in picks))
        info = _info(features, rate, len(demos), total, len(tasks), demos[0].arm)
        _write_json(root / "meta/info.json", info)
        _write_json(root / "meta/stats.json", stats)
        _write_json(root / SIDECAR_PATH, _sidecar(demos))
    return out_dir


def _dataset_fps(demos: Sequence[Demonstration], fps: int | None, where: Path) -> int:
    if fps is not None:
        if fps <= 0:
            raise DemoFileError(f"{where}: fps must be positive, not {fps}")
        return int(fps)
    rates = {round(d.fps) for d in demos}
    if len(rates) != 1:
        raise DemoFileError(f"{where}: demonstrations have different fps {sorted(rates)}; pass fps")
    rate = rates.pop()
    if rate <= 0:
        raise DemoFileError(f"{where}: {demos[0].name}: fps {demos[0].fps} is not positive")
    return rate


def _state(demo: Demonstration) -> NDArray[np.float64]:
    return np.column_stack([demo.joint_pos, demo.gripper])


def _frame_columns(
    demos: Sequence[Demonstration], picks: Sequence[NDArray[np.int64]], tasks: list[str], fps: int
) -> dict[str, NDArray[Any]]:
    """Every per-frame column of the data file, as arrays with one row per frame."""
    parts: dict[str, list[NDArray[Any]]] = {}
    start = 0
    for ep, (demo, idx) in enumerate(zip(demos, picks, strict=True)):
        n = len(idx)
        done = np.zeros(n, dtype=bool)
        done[-1] = True
        reward = np.zeros(n, dtype=np.float32)
        reward[-1] = 1.0 if demo.success else 0.0
        values: dict[str, NDArray[Any]] = {
            "observation.state": _state(demo)[idx].astype(np.float32),
            "observation.velocity": demo.joint_vel[idx].astype(np.float32),
            "observation.ee_pose": np.column_stack([demo.ee_pos, demo.ee_quat])[idx].astype(
                np.float32
            ),
            "action": demo.actions[idx].astype(np.float32),
            "next.reward": reward,
            "next.done": done,
            "timestamp": (np.arange(n) / fps).astype(np.float32),
            "frame_index": np.arange(n, dtype=np.int64),
            "episode_index": np.full(n, ep, dtype=np.int64),
            "index": np.arange(start, start + n, dtype=np.int64),
            "task_index": np.full(n, tasks.index(demo.task), dtype=np.int64),
        }
        if demo.states.shape[1] > 0:
            values["observation.sim_state"] = demo.states[idx].astype(np.float64)
        for key, arr in values.items():
            parts.setdefault(key, []).append(arr)
        start += n
    return {key: np.concatenate(arrs) for key, arrs in parts.items()}


def _features(demo: Demonstration, fps: int, videos: VideoSource) -> dict[str, dict[str, Any]]:
    joints = list(demo.joint_names)
    feats: dict[str, dict[str, Any]] = {
        "observation.state": _vec("float32", [*joints, "gripper"]),
        "observation.velocity": _vec("float32", joints),
        "observation.ee_pose": _vec("float32", list(EE_POSE_NAMES)),
        "action": _vec("float32", list(ACTION_NAMES)),
        "next.reward": {"dtype": "float32", "shape": [1], "names": None},
        "next.done": {"dtype": "bool", "shape": [1], "names": None},
    }
    if demo.states.shape[1] > 0:
        feats["observation.sim_state"] = {
            "dtype": "float64", "shape": [int(demo.states.shape[1])], "names": None,
        }  # fmt: skip
    for cam in videos.cameras:
        h, w = videos.shape(cam)
        feats[image_key(cam)] = {
            "dtype": "video",
            "shape": [h, w, 3],
            "names": ["height", "width", "channels"],
            "info": {
                "video.height": h, "video.width": w, "video.codec": VIDEO_CODEC,
                "video.pix_fmt": "yuv420p", "video.is_depth_map": False, "video.fps": fps,
                "video.channels": 3, "has_audio": False,
            },
        }  # fmt: skip
    for key in ("timestamp", "frame_index", "episode_index", "index", "task_index"):
        dtype = "float32" if key == "timestamp" else "int64"
        feats[key] = {"dtype": dtype, "shape": [1], "names": None}
    return feats


def _vec(dtype: str, names: list[str]) -> dict[str, Any]:
    return {"dtype": dtype, "shape": [len(names)], "names": names}


def _info(
    features: dict[str, dict[str, Any]], fps: int, episodes: int, frames: int, tasks: int,
    robot: str,
) -> dict[str, Any]:  # fmt: skip
    has_video = any(f["dtype"] == "video" for f in features.values())
    return {
        "codebase_version": CODEBASE_VERSION,
        "robot_type": robot,
        "total_episodes": episodes,
        "total_frames": frames,
        "total_tasks": tasks,
        "chunks_size": 1000,
        "data_files_size_in_mb": 100,
        "video_files_size_in_mb": 500,
        "fps": fps,
        "splits": {"train": f"0:{episodes}"},
        "data_path": DATA_PATH,
        "video_path": VIDEO_PATH if has_video else None,
        "features": features,
    }


def _write_data(
    root: Path, columns: dict[str, NDArray[Any]], features: dict[str, dict[str, Any]]
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays: dict[str, Any] = {}
    for key, feat in features.items():
        if feat["dtype"] == "video":
            continue
        arr = columns[key]
        if arr.ndim == 1:
            arrays[key] = pa.array(arr)
        else:
            width = int(arr.shape[1])
            flat = pa.array(np.ascontiguousarray(arr).reshape(-1))
            arrays[key] = pa.FixedSizeListArray.from_arrays(flat, width)
    path = root / DATA_PATH.format(chunk_index=0, file_index=0)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(arrays), path)


def _write_videos(
    root: Path, demos: Sequence[Demonstration], videos: VideoSource,
    picks: Sequence[NDArray[np.int64]], fps: int,
) -> tuple[dict[str, list[tuple[float, float]]], dict[str, list[NDArray[np.int64]]]]:  # fmt: skip
    """Encode each camera's episodes back to back, frame by frame as the source makes them.
    Returns per camera each episode's (from, to) timestamps in the file (how LeRobot finds an
    episode inside a shared video) and each episode's colour histogram (for the stats)."""
    from sim.synthetic import Mp4Writer

    spans: dict[str, list[tuple[float, float]]] = {}
    hists: dict[str, list[NDArray[np.int64]]] = {}
    for cam in videos.cameras:
        h, w = videos.shape(cam)
        if h % 2 or w % 2:
            raise DemoFileError(
                f"{demos[0].name}: frames[{cam}] are {w}×{h}; H.264 yuv420p needs even sizes"
            )
        key = image_key(cam)
        path = root / VIDEO_PATH.format(video_key=key, chunk_index=0, file_index=0)
        rows: list[tuple[float, float]] = []
        cam_hists: list[NDArray[np.int64]] = []
        with Mp4Writer(path, fps) as writer:
            for ep, idx in enumerate(picks):
                first = writer.count
                hist = np.zeros((3, 256), dtype=np.int64)
                for frame in videos.frames(ep, cam, idx):
                    writer.write(frame)
                    hist += _histogram(frame)
                made = writer.count - first
                if made != len(idx):
                    raise DemoFileError(f"{demos[ep].name}: {made} {cam} frames, {len(idx)} steps")
                rows.append((first / fps, writer.count / fps))
                cam_hists.append(hist)
        spans[key] = rows
        hists[key] = cam_hists
    return spans, hists


def _feature_stats(arr: NDArray[Any]) -> dict[str, Any]:
    """min/max/mean/std/count over frames, per dimension (LeRobot's stats.json entry)."""
    a = arr.astype(np.float64).reshape(arr.shape[0], -1)
    return {
        "min": a.min(axis=0).tolist(), "max": a.max(axis=0).tolist(),
        "mean": a.mean(axis=0).tolist(), "std": a.std(axis=0).tolist(),
        "count": [int(a.shape[0])],
    }  # fmt: skip


def _histogram(frames: NDArray[np.uint8]) -> NDArray[np.int64]:
    """Per-channel counts of each 0…255 level (3 × 256): exact stats at a fraction of the cost of
    float reductions over every pixel, and histograms of episodes simply add up."""
    flat = frames.reshape(-1, 3)
    return np.stack([np.bincount(flat[:, c], minlength=256) for c in range(3)]).astype(np.int64)


def _image_stats(hist: NDArray[np.int64], frames: int) -> dict[str, Any]:
    """Per-channel stats in [0, 1] with shape (3, 1, 1), as LeRobot stores them for cameras."""
    levels = np.arange(256, dtype=np.float64) / 255.0
    total = hist.sum(axis=1).astype(np.float64)
    mean = (hist * levels).sum(axis=1) / total
    var = np.maximum((hist * levels**2).sum(axis=1) / total - mean**2, 0.0)
    present = hist > 0
    return {
        "min": _chw(levels[present.argmax(axis=1)]),
        "max": _chw(levels[255 - present[:, ::-1].argmax(axis=1)]),
        "mean": _chw(mean), "std": _chw(np.sqrt(var)), "count": [frames],
    }  # fmt: skip


def _stats(
    columns: dict[str, NDArray[Any]], hists: dict[str, list[NDArray[np.int64]]],
    lengths: list[int],
) -> tuple[dict[str, Any], list[dict[str, Any]]]:  # fmt: skip
    """The dataset's stats and each episode's (LeRobot keeps both); cameras from the
    per-episode histograms the encoder kept (they add up to the whole)."""
    numeric = {k: v for k, v in columns.items() if v.dtype != bool}
    whole: dict[str, Any] = {k: _feature_stats(v) for k, v in numeric.items()}
    per: list[dict[str, Any]] = []
    start = 0
    for ep, n in enumerate(lengths):
        stats = {k: _feature_stats(v[start : start + n]) for k, v in numeric.items()}
        for key, eps in hists.items():
            stats[key] = _image_stats(eps[ep], n)
        per.append(stats)
        start += n
    for key, eps in hists.items():
        whole[key] = _image_stats(np.sum(eps, axis=0), start)
    return whole, per


def _chw(values: NDArray[np.float64]) -> list[list[list[float]]]:
    return [[[float(v)]] for v in values]


def _write_episodes(
    root: Path, demos: Sequence[Demonstration], picks: Sequence[NDArray[np.int64]],
    videos: dict[str, list[tuple[float, float]]], per_episode: list[dict[str, Any]],
) -> None:  # fmt: skip
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = []
    start = 0
    for ep, (demo, idx) in enumerate(zip(demos, picks, strict=True)):
        n = len(idx)
        row: dict[str, Any] = {
            "episode_index": ep, "tasks": [demo.task], "length": n,
            "data/chunk_index": 0, "data/file_index": 0,
            "dataset_from_index": start, "dataset_to_index": start + n,
        }  # fmt: skip
        for key, spans in videos.items():
            row[f"videos/{key}/chunk_index"] = 0
            row[f"videos/{key}/file_index"] = 0
            row[f"videos/{key}/from_timestamp"] = spans[ep][0]
            row[f"videos/{key}/to_timestamp"] = spans[ep][1]
        for feat, st in per_episode[ep].items():
            for name, value in st.items():
                row[f"stats/{feat}/{name}"] = value
        row["meta/episodes/chunk_index"] = 0
        row["meta/episodes/file_index"] = 0
        rows.append(row)
        start += n
    path = root / EPISODES_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)


def _write_tasks(root: Path, tasks: list[str]) -> None:
    import pandas as pd

    # LeRobot reads this with pandas and looks tasks up by the index named "task"
    frame = pd.DataFrame({"task_index": range(len(tasks))}, index=pd.Index(tasks, name="task"))
    frame.to_parquet(root / "meta/tasks.parquet")


def _sidecar(demos: Sequence[Demonstration]) -> dict[str, Any]:
    return {
        "format": 1,
        "episodes": [
            {
                "episode_index": ep,
                "name": d.name,
                "scenario": d.scenario,
                "arm": d.arm,
                "success": d.success,
                "fps": d.fps,
                "joint_names": list(d.joint_names),
                "model_xml": d.model_xml,
                "meta": d.meta,
            }
            for ep, d in enumerate(demos)
        ],
    }


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=4, ensure_ascii=False), encoding="utf-8")
