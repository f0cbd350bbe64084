"""The lists follow the project: an episode written by the CLI in another process, a job queued
or cancelled there, and a live episode that ends in this window show up in the open window
without a restart, keeping the selection, the filter, the sort and half-typed text; a locked or
busy database only puts the check off to the next tick."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

import app.gui.common._project_watch as watch_module
from app.gui._main_window import MainWindow
from app.gui.episode import EpisodeBrowser
from app.gui.episode._browser import COLUMNS
from judge import ModelProfile, save_profile
from sim.episode import open_scenario, run_episode
from storage import Project

pytestmark = pytest.mark.gui

REPO = Path(__file__).resolve().parents[2]
LONG = 60_000  # ms: generous, for a loaded two-core machine


def workbench(*args: str) -> str:
    """``workbench ARGS`` in another process, with its own connection to the project."""
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", *args], cwd=REPO, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def shown_ids(b: EpisodeBrowser) -> list[str]:
    t = b.table
    return [str(i.data(Qt.ItemDataRole.UserRole)) for r in range(t.rowCount())
            if not t.isRowHidden(r) and (i := t.item(r, 0)) is not None]  # fmt: skip


def cell(b: EpisodeBrowser, episode_id: str, column: str) -> str | None:
    row = b.row_of(episode_id)
    item = None if row is None else b.table.item(row, COLUMNS.index(column))
    return None if item is None else item.text()


def status_of(b: EpisodeBrowser, episode_id: str) -> str | None:
    return cell(b, episode_id, "status")


def click_row(b: EpisodeBrowser, episode_id: str) -> None:
    row = b.row_of(episode_id)
    item = None if row is None else b.table.item(row, 1)
    assert item is not None
    at = b.table.visualItemRect(item).center()
    QTest.mouseClick(b.table.viewport(), Qt.MouseButton.LeftButton, pos=at)


def click_header(b: EpisodeBrowser, column: str) -> None:
    header = b.table.horizontalHeader()
    col = COLUMNS.index(column)
    x = header.sectionViewportPosition(col) + header.sectionSize(col) // 2
    QTest.mouseClick(
        header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, header.height() // 2)
    )


def watch_ticks(w: MainWindow) -> list[int]:
    """One entry per tick of the window's project watch from now on."""
    ticks: list[int] = []
    w.watch.timer.timeout.connect(lambda: ticks.append(1))
    return ticks


@pytest.fixture
def two_episodes(tmp_path: Path) -> tuple[Path, str, str]:
    """A burner-on episode and a stack-two episode, both symbolic."""
    root = tmp_path / "eps"
    with Project.create(root) as p:
        burner = run_episode(open_scenario("burner-on"), mode="symbolic", project=p).episode_id
        stack = run_episode(open_scenario("stack-two"), mode="symbolic", project=p).episode_id
    assert burner is not None and stack is not None
    return root, burner, stack


