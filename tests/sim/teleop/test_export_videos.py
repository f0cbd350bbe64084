"""A project's demonstrations exported as LeRobot write what the label says: an MP4 per camera,
rendered from the recorded MuJoCo states (the teleop workspace records no camera), in LeRobot
v3's layout. Read back with PyAV and pyarrow directly: one frame per dataset frame, ``video``
features, ``video_path`` set, each episode's place in the shared file in the episodes table; the
frames are the world of each step (a fresh render of the stored state matches within codec
loss) and sit at the times LeRobot's decoder looks for them; the importer round-trips it. The
export says what it wrote (``Exported``)."""

from __future__ import annotations

import json
from pathlib import Path

import av
import numpy as np
import pyarrow.parquet as pq
import pytest

from sim.episode import open_scenario
from sim.teleop import (
    TELEOP_DELTA,
    Command,
    DemoFileError,
    Recorder,
    StateVideos,
    export_demonstrations,
    import_lerobot,
    list_demonstrations,
    load_demonstration,
    store_demonstration,
)
from storage import Project

LENGTHS = (12, 7)
FPS = round(1 / TELEOP_DELTA)
KEYS = ("observation.images.front", "observation.images.wrist")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two demonstrations of stack-two at the workspace's 50 fps, no camera recorded; the arm
    moves in both, so consecutive frames differ."""
    root = tmp_path_factory.mktemp("demos") / "p"
    rec = Recorder(open_scenario("stack-two"), "wb6", delta=TELEOP_DELTA)
    with Project.create(root) as p:
        for n, v in zip(LENGTHS, ((0.2, 0.0, 0.0), (0.0, 0.2, 0.1)), strict=True):
            rec.start()
            for _ in range(n):
                rec.step(Command(linear=v))
            demo = rec.stop()[-1]
            assert demo.frames == {}  # nothing rendered while recording
            store_demonstration(p, demo)
            rec.demos.clear()
    rec.close()
    return root


def _decode(path: Path) -> np.ndarray:
    with av.open(str(path)) as c:
        return np.stack([f.to_ndarray(format="rgb24") for f in c.decode(c.streams.video[0])])


def test_lerobot_export_writes_an_mp4_per_camera_from_the_states(
    project: Path, tmp_path: Path
) -> None:
    with Project.open(project) as p:
        done = export_demonstrations(p, "lerobot", tmp_path / "ds")
    root = tmp_path / "ds"
    total = sum(LENGTHS)
    assert done.path == root and done.demonstrations == 2 and done.frames == total
    assert done.videos == tuple(root / f"videos/{k}/chunk-000/file-000.mp4" for k in KEYS)
    text = done.describe()
    assert str(root) in text and "2 demonstration(s)" in text and f"{total} frames" in text
    assert "2 camera video(s) (MP4)" in text

    info = json.loads((root / "meta/info.json").read_text())
    assert info["video_path"] == (
        "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
    )
    assert info["fps"] == FPS and info["total_frames"] == total
    for key in KEYS:
        feat = info["features"][key]
        assert feat["dtype"] == "video" and feat["shape"] == [240, 320, 3]
        assert feat["info"]["video.fps"] == FPS and feat["info"]["video.codec"] == "h264"
        path = root / info["video_path"].format(video_key=key, chunk_index=0, file_index=0)
        video = _decode(path)
        assert video.shape == (total, 240, 320, 3)  # one frame per dataset frame
        with av.open(str(path)) as c:
            s = c.streams.video[0]
            assert s.codec_context.name == "h264" and s.codec_context.pix_fmt == "yuv420p"
            assert s.average_rate == FPS
            times = sorted(float(f.time) for f in c.decode(s))
        # LeRobot decodes an episode's frame k at from_timestamp + k / fps, within 1e-4 s
        np.testing.assert_allclose(times, np.arange(total) / FPS, atol=1e-4)
        # the arm moved: the pictures of the first and last step of an episode differ
        changed = np.abs(video[0].astype(int) - video[LENGTHS[0] - 1]).max(axis=2) > 30
        assert changed.sum() > 50, changed.sum()

    eps = pq.read_table(root / "meta/episodes/chunk-000/file-000.parquet").to_pydict()
    for key in KEYS:
        assert eps[f"videos/{key}/chunk_index"] == [0, 0]
        assert eps[f"videos/{key}/file_index"] == [0, 0]
        assert eps[f"videos/{key}/from_timestamp"] == pytest.approx([0.0, LENGTHS[0] / FPS])
        assert eps[f"videos/{key}/to_timestamp"] == pytest.approx([LENGTHS[0] / FPS, total / FPS])
        assert len(eps[f"stats/{key}/mean"]) == 2  # per-episode image stats, (3, 1, 1) each
    stats = json.loads((root / "meta/stats.json").read_text())
    assert np.asarray(stats[KEYS[0]]["mean"]).shape == (3, 1, 1)
    assert stats[KEYS[0]]["count"] == [total]


def test_the_frames_are_the_recorded_world_and_the_importer_round_trips(
    project: Path, tmp_path: Path
) -> None:
    with Project.open(project) as p:
        export_demonstrations(p, "lerobot", tmp_path / "ds", cameras=("front",), size=(160, 120))
        stored = [load_demonstration(p, e.id) for e in reversed(list_demonstrations(p))]
        with StateVideos(stored, ("front",), (160, 120), project=p) as fresh:
            last = list(fresh.frames(1, "front", np.arange(LENGTHS[1])))
    back = import_lerobot(tmp_path / "ds")
    assert [d.steps for d in back] == list(LENGTHS)
    for a, b in zip(stored, back, strict=True):
        assert sorted(b.frames) == ["front"] and b.frames["front"].shape == (a.steps, 120, 160, 3)
        np.testing.assert_allclose(b.states, a.states)
        np.testing.assert_allclose(b.actions, a.actions, atol=1e-6)
    # each decoded frame is a fresh render of its stored state, within H.264's loss
    decoded = back[1].frames["front"].astype(int)
    errors = [float(np.abs(d - f.astype(int)).mean()) for d, f in zip(decoded, last, strict=True)]
    assert max(errors) < 4.0, errors
    shifted = float(np.abs(decoded[0] - last[-1].astype(int)).mean())
    assert shifted > max(errors)  # and not merely any frame of the episode


def test_robomimic_says_what_it_wrote_and_bad_cameras_are_refused(
    project: Path, tmp_path: Path
) -> None:
    with Project.open(project) as p:
        done = export_demonstrations(p, "robomimic", tmp_path / "d.hdf5")
        assert (done.path, done.demonstrations, done.frames, done.videos) == (
            tmp_path / "d.hdf5",
            2,
            sum(LENGTHS),
            (),
        )
        with pytest.raises(DemoFileError, match="no camera 'ceiling'"):
            export_demonstrations(p, "lerobot", tmp_path / "x", cameras=("ceiling",))
        with pytest.raises(DemoFileError, match="even"):
            export_demonstrations(p, "lerobot", tmp_path / "y", size=(321, 240))
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
