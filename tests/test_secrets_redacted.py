"""The API key is never shown or stored, even when an endpoint quotes it back in its refusal.

Two keys are used: one shaped like a key (``sk-…``, found by its shape) and one that is not
(found because the process read it: :func:`annotation.remember_secret`). Each reaches an
endpoint that refuses it with a 401 whose message echoes the ``Authorization`` header, as some
servers do; then ``self-test --project P --call``, a judge run through the CLI (queue, worker,
status, probe), the CLI's and the GUI's error boundaries and their bug reports must show neither
key anywhere: not in stdout, stderr, the log folder, the config folder or the project's files.
"""

from __future__ import annotations

import io
import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from annotation import UserError, redact, redact_logging, remember_secret
from app import _self_test
from app.cli._main import cli
from storage import Project, import_cases

SHAPED = "sk-test-SECRET123abcdefghijklmnop"  # an OpenAI-style key
OPAQUE = "wb-opaque-SECRET-4242-zyxw"  # a key nothing marks as one but its having been read


class _EchoKey401(BaseHTTPRequestHandler):
    """Refuses every request, quoting the Authorization header it got (as some servers do)."""

    def _refuse(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        got = self.headers.get("Authorization", "")
        body = {"error": {"message": f"Incorrect API key provided: {got}. You can find your "
                          f"API key at https://example.invalid/keys; raw key: "
                          f"{got.removeprefix('Bearer ')}",
                          "type": "invalid_request_error", "code": "invalid_api_key"}}  # fmt: skip
        data = json.dumps(body).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # http.server's names
        self._refuse()

    def do_POST(self) -> None:
        self._refuse()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def echo_401() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _EchoKey401)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def assert_nowhere(tmp_path: Path, *results: Result) -> None:
    """Neither key in any output, nor in any file under ``tmp_path`` (project, logs, config)."""
    for res in results:
        for text in (res.stdout, res.stderr):
            assert "SECRET" not in text, text
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files, "nothing was written: the test checks nothing"
    for path in files:
        assert b"SECRET" not in path.read_bytes(), path


def test_redact_removes_keys_by_value_and_by_shape() -> None:
    remember_secret(OPAQUE)
    cases = {
        f"Incorrect API key provided: Bearer {SHAPED}.": "Incorrect API key provided: Bearer ***.",
        f"Incorrect API key provided: {SHAPED}": "Incorrect API key provided: ***",
        f"got {OPAQUE} instead": "got *** instead",
        "Authorization: Basic dXNlcjpwYXNzd29yZA==": "Authorization: Basic ***",
        '{"authorization": "Bearer abc.def"}': '{"authorization": "Bearer ***"}',
        "https://h/v1?api_key=hunter2hunter2&x=1": "https://h/v1?api_key=***&x=1",
        "'x-api-key': 'zz-top-9876543'": "'x-api-key': '***'",
        "OPENAI_API_KEY=abcdef123456": "OPENAI_API_KEY=***",
        "sk-proj-AbC_dEf-123456 and sk-ant-api03-xyzxyzxyz": "sk-*** and sk-***",
        # what is not a key stays: the variable a profile names, token counts, short words
        "api_key_env: OPENAI_API_KEY, max_tokens=8, sk-1": "api_key_env: OPENAI_API_KEY, "
        "max_tokens=8, sk-1",
        "no API key: set WB_KEY (profile 'lab')": "no API key: set WB_KEY (profile 'lab')",
    }
    for text, expected in cases.items():
        assert redact(text) == expected, text
    assert redact("the key is k3y-given-here", secrets=["k3y-given-here"]) == "the key is ***"
    assert redact("a short key abc stays", secrets=["abc"]) == "a short key abc stays"


def test_self_test_call_never_prints_the_key_the_endpoint_echoes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, echo_401: str
) -> None:
    from judge import ModelProfile, save_profile

    monkeypatch.setattr(_self_test, "CHECKS", (("model client", _self_test._model_client, True),))
    monkeypatch.setenv("WB_SHAPED_KEY", SHAPED)
    monkeypatch.setenv("WB_OPAQUE_KEY", OPAQUE)
    project = tmp_path / "p"
    with Project.create(project) as p:
        for name, env in (("shaped", "WB_SHAPED_KEY"), ("opaque", "WB_OPAQUE_KEY")):
            save_profile(p.profiles, ModelProfile(name=name, base_url=echo_401, model="m",
                                                  api_key_env=env))  # fmt: skip
    for profile in ("shaped", "opaque"):  # the first in its own process: nothing remembered yet
        monkeypatch.setattr(_self_test, "CHECKS", (("model client", _one(profile), True),))
        res = CliRunner().invoke(cli, ["self-test", "--project", str(project), "--call"])
        assert res.exit_code == 1, res.output
        assert "401" in res.stdout and "Incorrect API key provided" in res.stdout, res.stdout
        assert_nowhere(tmp_path, res)
    res = CliRunner().invoke(cli, ["self-test", "--json", "--project", str(project), "--call"])
    assert res.exit_code == 1 and "FAIL" not in res.stdout
    assert_nowhere(tmp_path, res)


