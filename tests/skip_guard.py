"""A pytest plugin for CI: a skipped test fails the run, except tests marked ``live``.

Locally a test may skip when something optional is missing (the ffmpeg command line, a model
endpoint). CI installs everything (``make test``), so there a skip means a test silently stopped
running: the run fails and the summary lists every skipped test with its reason. Only tests
marked ``live`` (they need a configured model endpoint, which CI does not have) may skip.

Active when the ``CI`` environment variable is set to anything but "", "0", "false" or "no".
"""

from __future__ import annotations

import os

import pytest

ALLOWED_MARK = "live"


def skips_forbidden() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def install(config: pytest.Config) -> None:
    """Register the guard on `config` when skips are forbidden (call from pytest_configure)."""
    if skips_forbidden() and not config.pluginmanager.has_plugin("wb-skip-guard"):
        config.pluginmanager.register(SkipGuard(), "wb-skip-guard")


def _reason(report: pytest.CollectReport | pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


class SkipGuard:
    """Collects skips that are not allowed and fails the session if there are any."""

    def __init__(self) -> None:
        self.skipped: list[tuple[str, str]] = []

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        # A module-level skip hides every test of the module: always reported.
        if report.skipped:
            self.skipped.append((report.nodeid or ".", _reason(report)))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not report.skipped or hasattr(report, "wasxfail"):
            return
        if ALLOWED_MARK in report.keywords:
            return
        self.skipped.append((report.nodeid, _reason(report)))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.skipped and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.skipped:
            return
        terminalreporter.section("skipped tests fail CI", sep="=", red=True, bold=True)
        terminalreporter.line(
            f"{len(self.skipped)} test(s) skipped; in CI only tests marked "
            f"'{ALLOWED_MARK}' may skip (install what they need, see the Makefile):",
            red=True,
        )
        for nodeid, reason in self.skipped:
            terminalreporter.line(f"  SKIPPED {nodeid}: {reason}")
