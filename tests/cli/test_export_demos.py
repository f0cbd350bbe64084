"""`workbench export demos`: a project's stored demonstrations as LeRobot and robomimic, read
back with pyarrow and h5py; scenario and id selection; refusals in one line; and the annotation
export (`workbench export --project P`) still answers as before."""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from app.cli._main import cli
from sim.episode import open_scenario
from sim.teleop import Command, Recorder, store_demonstration
from storage import Project

LENGTHS = (6, 4)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("demos") / "p"
    rec = Recorder(open_scenario("stack-two"), "wb6")
    ids = []
    with Project.create(root) as p:
        for n in LENGTHS:  # two recorders' worth of names would clash: both are "demo_0"
            rec.start()
            for _ in range(n):
                rec.step(Command(linear=(0.1, 0.0, 0.0)))
            ids.append(store_demonstration(p, rec.stop()[-1]))
            rec.demos.clear()
    rec.close()
    return root, ids


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=True)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def test_lerobot_export_of_every_demonstration(
    project: tuple[Path, list[str]], tmp_path: Path
) -> None:
    root, _ = project
    code, out = run("export", "demos", "--format", "lerobot", "--project", str(root),
                    "--out", str(tmp_path / "ds"))  # fmt: skip
    assert code == 0, out
    assert "exported 2 demonstration(s) as lerobot" in out
    info = json.loads((tmp_path / "ds/meta/info.json").read_text())
    assert info["total_episodes"] == 2 and info["total_frames"] == sum(LENGTHS)
    data = pq.read_table(tmp_path / "ds/data/chunk-000/file-000.parquet").to_pydict()
    assert data["episode_index"] == [0] * LENGTHS[0] + [1] * LENGTHS[1]  # oldest first
    assert data["frame_index"] == [*range(LENGTHS[0]), *range(LENGTHS[1])]


def test_robomimic_export_of_chosen_ids(project: tuple[Path, list[str]], tmp_path: Path) -> None:
    root, ids = project
    out = tmp_path / "d.hdf5"
    code, text = run("export", "demos", "--format", "robomimic", "--project", str(root),
                     "--out", str(out), "--scenario", "stack-two", ids[1][:8])  # fmt: skip
    assert code == 0, text
    with h5py.File(out, "r") as f:
        (name,) = list(f["data"])
        g = f["data"][name]
        assert g.attrs["num_samples"] == LENGTHS[1] and g["actions"].shape == (LENGTHS[1], 7)
        assert g.attrs["name"] == ids[1]  # exported under its episode id


def test_refusals_are_one_line(project: tuple[Path, list[str]], tmp_path: Path) -> None:
    root, _ = project
    base = ["export", "demos", "--project", str(root), "--out", str(tmp_path / "x")]
    code, out = run(*base, "--format", "lerobot", "--scenario", "cook-patty")
    assert code == 2 and out.startswith("error:") and "cook-patty" in out
    code, out = run(*base, "--format", "robomimic", "nope-nope")
    assert code == 2 and out.startswith("error:") and "nope-nope" in out
    code, out = run(*base, "--format", "mp4")
    assert code == 2 and "mp4" in out
    assert not (tmp_path / "x").exists()


def test_annotation_export_still_runs_without_a_subcommand(
    project: tuple[Path, list[str]],
) -> None:
    root, _ = project
    code, out = run("export", "--project", str(root), "--format", "json")
    assert code == 0 and isinstance(json.loads(out), (list, dict))
    code, out = run("export")
    assert code == 2 and "--project" in out


def test_demos_list_and_import_back(project: tuple[Path, list[str]], tmp_path: Path) -> None:
    root, ids = project
    code, out = run("demos", "list", "--project", str(root))
    assert code == 0 and {i[:8] for i in ids} <= set(out.split())
    code, out = run("export", "demos", "--format", "robomimic", "--project", str(root),
                    "--out", str(tmp_path / "d.hdf5"))  # fmt: skip
    assert code == 0, out
    other = tmp_path / "other"
    Project.create(other).close()
    code, out = run("demos", "import", str(tmp_path / "d.hdf5"), "--format", "robomimic",
                    "--project", str(other))  # fmt: skip
    assert code == 0 and out.startswith("imported 2 demonstration(s)"), out
    code, out = run("demos", "rate", "--project", str(other))
    assert code == 2 and "no 'front' video was recorded" in out  # recorded without a camera