def _one(profile: str):  # type: ignore[no-untyped-def]
    """The model client check on one profile of the project: what ``--call`` does for each."""

    def check(_tmp: Path, opts: _self_test.Options) -> str:
        from judge import ModelProfile

        with Project.open(opts.project or Path()) as p:
            found = ModelProfile.from_config(profile, p.profiles.get(profile))
        return _self_test._call(opts.project or Path(), found)

    return check


def test_a_judge_run_through_the_cli_never_shows_or_stores_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cases_dir: Path
) -> None:
    from judge.models.loopback import FakeServer

    project = tmp_path / "p"
    with Project.create(project) as p:
        import_cases(p, cases_dir / "tidy_cups")
    runner = CliRunner()
    outputs = []
    for key in (SHAPED, OPAQUE):
        monkeypatch.setenv("WB_JUDGE_KEY", key)
        with FakeServer(expected_key="the-right-key-0000") as srv:  # 401 echoing what it got
            outputs.append(runner.invoke(cli, [
                "judge", "profile", "add", "--project", str(project), "lab", "--base-url",
                srv.base_url, "--model", "fake-vlm", "--api-key-env", "WB_JUDGE_KEY",
            ]))  # fmt: skip
            probe = runner.invoke(cli, ["judge", "profile", "probe", "--project", str(project),
                                        "lab"])  # fmt: skip
            # (a refused probe is reported as a bug today: another matter; its report is checked)
            assert probe.exit_code != 0 and "Incorrect API key" in probe.stderr, probe.output
            queued = runner.invoke(cli, ["judge", "run", "--project", str(project), "--case",
                                         "tidy_cups", "--profile", "lab"])  # fmt: skip
            worker = runner.invoke(cli, ["worker", "--project", str(project), "--drain"])
            assert worker.exit_code == 0, worker.output
            assert any(r.authorization == f"Bearer {key}" for r in srv.requests)  # it was sent
            status = runner.invoke(cli, ["judge", "status", "--project", str(project)])
            jobs = runner.invoke(cli, ["jobs", "status", "--project", str(project), "--json"])
            assert "Incorrect API key" in jobs.stdout, jobs.stdout  # the refusal is explained
            outputs += [probe, queued, worker, status, jobs]
            runner.invoke(cli, ["judge", "profile", "remove", "--project", str(project), "lab"])
    assert_nowhere(tmp_path, *outputs)


def test_the_cli_boundary_and_its_bug_report_leave_the_key_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def user_error(*_a: object, **_k: object) -> None:
        raise UserError(f"the endpoint said: Incorrect API key provided: Bearer {SHAPED}")

    def bug(*_a: object, **_k: object) -> None:
        raise RuntimeError(f"header was Authorization: Bearer {SHAPED}; also {OPAQUE}")

    remember_secret(OPAQUE)
    results = []
    for fail, code in ((user_error, 2), (bug, 1)):
        monkeypatch.setattr(_self_test, "run_self_test", fail)
        res = CliRunner().invoke(cli, ["self-test"])
        assert res.exit_code == code, res.output
        assert "Bearer ***" in res.stderr, res.stderr
        results.append(res)
    (report,) = (tmp_path / "logs").glob("bug-*.log")
    assert "RuntimeError" in report.read_text() and "Bearer ***" in report.read_text()
    assert_nowhere(tmp_path, *results)
    # and once the CLI ran, whatever logging prints goes through the same redaction
    assert any(f for f in logging.lastResort.filters if f is not None)  # type: ignore[union-attr]


def test_the_gui_boundary_and_its_bug_report_leave_the_key_out(tmp_path: Path) -> None:
    from app.gui.common._errors import error_text

    remember_secret(OPAQUE)
    title, text, bug = error_text(UserError(f"refused: Incorrect API key provided: {SHAPED}"))
    assert (title, bug) == ("Cannot do that", False) and "SECRET" not in text
    title, text, bug = error_text(RuntimeError(f"x-api-key: {OPAQUE} / Bearer {SHAPED}"))
    assert bug and "this is a bug" in text and "SECRET" not in text
    (report,) = (tmp_path / "logs").glob("bug-*.log")
    assert "RuntimeError" in report.read_text() and str(report) in text
    assert "SECRET" not in report.read_text()


def test_log_records_are_redacted_wherever_the_app_sets_up_logging() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    redact_logging(handler)
    log = logging.getLogger("tests.secrets")
    log.addHandler(handler)
    try:
        log.warning("endpoint said %s", f"Incorrect API key provided: {SHAPED}")
        try:
            raise ValueError(f"Authorization: Bearer {SHAPED}")
        except ValueError:
            log.exception("call failed")
    finally:
        log.removeHandler(handler)
    out = stream.getvalue()
    assert "Incorrect API key provided: ***" in out and "Traceback" in out
    assert "SECRET" not in out, out
