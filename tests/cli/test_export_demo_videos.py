"""`workbench export demos --format lerobot` renders the cameras asked for from the recorded states
into MP4s and prints where it wrote them and how much; a bad size or camera is refused in one
line before anything is written."""

from __future__ import annotations

from pathlib import Path

import av
import pytest
from click.testing import CliRunner

from app.cli._main import cli
from sim.episode import open_scenario
from sim.teleop import Command, Recorder, store_demonstration
from storage import Project

STEPS = 5


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo-videos") / "p"
    rec = Recorder(open_scenario("stack-two"), "wb6")
    with Project.create(root) as p:
        rec.start()
        for _ in range(STEPS):
            rec.step(Command(linear=(0.1, 0.0, 0.0)))
        store_demonstration(p, rec.stop()[-1])
    rec.close()
    return root


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=True)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def test_it_prints_where_it_wrote_and_the_videos(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    code, text = run("export", "demos", "--format", "lerobot", "--project", str(project),
                     "--out", str(out), "--camera", "top", "--size", "160x120")  # fmt: skip
    assert code == 0, text
    video = out / "videos/observation.images.top/chunk-000/file-000.mp4"
    lines = text.splitlines()
    assert lines[0] == (
        f"exported 1 demonstration(s) as lerobot to {out}: {STEPS} frames, 1 camera video(s) (MP4)"
    )
    assert lines[1].strip() == str(video)
    with av.open(str(video)) as c:
        frames = list(c.decode(c.streams.video[0]))
    assert len(frames) == STEPS and (frames[0].width, frames[0].height) == (160, 120)


def test_a_bad_size_or_camera_is_refused_before_writing(project: Path, tmp_path: Path) -> None:
    base = ["export", "demos", "--format", "lerobot", "--project", str(project),
            "--out", str(tmp_path / "x")]  # fmt: skip
    code, text = run(*base, "--size", "big")
    assert code == 2 and "WIDTHxHEIGHT" in text
    code, text = run(*base, "--camera", "ceiling")
    assert code == 2 and text.startswith("error:") and "ceiling" in text
    assert not (tmp_path / "x").exists()
