"""``workbench judge run|status`` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from app.cli._main import cli
from storage import Project, import_cases


def test_judge_run_and_status(tmp_path: Path, cases_dir: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        import_cases(p, cases_dir)
    runner = CliRunner()
    res = runner.invoke(
        cli, ["judge", "run", "--project", str(tmp_path / "p"), "--case", "stack_blocks",
              "--profile", "local", "--batch", "b1"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "queued 2 job(s) in batch b1" in res.output
    res = runner.invoke(cli, ["judge", "status", "--project", str(tmp_path / "p"), "--json"])
    data = json.loads(res.output)
    assert data["counts"]["queued"] == 2 and data["cost_usd"] == 0 and data["failed"] == []


def test_judge_run_unknown_video_is_a_clear_error(tmp_path: Path, cases_dir: Path) -> None:
    with Project.create(tmp_path / "p") as p:
        import_cases(p, cases_dir)
    res = CliRunner().invoke(
        cli, ["judge", "run", "--project", str(tmp_path / "p"), "--videos", "V-NOPE",
              "--profile", "local"],
    )  # fmt: skip
    assert res.exit_code == 2 and "V-NOPE" in res.output
