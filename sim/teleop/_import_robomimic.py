"""Read a robomimic HDF5 file (as ``export_robomimic`` writes it) back as Demonstrations.

Scene graphs and spans are not in the format, so they come back empty; so are joint names,
scenario and timestamps' jitter when the file lacks our extra attributes (then joints are
``j<i>``, the scenario is ``env_args.env_name`` and timestamps are ``step / fps``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sim.teleop._demo import Demonstration
from sim.teleop._demo_io import DemoFileError

_OBS = ("joint_pos", "joint_vel", "gripper", "ee_pos", "ee_quat")


def import_robomimic(path: Path) -> list[Demonstration]:
    """The demonstrations in the robomimic HDF5 file at ``path``, in demo number order."""
    import h5py

    path = Path(path)
    if not path.is_file():
        raise DemoFileError(f"{path}: missing")
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise DemoFileError(f"{path}: not an HDF5 file ({exc})") from exc
    with f:
        data = f.get("data")
        if not isinstance(data, h5py.Group):
            raise DemoFileError(f"{path}: no 'data' group; not a robomimic file")
        env = _env_args(path, data)
        keys = sorted(data.keys(), key=_demo_number)
        if not keys:
            raise DemoFileError(f"{path}: 'data' holds no demo_<i> groups")
        return [_demo(path, key, data[key], env) for key in keys]


def _demo_number(key: str) -> tuple[int, str]:
    m = re.fullmatch(r"demo_(\d+)", key)
    return (int(m.group(1)) if m else 1 << 30, key)


def _env_args(path: Path, data: Any) -> dict[str, Any]:
    raw = data.attrs.get("env_args")
    if raw is None:
        raise DemoFileError(f"{path}: data: missing attribute env_args")
    try:
        env = json.loads(raw.decode() if isinstance(raw, bytes) else str(raw))
    except ValueError as exc:
        raise DemoFileError(f"{path}: data.attrs['env_args']: not JSON ({exc})") from exc
    if not isinstance(env, dict):
        raise DemoFileError(f"{path}: data.attrs['env_args']: not a JSON object")
    return env


def _demo(path: Path, key: str, group: Any, env: dict[str, Any]) -> Demonstration:
    where = f"{path}: data/{key}"

    def need(name: str) -> NDArray[Any]:
        if name not in group:
            raise DemoFileError(f"{where}: missing dataset {name}")
        return np.asarray(group[name][()])

    attrs = group.attrs
    if "num_samples" not in attrs:
        raise DemoFileError(f"{where}: missing attribute num_samples")
    t = int(attrs["num_samples"])
    obs = {name: need(f"obs/{name}") for name in _OBS}
    cams = {
        k.removesuffix("_image"): np.asarray(group["obs"][k][()], dtype=np.uint8)
        for k in group["obs"]
        if k.endswith("_image")
    }
    kwargs = env.get("env_kwargs") or {}
    fps = float(attrs.get("fps", kwargs.get("fps", 0.0)) or 0.0)
    if fps <= 0:
        raise DemoFileError(f"{where}: no fps (attribute fps or env_kwargs.fps)")
    stamps = need("timestamps") if "timestamps" in group else np.arange(t) / fps
    n = int(obs["joint_pos"].shape[1]) if obs["joint_pos"].ndim == 2 else 0
    joints = json.loads(_text(attrs.get("joint_names", "null"))) or [f"j{i}" for i in range(n)]
    demo = Demonstration(
        name=_text(attrs.get("name", key)),
        scenario=_text(attrs.get("scenario", env.get("env_name", ""))),
        task=_text(attrs.get("task", "")),
        arm=_text(attrs.get("arm", kwargs.get("arm", ""))),
        fps=fps,
        timestamps=np.asarray(stamps, dtype=np.float64),
        joint_names=tuple(str(j) for j in joints),
        joint_pos=obs["joint_pos"].astype(np.float64),
        joint_vel=obs["joint_vel"].astype(np.float64),
        gripper=obs["gripper"].astype(np.float64).reshape(-1),
        ee_pos=obs["ee_pos"].astype(np.float64),
        ee_quat=obs["ee_quat"].astype(np.float64),
        actions=need("actions").astype(np.float64),
        states=need("states").astype(np.float64).reshape(t, -1),
        model_xml=_text(attrs.get("model_file", "")),
        success=_success(attrs, group, where),
        frames=cams,
        meta=dict(json.loads(_text(attrs.get("meta", "{}")))),
    )
    if demo.steps != t:
        raise DemoFileError(f"{where}: num_samples {t}, but {demo.steps} timestamps")
    try:
        demo.check()
    except ValueError as exc:
        raise DemoFileError(f"{where}: {exc}") from exc
    return demo


def _success(attrs: Any, group: Any, where: str) -> bool:
    if "success" in attrs:
        return bool(attrs["success"])
    if "rewards" not in group:
        raise DemoFileError(f"{where}: neither a success attribute nor rewards")
    rewards = np.asarray(group["rewards"][()])
    return bool(rewards.size and float(rewards[-1]) > 0.5)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
