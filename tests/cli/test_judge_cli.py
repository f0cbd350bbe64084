"""``workbench judge run|status`` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from app.cli._main import cli
from storage import Project, import_cases


def test_judge_run_and_status(tmp_path: Path, cases_dir: Path) -> None:
    from judge import ModelProfile, save_profile

    with Project.create(tmp_path / "p") as p:
        import_cases(p, cases_dir)
        save_profile(p.profiles, ModelProfile(name="local", base_url="http://x/v1", model="m"))
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
    from judge import ModelProfile, save_profile

    with Project.create(tmp_path / "p") as p:
        import_cases(p, cases_dir)
        save_profile(p.profiles, ModelProfile(name="local", base_url="http://x/v1", model="m"))
    res = CliRunner().invoke(
        cli, ["judge", "run", "--project", str(tmp_path / "p"), "--videos", "V-NOPE",
              "--profile", "local"],
    )  # fmt: skip
    assert res.exit_code == 2 and "V-NOPE" in res.output


def test_profiles_rescore_and_status_after_a_real_run(tmp_path: Path, cases_dir: Path) -> None:
    from judge.models.loopback import FakeServer
    from judge.video.loopback import wire_responder
    from storage import run_worker

    project = tmp_path / "p"
    with Project.create(project) as p:
        import_cases(p, cases_dir)
    runner = CliRunner()
    with FakeServer(wire_responder()) as srv:
        res = runner.invoke(
            cli, ["judge", "profile", "add", "--project", str(project), "loop",
                  "--base-url", srv.base_url, "--model", "fake-vlm", "--api-key-env", "",
                  "--price-in", "0.5", "--price-out", "2"],
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        listed = runner.invoke(cli, ["judge", "profile", "list", "--project", str(project)])
        assert "loop: fake-vlm at http://127.0.0.1" in listed.output
        res = runner.invoke(
            cli, ["judge", "run", "--project", str(project), "--case", "tidy_cups",
                  "--profile", "loop", "--mode", "independent", "--batch", "b"],
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        run_worker(project, concurrency=2, drain=True, log=lambda _r: None)
    status = json.loads(
        runner.invoke(cli, ["judge", "status", "--project", str(project), "--json"]).output
    )
    assert status["counts"]["done"] == 1 and status["cost_usd"] > 0
    res = runner.invoke(cli, ["judge", "rescore", "--project", str(project), "--batch", "b",
                              "--json"])  # fmt: skip
    (row,) = json.loads(res.output)
    assert row["sequential"]["S"] == row["independent"]["S"] == row["S_before"] == 100.0


def test_profile_with_a_key_field_is_refused(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p"):
        pass
    res = CliRunner().invoke(
        cli, ["judge", "profile", "add", "--project", str(tmp_path / "p"), "x",
              "--base-url", "http://127.0.0.1:1/v1", "--model", "m",
              "--api-key-env", "sk-abc123secret"],
    )  # fmt: skip
    assert res.exit_code == 2 and "sk-abc123secret" not in res.output
    assert "api_key_env" in res.output


def test_judge_run_help_shows_the_queues_own_retry_defaults() -> None:
    """The CLI spells the defaults out (so `--help` needs no core import); they must be the
    queue's."""
    from app.cli._judge_cmds import run as run_cmd
    from storage import DEFAULT_MAX_ATTEMPTS, DEFAULT_RATE_LIMIT_BACKOFF_S, DEFAULT_RETRY_BACKOFF_S

    defaults = {p.name: p.default for p in run_cmd.params}
    assert defaults["max_attempts"] == DEFAULT_MAX_ATTEMPTS
    assert defaults["retry_backoff_s"] == DEFAULT_RETRY_BACKOFF_S
    assert defaults["rate_limit_backoff_s"] == DEFAULT_RATE_LIMIT_BACKOFF_S
    text = CliRunner().invoke(cli, ["judge", "run", "--help"]).output
    assert "--retry-backoff" in text and "--rate-limit-backoff" in text and "--max-attempts" in text
