"""``workbench continuity``: ``scan`` on plain files (JSON lines other tools can stream, or a
table), and ``status`` / ``queue`` on a project."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import storage._continuity_scans as kind_module
from app.cli._continuity_cmds import COMMANDS, continuity
from app.cli._main import cli
from sim.synthetic import corrupt_video, write_demo_cases
from storage import CONTINUITY_KIND, Project, import_cases
from tests.casefactory import make_case

WINDOW_KEYS = {"start_s", "end_s", "score", "reason", "kind", "peak_s"}


def wb(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("continuity-cli")
    (case, *_rest) = write_demo_cases(root / "cases", seed=0)
    (clean,) = (case / "videos").glob("*gen_c*.mp4")
    out = {}
    for kind in ("teleport", "none"):
        out[kind] = root / f"{kind}.mp4"
        corrupt_video(clean, kind, out[kind])
    return out


def test_commands_are_exposed() -> None:
    assert [continuity] == COMMANDS
    assert {"scan", "status", "queue"} <= set(continuity.commands)


def test_scan_json_finds_the_teleport_and_not_the_clean_reencode(clips: dict[str, Path]) -> None:
    res = wb("continuity", "scan", str(clips["teleport"]), str(clips["none"]), "--json")
    assert res.exit_code == 0, res.output
    lines = res.stdout.strip().splitlines()
    assert len(lines) == 2  # one JSON object per file, one per line
    cut, clean = (json.loads(line) for line in lines)
    truth = json.loads(Path(str(clips["teleport"]) + ".json").read_text())
    assert cut["file"] == str(clips["teleport"]) and clean["file"] == str(clips["none"])
    assert set(cut) == {"file", "duration_s", "frames", "seconds", "windows"}
    assert cut["frames"] == truth["frames_out"] and cut["duration_s"] > 0
    assert cut["windows"] and all(set(w) == WINDOW_KEYS for w in cut["windows"])
    assert any(w["start_s"] <= truth["start_s"] <= w["end_s"] for w in cut["windows"])
    assert clean["windows"] == []


def test_scan_table_is_readable(clips: dict[str, Path]) -> None:
    res = wb("continuity", "scan", str(clips["teleport"]), str(clips["none"]))
    assert res.exit_code == 0, res.output
    assert "teleport.mp4" in res.stdout and "jump" in res.stdout
    assert "no candidate windows" in res.stdout  # the clean one says so, not an empty table


def test_scan_of_a_file_that_is_not_a_video_names_it(tmp_path: Path) -> None:
    (tmp_path / "x.mp4").write_text("not a video")
    res = wb("continuity", "scan", str(tmp_path / "x.mp4"), "--json")
    assert res.exit_code == 2 and res.stdout == ""
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith("error: x.mp4:")
    res = wb("continuity", "scan", str(tmp_path / "missing.mp4"))
    assert res.exit_code == 2 and "missing.mp4" in res.stderr and "Traceback" not in res.output


def test_status_and_queue_on_a_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cases = tmp_path / "cases"
    make_case(cases, "stack_blocks", n_videos=2)
    root = tmp_path / "p"
    with Project.create(root) as p:
        import_cases(p, cases)  # short clips: both scanned at import
        p.db.execute("DELETE FROM continuity_scans WHERE sha256 = ?", [p.videos()[0].media])
        p.db.conn.commit()
    res = wb("continuity", "status", "--project", str(root), "--json")
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got == {"videos": 2, "scanned": 1, "missing": 1, "stale": 0, "queued": 0,
                   "version": got["version"]}  # fmt: skip
    res = wb("continuity", "queue", "--project", str(root))
    assert res.exit_code == 0 and "queued 1 scan" in res.stdout
    with Project.open(root) as p:
        assert [j.kind for j in p.jobs.query()] == [CONTINUITY_KIND]
        assert got["version"] == p.continuity.current_version
    res = wb("continuity", "status", "--project", str(root))
    assert res.exit_code == 0 and "1 scanned" in res.stdout and "1 queued" in res.stdout
    assert "queued 0 scan" in wb("continuity", "queue", "--project", str(root)).stdout
    res = wb("continuity", "status", "--project", str(tmp_path / "nowhere"))
    assert res.exit_code == 2 and "not a workbench project" in res.stderr
    assert kind_module.INLINE_SCAN_MAX_S == 30.0  # the documented default
