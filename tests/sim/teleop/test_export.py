"""LeRobotDataset v3 and robomimic HDF5 export/import of demonstrations.

The exports are read back with pyarrow, h5py and PyAV directly (not our importers) so the
layout the official readers expect is what is checked; then our importers round-trip them.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import av
import h5py
import numpy as np
import pyarrow.parquet as pq
import pytest

from annotation import UserError
from sim.teleop import (
    ACTION_NAMES,
    DemoFileError,
    Demonstration,
    Span,
    export_lerobot,
    export_robomimic,
    import_lerobot,
    import_robomimic,
)

JOINTS = ("j0", "j1", "j2", "j3", "j4", "j5")
FPS = 10
SIDE = 16


def _frames(t: int, seed: int) -> np.ndarray:
    """Grey images, brighter each step and per seed, with a gentle gradient: H.264 keeps them
    close, and each frame's mean brightness tells which step it is."""
    yy, xx = np.mgrid[0:SIDE, 0:SIDE]
    out = np.empty((t, SIDE, SIDE, 3), dtype=np.uint8)
    for k in range(t):
        grey = 30 + 6 * k + (seed * 17) % 100 + xx * 2
        out[k] = np.stack([grey, grey + yy, grey], axis=-1)
    return out


def _close(decoded: np.ndarray, original: np.ndarray) -> None:
    """Same frames within codec loss: each frame's mean within half a step of its own (steps
    are 6 levels apart, so under 3 still names the right frame; a 16-px H.264 frame has been
    seen 2.003 levels off in a full run)."""
    assert decoded.shape == original.shape
    per_frame = np.abs(decoded.mean(axis=(1, 2, 3)) - original.mean(axis=(1, 2, 3)))
    assert per_frame.max() < 3, per_frame
    assert np.abs(decoded.astype(int) - original).mean() < 3