def test_an_episode_from_the_cli_joins_the_filtered_list_keeping_the_selection(
    qtbot: QtBot, make_window: Callable[[Path], MainWindow], two_episodes: tuple[Path, str, str]
) -> None:
    root, burner, stack = two_episodes
    w = make_window(root)
    w.set_workspace("episode")
    b = w.episode.browser
    qtbot.waitUntil(lambda: set(shown_ids(b)) == {burner, stack})
    click_header(b, "scenario")  # the user's sort
    sorted_by = b.table.horizontalHeader().sortIndicatorSection()
    assert sorted_by == COLUMNS.index("scenario")
    QTest.mouseClick(b.filter, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(b.filter, "burner")
    assert shown_ids(b) == [burner]
    click_row(b, burner)
    assert b.selected_id() == burner
    QTest.mouseClick(b.note, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(b.note, "burner left on")  # being typed, not saved (no Enter)

    out = workbench("sim", "run", "burner-on", "--mode", "symbolic", "--project", str(root),
                    "--json")  # fmt: skip
    new = json.loads(out)["episode"]

    qtbot.waitUntil(lambda: new in shown_ids(b), timeout=LONG)
    assert set(shown_ids(b)) == {burner, new}  # the filter still holds: stack-two stays out
    assert b.filter.text() == "burner"
    assert b.selected_id() == burner  # the user's row, not the newcomer
    assert b.note.text() == "burner left on"  # half-typed text survives the refresh
    assert b.table.horizontalHeader().sortIndicatorSection() == sorted_by
    assert status_of(b, new) == "completed"
    # someone else stores a note on the very episode being annotated: the list shows it, the
    # editor keeps the unsaved text rather than swapping it for theirs
    workbench("episode", "note", burner, "from the CLI", "--project", str(root))
    qtbot.waitUntil(lambda: cell(b, burner, "note") == "from the CLI", timeout=LONG)
    assert b.note.text() == "burner left on" and b.selected_id() == burner


def test_new_rows_above_do_not_scroll_the_list_away(
    qtbot: QtBot, make_window: Callable[[Path], MainWindow], tmp_path: Path
) -> None:
    root = tmp_path / "many"
    with Project.create(root) as p:
        for _ in range(40):
            run_episode(open_scenario("burner-on"), mode="symbolic", project=p)
    w = make_window(root)
    w.set_workspace("episode")
    b = w.episode.browser
    qtbot.waitUntil(lambda: len(shown_ids(b)) == 40)
    click_row(b, shown_ids(b)[0])
    bar = b.table.verticalScrollBar()
    below_handle = QPoint(bar.width() // 2, bar.height() * 3 // 4)
    QTest.mouseClick(bar, Qt.MouseButton.LeftButton, pos=below_handle)  # a page down
    assert bar.value() > bar.minimum()  # scrolled into the middle of the list
    chosen = b.selected_id()
    top = b.table.item(b.table.rowAt(0), 0)
    assert chosen is not None and top is not None
    in_view = str(top.data(Qt.ItemDataRole.UserRole))
    with Project.open(root) as other:  # newest first: it lands above what is in view
        new = run_episode(open_scenario("burner-on"), mode="symbolic", project=other).episode_id
    qtbot.waitUntil(lambda: new in shown_ids(b), timeout=LONG)
    top = b.table.item(b.table.rowAt(0), 0)
    assert top is not None and str(top.data(Qt.ItemDataRole.UserRole)) == in_view
    assert b.selected_id() == chosen


def test_jobs_queued_and_cancelled_by_the_cli_show_and_an_idle_queue_is_left_alone(
    qtbot: QtBot, project_dir: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    with Project.open(project_dir) as p:
        save_profile(p.profiles, ModelProfile(name="local", base_url="http://x/v1", model="m"))
    w = make_window(project_dir)
    w.set_workspace("judge")
    panel = w.jobs_panel
    assert w.docks["Jobs"].isVisible() and panel.model.rowCount() == 0

    workbench("judge", "run", "--project", str(project_dir), "--profile", "local")

    qtbot.waitUntil(lambda: panel.model.rowCount() == 3, timeout=LONG)
    assert "3 queued" in panel.summary.text()
    # the user picks a job; while nothing changes, the table is not re-read under them
    rect = panel.table.visualRect(panel.model.index(1, 0))
    QTest.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    picked = panel.selected_ids()
    assert len(picked) == 1
    resets: list[int] = []
    panel.model.modelReset.connect(lambda: resets.append(1))
    ticks = watch_ticks(w)
    qtbot.waitUntil(lambda: len(ticks) >= 3, timeout=LONG)
    assert resets == [] and panel.selected_ids() == picked

    workbench("jobs", "cancel", "--project", str(project_dir), str(picked[0]))

    row = next(r for r, j in enumerate(panel.model.jobs) if j.id == picked[0])
    qtbot.waitUntil(lambda: panel.model.data(panel.model.index(row, 3)) == "cancelled",
                    timeout=LONG)  # fmt: skip
    assert "2 queued" in panel.summary.text()
    assert panel.selected_ids() == picked  # the selection came through the refresh


def test_a_live_episode_is_in_the_list_when_it_ends(
    qtbot: QtBot, make_window: Callable[[Path], MainWindow], tmp_path: Path
) -> None:
    root = tmp_path / "live"
    Project.create(root).close()
    w = make_window(root)
    w.set_workspace("episode")
    b, panel = w.episode.browser, w.episode.live
    assert shown_ids(b) == []
    try:
        panel.scenario.setCurrentText("burner-on")
        panel.mode.setCurrentText("symbolic")
        QTest.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: panel.play_button.isEnabled(), timeout=LONG)
        QTest.mouseClick(panel.step_button, Qt.MouseButton.LeftButton)
        running = panel.episode_id
        assert running is not None
        # stored by the live run's own connection: listed while it runs, not only once it is over
        qtbot.waitUntil(lambda: status_of(b, running) == "running", timeout=LONG)
        panel.speed.setValue(0)  # as fast as the machine goes
        QTest.mouseClick(panel.play_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: panel.live is not None and panel.live.finished, timeout=LONG)
        finished = panel.episode_id
        assert finished == running
        qtbot.waitUntil(lambda: status_of(b, finished) == "completed", timeout=LONG)
        panel.stop()

        # one stopped part-way ends as cancelled, and is listed as such
        QTest.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: panel.step_button.isEnabled(), timeout=LONG)
        QTest.mouseClick(panel.step_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: panel.live is not None and panel.live.tick >= 1, timeout=LONG)
        stopped = panel.episode_id
        assert stopped is not None and stopped != finished
        panel.stop()
        qtbot.waitUntil(lambda: status_of(b, stopped) == "cancelled", timeout=LONG)
        assert set(shown_ids(b)) == {finished, stopped}
    finally:  # a run left live would hold the window's close on its question
        panel.stop()


def test_the_watch_survives_a_locked_database(
    qtbot: QtBot,
    make_window: Callable[[Path], MainWindow],
    two_episodes: tuple[Path, str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, burner, stack = two_episodes
    w = make_window(root)
    w.set_workspace("episode")
    b = w.episode.browser
    other = Project.open(root)
    try:
        # another connection takes the write lock and writes an episode inside it
        other.db.conn.execute("BEGIN EXCLUSIVE")
        new = run_episode(open_scenario("burner-on"), mode="symbolic", project=other).episode_id
        assert new is not None
        ticks = watch_ticks(w)
        qtbot.waitUntil(lambda: len(ticks) >= 2, timeout=LONG)  # held over more than one tick
        assert new not in shown_ids(b)  # nothing uncommitted is shown
        # once it commits, the first reads find the file busy (a checkpoint, a recovery)
        real = watch_module.fingerprints
        refused: list[int] = []

        def busy(conn: sqlite3.Connection) -> dict[str, watch_module.Fingerprint]:
            if len(refused) < 2:
                refused.append(1)
                raise sqlite3.OperationalError("database is locked")
            return real(conn)

        monkeypatch.setattr(watch_module, "fingerprints", busy)
        skipped = w.watch.skipped
        other.db.conn.execute("COMMIT")
    finally:
        if other.db.conn.in_transaction:
            other.db.conn.execute("ROLLBACK")
        other.close()
    qtbot.waitUntil(lambda: new in shown_ids(b), timeout=LONG)  # no exception reached Qt
    assert len(refused) == 2 and w.watch.skipped >= skipped + 2
    assert set(shown_ids(b)) == {burner, stack, new}
