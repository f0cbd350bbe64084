"""Write demonstrations as one robomimic HDF5 file.

Layout (robomimic's dataset structure):

    data                attrs total (sum of num_samples), env_args (JSON: env_name, env_type,
                        env_kwargs)
    data/demo_<i>       attrs num_samples, model_file (the MJCF, so any camera can be
                        re-rendered from ``states``), plus name/task/arm/scenario/success/fps
                        datasets states (T×S), actions (T×7), rewards (T: 1 at the last step of a
                        success), dones (T: 1 at the last step), timestamps (T),
                        obs/<key>, next_obs/<key> (obs shifted one step, the last repeated)
    mask/train          every demo's name (robomimic's filter keys)
    mask/success        the names of the successful demos

Observation keys: joint_pos, joint_vel, gripper (T×1), ee_pos, ee_quat (w, x, y, z) and
``<camera>_image`` (T×H×W×3 uint8) for each camera with frames.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sim.teleop._demo import ACTION_NAMES, Demonstration
from sim.teleop._demo_io import check_set, staged_output

ENV_TYPE = "rollout_workbench"


def observations(demo: Demonstration) -> dict[str, NDArray[Any]]:
    """The demo's robomimic observation arrays by key."""
    obs: dict[str, NDArray[Any]] = {
        "joint_pos": demo.joint_pos,
        "joint_vel": demo.joint_vel,
        "gripper": demo.gripper.reshape(-1, 1),
        "ee_pos": demo.ee_pos,
        "ee_quat": demo.ee_quat,
    }
    for cam, frames in sorted(demo.frames.items()):
        obs[f"{cam}_image"] = frames
    return obs


def export_robomimic(demos: Sequence[Demonstration], path: Path) -> Path:
    """Write ``demos`` as a robomimic HDF5 file at ``path`` (which must not exist); returns it."""
    import h5py

    path = Path(path)
    check_set(demos, str(path))
    with staged_output(path) as stage, h5py.File(stage, "w") as f:
        data = f.create_group("data")
        first = demos[0]
        env_args = {
            "env_name": first.scenario,
            "env_type": ENV_TYPE,
            "env_kwargs": {"arm": first.arm, "fps": first.fps, "action_names": ACTION_NAMES},
        }
        data.attrs["env_args"] = json.dumps(env_args)
        names = []
        for i, demo in enumerate(demos):
            key = f"demo_{i}"
            names.append(key)
            _write_demo(data.create_group(key), demo)
        data.attrs["total"] = int(sum(d.steps for d in demos))
        mask = f.create_group("mask")
        mask.create_dataset("train", data=np.array(names, dtype="S"))
        wins = [n for n, d in zip(names, demos, strict=True) if d.success]
        mask.create_dataset("success", data=np.array(wins, dtype="S"))
    return path


def _write_demo(group: Any, demo: Demonstration) -> None:
    t = demo.steps
    group.attrs["num_samples"] = t
    group.attrs["model_file"] = demo.model_xml
    group.attrs["name"] = demo.name
    group.attrs["task"] = demo.task
    group.attrs["arm"] = demo.arm
    group.attrs["scenario"] = demo.scenario
    group.attrs["success"] = bool(demo.success)
    group.attrs["fps"] = float(demo.fps)
    group.attrs["joint_names"] = json.dumps(list(demo.joint_names))
    group.attrs["meta"] = json.dumps(demo.meta, default=str)
    rewards = np.zeros(t, dtype=np.float64)
    rewards[-1] = 1.0 if demo.success else 0.0
    dones = np.zeros(t, dtype=np.int64)
    dones[-1] = 1
    group.create_dataset("states", data=demo.states)
    group.create_dataset("actions", data=demo.actions)
    group.create_dataset("rewards", data=rewards)
    group.create_dataset("dones", data=dones)
    group.create_dataset("timestamps", data=demo.timestamps)
    following = np.minimum(np.arange(t) + 1, t - 1)
    obs, nxt = group.create_group("obs"), group.create_group("next_obs")
    for key, arr in observations(demo).items():
        if arr.ndim == 4:  # images: one chunk per frame, compressed (they dominate the size)
            opts: dict[str, Any] = {
                "chunks": (1, *arr.shape[1:]), "compression": "gzip", "compression_opts": 1,
            }  # fmt: skip
        else:
            opts = {}
        obs.create_dataset(key, data=arr, **opts)
        nxt.create_dataset(key, data=arr[following], **opts)
