"""Each documented ``WB_`` setting the GUI reads changes what the GUI does.

Every test here carries ``@pytest.mark.setting("WB_...")``; tests/storage/test_settings.py fails
when a documented setting has no such test. Settings are read from the environment when the
window opens, exactly as a user sets them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from annotation import Answer
from app.gui._main_window import MainWindow
from app.gui.common._bridge import Bridge
from storage import Project
from storage.media import FrameStore
from tests.app.test_annotate_keyboard import add_subgoal_by_keyboard, press

MakeWindow = Callable[[Path], MainWindow]


@pytest.mark.setting("WB_RATER")
def test_rater_is_who_decisions_are_recorded_under(
    qtbot: QtBot, project_dir: Path, make_window: MakeWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WB_RATER", "ana")
    w = make_window(project_dir)
    assert w.state.video is not None
    add_subgoal_by_keyboard(qtbot, w, ["red block", "blue plate", "place on"])
    qtbot.waitUntil(lambda: len(w.state.plan()) == 1)
    press(qtbot, Qt.Key.Key_Y)
    with Project.open(project_dir) as p:
        (subgoal,) = p.annotations.plan(w.state.video.case_id, "ana")
        assert p.annotations.answers(w.state.video.id, "ana")[subgoal.id] == {"T1": Answer.PASS}
        assert p.annotations.plan(w.state.video.case_id, "tester") == []


@pytest.mark.setting("WB_FRAME_CACHE_MB")
@pytest.mark.parametrize("mb", [16, 64])
def test_frame_cache_mb_bounds_the_decoded_frames_held(
    mb: int, project_dir: Path, make_window: MakeWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WB_FRAME_CACHE_MB", str(mb))
    w = make_window(project_dir)
    assert w.annotate.feed is not None
    assert w.annotate.feed.source.cache.max_bytes == mb * 2**20


@pytest.mark.setting("WB_FRAME_STORE")
@pytest.mark.parametrize("on", [True, False])
def test_frame_store_switches_the_seek_cache(
    on: bool,
    qtbot: QtBot,
    project_dir: Path,
    make_window: MakeWindow,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WB_FRAME_STORE", "true" if on else "false")
    w = make_window(project_dir)
    feed = w.annotate.feed
    assert feed is not None and w.state.project is not None and w.state.video is not None
    store_path = w.state.project.store_path(w.state.video)
    if on:
        qtbot.waitUntil(lambda: feed.source.seekable_fast, timeout=30_000)
        assert store_path.is_file()
    else:
        feed.request(5)  # frames still come, decoded exactly
        qtbot.waitUntil(lambda: w.state.frame == 0 and 5 in feed.source.cache, timeout=10_000)
        assert not feed.source.seekable_fast
        assert not store_path.exists()


@pytest.mark.setting("WB_FRAME_STORE_CRF")
def test_frame_store_crf_is_the_seek_cache_quality(
    qtbot: QtBot, project_dir: Path, make_window: MakeWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = {}
    for crf in (12, 36):
        monkeypatch.setenv("WB_FRAME_STORE_CRF", str(crf))
        w = make_window(project_dir)
        feed = w.annotate.feed
        assert feed is not None and w.state.project is not None and w.state.video is not None
        # The cache the previous window built has the other CRF: it is rebuilt with this one.
        qtbot.waitUntil(lambda feed=feed: feed.source.seekable_fast, timeout=30_000)
        path = w.state.project.store_path(w.state.video)
        store = FrameStore.open(path, feed.index)
        assert store is not None and store.crf == crf
        store.close()
        sizes[crf] = path.stat().st_size
        w.close()
    assert sizes[12] > sizes[36]


@pytest.mark.setting("WB_HOP_FRAMES")
@pytest.mark.parametrize("hop", [3, 7])
def test_hop_frames_is_how_far_hop_jumps(
    hop: int, project_dir: Path, make_window: MakeWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WB_HOP_FRAMES", str(hop))
    w = make_window(project_dir)
    w.actions_by_id["play.hop_fwd"].trigger()
    assert w.state.frame == hop
    w.actions_by_id["play.hop_back"].trigger()
    assert w.state.frame == 0


@pytest.mark.setting("WB_CONFIG_DIR")
def test_config_dir_holds_recent_projects_and_shortcut_overrides(
    project_dir: Path, make_window: MakeWindow, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "elsewhere"
    config.mkdir()
    (config / "shortcuts.json").write_text(json.dumps({"gate.pass": ["P"]}))
    monkeypatch.setenv("WB_CONFIG_DIR", str(config))
    w = make_window(project_dir)
    assert w.actions_by_id["gate.pass"].shortcut().toString() == "P"
    recent = json.loads((config / "recent.json").read_text())
    assert recent == [str(project_dir.resolve())]


@pytest.mark.setting("WB_SYNCHRONOUS")
@pytest.mark.parametrize("value", ["1", ""])
def test_synchronous_runs_background_work_inline(
    value: str, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WB_SYNCHRONOUS", value)
    bridge = Bridge()
    done: list[int] = []
    ran_on = bridge.submit("x", threading.get_ident, on_done=done.append).result(timeout=10)
    if value == "1":
        assert ran_on == threading.get_ident() and done == [ran_on]  # delivered before return
    else:
        assert ran_on != threading.get_ident()
        qtbot.waitUntil(lambda: done == [ran_on])  # delivered later, on the GUI thread
