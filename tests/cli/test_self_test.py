"""``workbench self-test``: every check passes on this install, a failing check fails the run
with its name, and model profiles are checked without a network call unless --call is given
(then one GET /models to the loopback server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from app import _self_test
from app.cli._main import cli
from judge import ModelProfile, load_profile, save_profile
from judge.models.loopback import FakeServer
from storage import Project


def _records(output: str) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def test_every_check_passes_here_and_says_what_it_found(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["self-test", "--json"])
    assert res.exit_code == 0, res.output
    *checks, summary = _records(res.output)
    assert summary == {"passed": True, "failed": []}
    by_name = {c["check"]: c for c in checks}
    assert list(by_name) == [name for name, _fn, _req in _self_test.CHECKS]
    assert all(c["ok"] for c in checks), [c for c in checks if not c["ok"]]
    from sim.gl import describe, require_rendering

    opengl = by_name["opengl"]["detail"]  # the platform picked, why that order, what was tried
    assert opengl.startswith(describe(require_rendering())) and "rendered" in opengl
    assert "source install" in by_name["install"]["detail"]
    assert "14 scenarios" in by_name["resources"]["detail"]
    assert "24 frames exact" in by_name["video"]["detail"]
    assert "rendered 320x240" in by_name["mujoco"]["detail"]
    assert "case(s) added" in by_name["demo project"]["detail"]
    assert "no call" in by_name["model client"]["detail"]


def test_a_failing_check_fails_the_run_and_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(_tmp: Path, _opts: _self_test.Options) -> str:
        raise RuntimeError("no codec for h264")

    def optional(_tmp: Path, _opts: _self_test.Options) -> str:
        raise OSError("no hidraw")

    monkeypatch.setattr(_self_test, "CHECKS", (("video", broken, True),
                                               ("input devices", optional, False),
                                               ("sqlite", _self_test._sqlite, True)))  # fmt: skip
    res = CliRunner().invoke(cli, ["self-test"])
    assert res.exit_code == 1
    assert "FAIL video" in " ".join(res.output.split()) and "no codec for h264" in res.output
    assert "warn input devices" in " ".join(res.output.split())  # optional: reported, not fatal
    assert "ok sqlite" in " ".join(res.output.split())  # the others still ran
    assert "self-test FAILED: video" in res.output
    monkeypatch.setattr(_self_test, "CHECKS", _self_test.CHECKS[1:])
    assert CliRunner().invoke(cli, ["self-test"]).exit_code == 0  # optional failures only


def test_profiles_are_checked_offline_and_called_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_self_test, "CHECKS", (("model client", _self_test._model_client, True),))
    monkeypatch.delenv("WB_SELF_TEST_KEY", raising=False)
    with FakeServer(models=["judge-7b"], expected_key="sk-loopback-123") as srv:
        with Project.create(tmp_path / "p") as p:
            save_profile(p.profiles, ModelProfile(name="lab", base_url=srv.base_url,
                                                  model="judge-7b",
                                                  api_key_env="WB_SELF_TEST_KEY"))  # fmt: skip
        args = ["self-test", "--json", "--project", str(tmp_path / "p")]
        res = CliRunner().invoke(cli, args)
        (check, _summary) = _records(res.output)
        assert "lab: judge-7b at" in check["detail"] and "NO KEY" in check["detail"]
        assert srv.requests == []  # nothing was sent
        monkeypatch.setenv("WB_SELF_TEST_KEY", "sk-loopback-123")
        res = CliRunner().invoke(cli, [*args, "--call"])
        (check, summary) = _records(res.output)
        assert summary["passed"], check
        assert "key from $WB_SELF_TEST_KEY" in check["detail"]
        assert "endpoint answered: 1 models, judge-7b listed" in check["detail"]
        paths = [r.path for r in srv.requests]  # the listing, then the probe's short calls
        assert paths[0] == "/v1/models" and set(paths[1:]) <= {"/v1/chat/completions",
                                                               "/v1/models"}  # fmt: skip
        assert "cap by " in check["detail"]  # what the probe found, kept with the profile
        with Project.open(tmp_path / "p") as p:
            assert load_profile(p.profiles, "lab").capabilities is not None
        assert "sk-loopback-123" not in res.output
    res = CliRunner().invoke(cli, ["self-test", "--call"])
    assert res.exit_code == 2 and "--call needs --project" in res.output