def make_demo(i: int, t: int, *, success: bool, task: str, cams: bool = True) -> Demonstration:
    rng = np.random.default_rng(100 + i)
    n = len(JOINTS)
    quat = rng.normal(size=(t, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    return Demonstration(
        name=f"demo_{i}",
        scenario="pick_place",
        task=task,
        arm="wb6",
        fps=float(FPS),
        timestamps=np.arange(t) / FPS,
        joint_names=JOINTS,
        joint_pos=rng.uniform(-2, 2, size=(t, n)),
        joint_vel=rng.normal(size=(t, n)),
        gripper=rng.uniform(0, 1, size=t),
        ee_pos=rng.uniform(-0.5, 0.5, size=(t, 3)),
        ee_quat=quat,
        actions=rng.uniform(-1, 1, size=(t, len(ACTION_NAMES))),
        states=rng.normal(size=(t, 1 + 2 * n + 3)),
        model_xml=f"<mujoco model='scene{i}'/>",
        success=success,
        frames={"front": _frames(t, i), "wrist": _frames(t, i + 7)} if cams else {},
        graphs=tuple("{}" for _ in range(t)),
        spans=(Span(1, 2, "alice", "stuck"),),
        meta={"seed": i},
    )


@pytest.fixture
def demos() -> list[Demonstration]:
    return [
        make_demo(0, 12, success=True, task="put the red brick in the box"),
        make_demo(1, 7, success=False, task="stack the mugs"),
        make_demo(2, 9, success=True, task="put the red brick in the box"),
    ]


def _decode(path: Path) -> np.ndarray:
    with av.open(str(path)) as c:
        return np.stack([f.to_ndarray(format="rgb24") for f in c.decode(c.streams.video[0])])


# --- LeRobot v3 read back with pyarrow / PyAV -------------------------------------------------


def test_lerobot_layout_read_back_with_pyarrow(tmp_path: Path, demos: list[Demonstration]) -> None:
    root = export_lerobot(demos, tmp_path / "ds")
    info = json.loads((root / "meta/info.json").read_text())
    assert info["codebase_version"] == "v3.0"
    assert info["fps"] == FPS
    assert info["total_episodes"] == 3 and info["total_frames"] == 28 and info["total_tasks"] == 2
    assert info["splits"] == {"train": "0:3"}
    assert info["data_path"] == "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
    assert info["video_path"] == (
        "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
    )
    feats = info["features"]
    assert feats["observation.state"]["names"] == [*JOINTS, "gripper"]
    assert feats["observation.state"]["shape"] == [7]
    assert feats["observation.ee_pose"]["names"] == ["x", "y", "z", "qw", "qx", "qy", "qz"]
    assert feats["action"]["names"] == list(ACTION_NAMES)
    cam = feats["observation.images.front"]
    assert cam["dtype"] == "video" and cam["shape"] == [SIDE, SIDE, 3]
    assert cam["info"]["video.codec"] == "h264" and cam["info"]["video.pix_fmt"] == "yuv420p"

    data = pq.read_table(root / "data/chunk-000/file-000.parquet").to_pydict()
    for key in ("timestamp", "frame_index", "episode_index", "index", "task_index", "next.done"):
        assert key in data, key
    assert data["index"] == list(range(28))
    assert data["episode_index"] == [0] * 12 + [1] * 7 + [2] * 9
    assert data["frame_index"] == [*range(12), *range(7), *range(9)]
    np.testing.assert_allclose(
        data["timestamp"], np.concatenate([np.arange(n) / FPS for n in (12, 7, 9)]), atol=1e-6
    )
    assert [i for i, d in enumerate(data["next.done"]) if d] == [11, 18, 27]
    assert data["task_index"] == [0] * 12 + [1] * 7 + [0] * 9
    state = np.asarray(data["observation.state"])
    assert state.shape == (28, 7)
    np.testing.assert_allclose(state[12:19, :6], demos[1].joint_pos, rtol=1e-6)
    np.testing.assert_allclose(state[12:19, 6], demos[1].gripper, rtol=1e-6)
    assert np.asarray(data["action"]).shape == (28, 7)
    assert np.asarray(data["observation.ee_pose"]).shape == (28, 7)

    eps = pq.read_table(root / "meta/episodes/chunk-000/file-000.parquet").to_pydict()
    assert eps["episode_index"] == [0, 1, 2]
    assert eps["length"] == [12, 7, 9]
    assert eps["tasks"] == [[d.task] for d in demos]
    assert eps["dataset_from_index"] == [0, 12, 19]
    assert eps["dataset_to_index"] == [12, 19, 28]
    assert eps["data/chunk_index"] == [0, 0, 0] and eps["data/file_index"] == [0, 0, 0]
    key = "videos/observation.images.front"
    np.testing.assert_allclose(eps[f"{key}/from_timestamp"], [0.0, 1.2, 1.9])
    np.testing.assert_allclose(eps[f"{key}/to_timestamp"], [1.2, 1.9, 2.8])
    assert eps[f"{key}/file_index"] == [0, 0, 0]
    assert eps["stats/observation.state/count"] == [[12], [7], [9]]

    tasks = pq.read_table(root / "meta/tasks.parquet").to_pydict()
    assert dict(zip(tasks["task"], tasks["task_index"], strict=True)) == {
        "put the red brick in the box": 0,
        "stack the mugs": 1,
    }
    stats = json.loads((root / "meta/stats.json").read_text())
    all_state = np.concatenate([np.column_stack([d.joint_pos, d.gripper]) for d in demos])
    np.testing.assert_allclose(stats["observation.state"]["mean"], all_state.mean(0), rtol=1e-5)
    np.testing.assert_allclose(stats["observation.state"]["std"], all_state.std(0), rtol=1e-5)
    np.testing.assert_allclose(
        stats["action"]["min"], np.concatenate([d.actions for d in demos]).min(0), rtol=1e-6
    )
    px = np.concatenate([d.frames["front"] for d in demos]).reshape(-1, 3) / 255.0
    for name, want in (("mean", px.mean(0)), ("std", px.std(0)), ("min", px.min(0)),
                       ("max", px.max(0))):  # fmt: skip
        got = np.asarray(stats["observation.images.front"][name])
        assert got.shape == (3, 1, 1)
        np.testing.assert_allclose(got.ravel(), want, rtol=1e-9, atol=1e-12)


def test_lerobot_video_holds_every_episode(tmp_path: Path, demos: list[Demonstration]) -> None:
    root = export_lerobot(demos, tmp_path / "ds")
    for cam in ("front", "wrist"):
        video = _decode(root / f"videos/observation.images.{cam}/chunk-000/file-000.mp4")
        assert video.shape == (28, SIDE, SIDE, 3)
        # episodes back to back: the second starts at from_timestamp 1.2 s × 10 fps = frame 12
        _close(video, np.concatenate([d.frames[cam] for d in demos]))


def test_lerobot_round_trip(tmp_path: Path, demos: list[Demonstration]) -> None:
    back = import_lerobot(export_lerobot(demos, tmp_path / "ds"))
    assert [d.name for d in back] == ["demo_0", "demo_1", "demo_2"]
    for a, b in zip(demos, back, strict=True):
        assert (b.task, b.scenario, b.arm, b.success, b.model_xml) == (
            a.task, a.scenario, a.arm, a.success, a.model_xml,
        )  # fmt: skip
        assert b.joint_names == a.joint_names and b.fps == a.fps and b.meta == a.meta
        for field in ("timestamps", "joint_pos", "joint_vel", "gripper", "ee_pos", "ee_quat"):
            np.testing.assert_allclose(getattr(b, field), getattr(a, field), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(b.actions, a.actions, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(b.states, a.states)  # float64 kept for re-rendering
        assert sorted(b.frames) == ["front", "wrist"]
        for cam in a.frames:
            _close(b.frames[cam], a.frames[cam])
        assert b.graphs == () and b.spans == ()


def test_lerobot_resamples_to_the_fps_grid(tmp_path: Path) -> None:
    demo = make_demo(0, 21, success=True, task="t", cams=False)
    jittery = np.arange(21) / 20 + np.r_[0, np.full(19, 0.004), 0]
    demo = replace(demo, fps=20.0, timestamps=jittery)
    root = export_lerobot([demo], tmp_path / "ds", fps=10)
    data = pq.read_table(root / "data/chunk-000/file-000.parquet").to_pydict()
    np.testing.assert_allclose(data["timestamp"], np.arange(11) / 10, atol=1e-6)
    np.testing.assert_allclose(
        np.asarray(data["action"]), demo.actions[::2].astype(np.float32), rtol=1e-6
    )
    assert json.loads((root / "meta/info.json").read_text())["video_path"] is None


# --- robomimic read back with h5py -------------------------------------------------------------


def test_robomimic_layout_read_back_with_h5py(tmp_path: Path, demos: list[Demonstration]) -> None:
    path = export_robomimic(demos, tmp_path / "demos.hdf5")
    with h5py.File(path, "r") as f:
        data = f["data"]
        assert data.attrs["total"] == 28
        env = json.loads(data.attrs["env_args"])
        assert env["env_name"] == "pick_place" and env["env_kwargs"]["arm"] == "wb6"
        assert "env_type" in env
        assert sorted(data) == ["demo_0", "demo_1", "demo_2"]
        for i, demo in enumerate(demos):
            g = data[f"demo_{i}"]
            t = demo.steps
            assert g.attrs["num_samples"] == t
            assert g.attrs["model_file"] == demo.model_xml
            np.testing.assert_array_equal(g["states"][()], demo.states)
            np.testing.assert_array_equal(g["actions"][()], demo.actions)
            rewards, dones = g["rewards"][()], g["dones"][()]
            assert rewards.shape == (t,) and dones.shape == (t,)
            assert rewards[:-1].sum() == 0 and rewards[-1] == (1.0 if demo.success else 0.0)
            assert dones.tolist() == [0] * (t - 1) + [1]
            obs = g["obs"]
            assert obs["joint_pos"].shape == (t, 6) and obs["joint_vel"].shape == (t, 6)
            assert obs["gripper"].shape == (t, 1)
            assert obs["ee_pos"].shape == (t, 3) and obs["ee_quat"].shape == (t, 4)
            np.testing.assert_array_equal(obs["front_image"][()], demo.frames["front"])
            assert obs["wrist_image"].dtype == np.uint8
            np.testing.assert_array_equal(g["next_obs/ee_pos"][:-1], demo.ee_pos[1:])
        assert [n.decode() for n in f["mask/train"][()]] == ["demo_0", "demo_1", "demo_2"]
        assert [n.decode() for n in f["mask/success"][()]] == ["demo_0", "demo_2"]


def test_robomimic_round_trip(tmp_path: Path, demos: list[Demonstration]) -> None:
    back = import_robomimic(export_robomimic(demos, tmp_path / "demos.hdf5"))
    assert [d.name for d in back] == [d.name for d in demos]
    for a, b in zip(demos, back, strict=True):
        assert (b.task, b.scenario, b.arm, b.success, b.model_xml, b.fps) == (
            a.task, a.scenario, a.arm, a.success, a.model_xml, a.fps,
        )  # fmt: skip
        assert b.joint_names == a.joint_names and b.meta == a.meta
        for field in ("timestamps", "joint_pos", "joint_vel", "gripper", "ee_pos", "ee_quat",
                      "actions", "states"):  # fmt: skip
            np.testing.assert_array_equal(getattr(b, field), getattr(a, field))
        for cam in a.frames:
            np.testing.assert_array_equal(b.frames[cam], a.frames[cam])
        assert b.graphs == () and b.spans == ()


# --- bad sets and bad files --------------------------------------------------------------------


def test_export_refuses_mismatched_sets_and_existing_targets(
    tmp_path: Path, demos: list[Demonstration]
) -> None:
    odd = make_demo(3, 5, success=True, task="t", cams=False)
    with pytest.raises(DemoFileError, match=r"demo_3: cameras"):
        export_lerobot([*demos, odd], tmp_path / "a")
    assert not (tmp_path / "a").exists()
    with pytest.raises(DemoFileError, match="two demonstrations are named 'demo_0'"):
        export_robomimic([demos[0], demos[0]], tmp_path / "b.hdf5")
    assert not (tmp_path / "b.hdf5").exists()
    (tmp_path / "c.hdf5").write_bytes(b"x")
    with pytest.raises(DemoFileError, match=r"c\.hdf5: already exists"):
        export_robomimic(demos, tmp_path / "c.hdf5")
    assert issubclass(DemoFileError, UserError)


def test_lerobot_bad_files_name_file_and_field(tmp_path: Path, demos: list[Demonstration]) -> None:
    with pytest.raises(DemoFileError, match=r"meta/info\.json: missing"):
        import_lerobot(tmp_path / "nothing")
    root = export_lerobot(demos, tmp_path / "ds")
    data = root / "data/chunk-000/file-000.parquet"
    pq.write_table(pq.read_table(data).drop_columns(["action"]), data)
    with pytest.raises(DemoFileError, match=r"file-000\.parquet: missing column\(s\) action"):
        import_lerobot(root)
    root2 = export_lerobot(demos, tmp_path / "ds2")
    (root2 / "videos/observation.images.front/chunk-000/file-000.mp4").write_bytes(b"junk")
    with pytest.raises(DemoFileError, match=r"file-000\.mp4: not a decodable video"):
        import_lerobot(root2)


def test_robomimic_bad_files_name_file_and_field(
    tmp_path: Path, demos: list[Demonstration]
) -> None:
    junk = tmp_path / "junk.hdf5"
    junk.write_bytes(b"not hdf5")
    with pytest.raises(DemoFileError, match=r"junk\.hdf5: not an HDF5 file"):
        import_robomimic(junk)
    empty = tmp_path / "empty.hdf5"
    with h5py.File(empty, "w") as f:
        f.create_group("other")
    with pytest.raises(DemoFileError, match=r"empty\.hdf5: no 'data' group"):
        import_robomimic(empty)
    path = export_robomimic(demos, tmp_path / "demos.hdf5")
    with h5py.File(path, "a") as f:
        del f["data/demo_1/actions"]
    with pytest.raises(DemoFileError, match=r"demos\.hdf5: data/demo_1: missing dataset actions"):
        import_robomimic(path)
