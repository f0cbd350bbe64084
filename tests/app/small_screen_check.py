"""Every workspace fits a 1366×768 screen (run by ``test_small_screen.py`` under its own Xvfb).

Not collected on its own (no ``test_`` prefix): the session's Xvfb is 800×600, so
``test_small_screen.py`` runs this module in a child pytest whose Xvfb is 1366×768, and the first
assertion checks that the screen really is that size. With ``SCREENSHOT_DIR`` set, it saves a
grab of the whole screen (what a person sees, cut at the screen's edge) per workspace.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from app.gui._main_window import MainWindow
from tests.app.rated import rate_and_judge

# 1366×768 in the test; SCREEN_SIZE=1600x1000 (say) checks and grabs another screen by hand
SCREEN = tuple(int(n) for n in os.environ.get("SCREEN_SIZE", "1366x768").split("x"))
SCREEN_RATERS = {
    "alice": ("T3", None, "P2"),
    "bob": ("P4", None, "T2"),
    "tester": (None, "P3", None),
}


@pytest.fixture
def demo_like(project_dir: Path) -> Path:
    """Three videos rated by three raters (one is the window's rater) and judged once each."""
    return rate_and_judge(project_dir, SCREEN_RATERS)


def _problem(w: QWidget, screen: QRect) -> str | None:
    """Why a person could not see or reach all of ``w`` (None when they can)."""
    if not w.isVisible():
        return "not visible"
    rect = QRect(w.mapToGlobal(QPoint(0, 0)), w.size())
    if not screen.contains(rect):
        return f"at {rect.getRect()}, outside the screen {screen.getRect()}"
    seen = w.visibleRegion().boundingRect()
    if seen.size() != w.size():  # cut by a scroll area, a splitter or its dock
        return f"only {seen.width()}×{seen.height()} of {w.width()}×{w.height()} shown"
    return None


def _key_widgets(w: MainWindow, workspace: str) -> dict[str, QWidget]:
    a = w.annotate
    common: dict[str, QWidget] = {
        "video list": a.videos,
        "frame view": a.view,
        "play button": a.transport.play_button,
        "frame position": a.transport.position,
        "timeline": a.timeline,
    }
    if workspace == "annotate":
        buttons = {b.text(): b for b in a.subgoals.findChildren(QPushButton)}
        found = common | {f"score {k}": v for k, v in a.scores.values.items()}
        found |= {f"subgoal {t}": buttons[t] for t in ("Add…", "Edit…", "Delete")}
        found["subgoal list"] = a.subgoals.list
        for frame, name, state, answers in a.gates.rows:
            gate = name.text().split("</b>")[0].removeprefix("<b>")
            found[f"{gate} row"] = frame
            found[f"{gate} answer"] = state
            found |= {f"{gate} {ans.name} button": b for ans, b in answers.items()}
        found["evidence list"] = a.evidence
        return found
    if workspace == "judge":
        j, t = w.jobs_panel, w.trace_view
        buttons = {b.text(): b for b in j.findChildren(QPushButton)}
        return (
            common
            | {
                "run picker": t.runs,
                "trace": t.view,
                "batch picker": j.batch,
                "concurrency": j.n_workers,
                "start worker": j.start_button,
                "jobs table": j.table,
            }
            | {f"jobs {k}": b for k, b in buttons.items()}
        )
    if workspace == "episode":
        e = w.episode
        return {
            "episode filter": e.browser.filter,
            "episode list": e.browser.table,
            "timeline": e.view.viewport(),
            "transcript": e.transcript,
            "inspector": e.inspector,
            "information tabs": e.tabs.tabBar(),
            "playhead slider": e.slider,
            "tick": e.tick_label,
        }
    if workspace == "teleop":
        t = w.teleop
        return {
            "scenario picker": t.scenario, "arm picker": t.arm, "device picker": t.device,
            "view": t.view.canvas, "record": t.record_button, "next": t.next_button,
            "re-record": t.rerecord_button, "stop": t.stop_button, "export": t.export_button,
            "status line": t.line,
        }  # fmt: skip
    r = w.results
    return {
        "video list": a.videos,
        "human success": r.human_success,
        "compute": r.compute_button,
        "export csv": r.export_button,
        "export figure": r.figure_button,
        "status": r.status,
        "tabs": r.tabs.tabBar(),
    }


def test_every_workspace_fits_a_small_laptop_screen(
    qtbot: QtBot, demo_like: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    screen = QApplication.primaryScreen()
    assert (screen.geometry().width(), screen.geometry().height()) == SCREEN
    avail = screen.availableGeometry()
    w = make_window(demo_like)
    qtbot.waitUntil(lambda: w.annotate.view._image is not None)
    opened = w.frameGeometry()
    shots = os.environ.get("SCREENSHOT_DIR")
    problems: list[str] = []
    if not avail.contains(opened):
        problems.append(f"opens at {opened.getRect()} on a {avail.getRect()} screen")
    order = [*w.WORKSPACES, next(iter(w.WORKSPACES))]  # …and back to the first
    for step, name in enumerate(order):
        action = w.actions_by_id[f"view.{name}"]
        QTest.keySequence(w, action.shortcut())  # Ctrl+1, Ctrl+2 … as a person presses them
        qtbot.waitUntil(action.isChecked)
        if name == "results":
            qtbot.waitUntil(lambda: w.results.results is not None, timeout=120_000)
        qtbot.wait(200)  # let the dock layout settle (a grown window shows only after this)
        geo = w.frameGeometry()
        if not avail.contains(geo):
            problems.append(f"{name}: window at {geo.getRect()} leaves the screen")
        if geo.width() > opened.width() or geo.height() > opened.height():
            problems.append(f"{name}: window grew from {opened.size()} to {geo.size()}")
        for label, widget in _key_widgets(w, name).items():
            why = _problem(widget, avail)
            if why:
                problems.append(f"{name}: {label}: {why}")
        tabs = w.results.tabs if name == "results" else None
        for k in range(tabs.count() if tabs else 1):  # every results tab, not just the first
            view = name
            if tabs is not None:
                tabs.setCurrentIndex(k)
                qtbot.wait(100)
                view = f"{name}-{tabs.tabText(k).lower().replace(' ', '-')}"
                for part in (tabs.tabBar(), tabs.currentWidget()):
                    why = _problem(part, avail)
                    if why:
                        problems.append(f"{view}: {why}")
            if shots:
                qtbot.wait(100)  # the grab is of the screen: let the last change paint first
                Path(shots).mkdir(parents=True, exist_ok=True)
                screen.grabWindow(0).save(str(Path(shots) / f"{step + 1}-{view}-1366x768.png"))
    assert not problems, "\n".join(problems)
