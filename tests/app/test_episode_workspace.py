"""The episode workspace in a real X server: open a recorded episode from the browser, click a
timeline element and every view moves to its tick; step, jump to the next item, filter."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from app.gui._main_window import MainWindow
from sim.episode import open_scenario, run_episode
from sim.interact import run_interactive
from sim.users import PROFILES
from storage import Project

pytestmark = pytest.mark.gui


@pytest.fixture
def episodes_dir(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "eps"
    with Project.create(root) as p:
        ep = run_interactive(bound=open_scenario("cheeseburger"), persona=PROFILES["expert"],
                             project=p, timing="measured",
                             assistant_options={"latency_s": 0.8})  # fmt: skip
        run_episode(open_scenario("stack-two"), mode="symbolic", project=p)
        assert ep.episode_id is not None
        return root, ep.episode_id


def test_click_on_the_timeline_moves_every_view(
    make_window: Callable[[Path], MainWindow], episodes_dir: tuple[Path, str], qtbot: QtBot
) -> None:
    root, eid = episodes_dir
    w = make_window(root)
    QTest.keyClick(w, Qt.Key.Key_4, Qt.KeyboardModifier.ControlModifier)
    assert w.actions_by_id["view.episode"].isChecked() and w.docks["Episodes"].isVisible()
    ws = w.episode
    browser = ws.browser
    assert sorted(browser.ids) == sorted(e.id for e in Project.open(root).episodes.list())
    # open it the way a user does: double-click its row
    row = next(r for r in range(browser.table.rowCount())
               if browser.table.item(r, 0).text() == eid[:8])  # fmt: skip
    cell = browser.table.visualItemRect(browser.table.item(row, 1)).center()
    QTest.mouseClick(browser.table.viewport(), Qt.MouseButton.LeftButton, pos=cell)
    QTest.mouseDClick(browser.table.viewport(), Qt.MouseButton.LeftButton, pos=cell)
    qtbot.waitUntil(
        lambda: ws.timeline is not None and ws.timeline.episode.id == eid, timeout=30_000
    )
    assert "cheeseburger" in ws.title.text() and ws.tick == 0
    tl = ws.timeline
    assert tl is not None
    # click the assistant's first flag on the timeline, where it is drawn
    flag = next(i for i in tl.items if i.kind == "flag")
    view = ws.view
    vb = view.getPlotItem().vb
    scene_pt = vb.mapViewToScene(QPointF(flag.start, view.row_y("assistant")))
    widget_pt = view.mapFromScene(scene_pt)
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(widget_pt.x(),
                     widget_pt.y()))  # fmt: skip
    qtbot.waitUntil(lambda: ws.tick == flag.start, timeout=30_000)
    assert ws.slider.value() == flag.start
    assert view.playhead.value() == flag.start
    assert ws.inspector.tick == flag.start
    assert f"tick {flag.start}" in ws.tick_label.text()
    cur = ws.transcript.currentRow()
    assert cur >= 0 and ws.transcript.turns[cur].tick <= flag.start
    assert ws.transcript.turns[cur].tick == max(
        t.tick for t in ws.transcript.turns if t.tick <= flag.start
    )
    graph = tl.graphs.graph_at(flag.start)
    held = graph.held()
    scene_row = ws.inspector.find_row("scene graph")
    assert scene_row is not None and f"holding {held or '—'}" in scene_row.text(1)
    # what each side was shown at the last query before the flag: the boundary, as it was
    shown = ws.saw_assistant.shown
    assert shown is not None and shown.party == "assistant" and shown.tick <= flag.start
    assert ws.saw_assistant.topLevelItem(0).text(0) == f"sent at t{shown.tick}"
    sent = ws.saw_assistant.topLevelItem(1)
    fields = {sent.child(i).text(0) for i in range(sent.childCount())}
    assert "frames" in fields and "queue" not in fields and "persona" not in fields
    user_sent = ws.saw_user.topLevelItem(1)
    user_fields = {user_sent.child(i).text(0) for i in range(user_sent.childCount())}
    assert {"queue", "persona"} <= user_fields
    # a transcript row seeks back; step buttons and "next item" move one tick / one item
    later = ws.transcript.item(cur + 1)
    ws.transcript.itemClicked.emit(later)
    assert ws.tick == ws.transcript.turns[cur + 1].tick
    before = ws.tick
    ws.seek(before + 1)
    assert ws.tick == before + 1
    ws.next_item()
    assert ws.tick == min(i.start for i in tl.items if i.start > before + 1)
    here = ws.tick
    ws.next_item("events")  # the "next event" button
    assert ws.tick == min(i.start for i in tl.on("events") if i.start > here)
    # filter the browser by text
    browser.filter.setText("stack-two")
    shown = [r for r in range(browser.table.rowCount()) if not browser.table.isRowHidden(r)]
    assert len(shown) == 1 and browser.table.item(shown[0], 1).text() == "stack-two"
    QTest.keyClick(w, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    assert not w.docks["Episodes"].isVisible() and w.center.currentIndex() == 0


def test_mujoco_view_follows_the_playhead(
    make_window: Callable[[Path], MainWindow], tmp_path: Path, qtbot: QtBot
) -> None:
    import numpy as np

    root = tmp_path / "phys"
    with Project.create(root) as p:
        ep = run_episode(open_scenario("stack-two"), mode="physics", project=p)
        assert ep.episode_id is not None
        eid, ticks = ep.episode_id, p.episodes.get(ep.episode_id).ticks
    w = make_window(root)
    w.set_workspace("episode")
    ws = w.episode
    ws.open(eid)
    qtbot.waitUntil(lambda: ws.timeline is not None, timeout=30_000)
    view = ws.world
    qtbot.waitUntil(lambda: view.frame is not None and view.frame.tick == 0, timeout=30_000)
    cameras = [view.camera.itemText(i) for i in range(view.camera.count())]
    assert len(cameras) >= 2 and "front" in cameras
    first = view.frame.image.copy()
    assert first.shape == (480, 640, 3) and first.std() > 5  # a scene, not a blank
    target = ticks // 2
    ws.seek(target)
    qtbot.waitUntil(lambda: view.frame is not None and view.frame.tick == target, timeout=30_000)
    assert not np.array_equal(view.frame.image, first)  # the arm has moved
    assert f"tick {target}" in view.status.text()
    # another camera: the same tick from elsewhere
    other = next(view.camera.itemText(i) for i in range(view.camera.count())
                 if view.camera.itemText(i) != view.camera.currentText())  # fmt: skip
    view.camera.setCurrentText(other)
    qtbot.waitUntil(lambda: view.frame is not None and view.frame.camera == other, timeout=30_000)
    assert view.frame.tick == target
    # the 3D scene draws the arm's path up to the playhead and the contacts there
    tl = ws.timeline
    assert tl is not None and len(tl.arm_path(target)) == target  # ticks 1…target
    ws.tabs.setCurrentWidget(ws.scene3d)
    qtbot.waitUntil(lambda: ws.scene3d.shown_path == target, timeout=30_000)
    assert ws.scene3d.shown_contacts == len(tl.contacts_at(target)) > 0
    ws.tabs.setCurrentWidget(ws.inspector)
    # a click on the picture selects the object under it, and the inspector shows its row
    canvas = view.canvas
    r = canvas.picture_rect()
    for fx, fy in ((0.5, 0.6), (0.45, 0.55), (0.55, 0.65), (0.5, 0.7), (0.4, 0.6)):
        view.status.setText("")
        at = QPoint(r.x() + int(fx * r.width()), r.y() + int(fy * r.height()))
        QTest.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=at)
        qtbot.waitUntil(lambda: "select" in view.status.text(), timeout=10_000)
        if view.selected is not None:
            break
    assert view.selected is not None, view.status.text()
    current = ws.inspector.currentItem()
    assert current is not None and current.text(0) == view.selected
    # drag on the picture: the free camera orbits; the wheel zooms; labels on
    before = view.frame.image.copy()
    QTest.mousePress(canvas, Qt.MouseButton.LeftButton, pos=QPoint(100, 100))
    QTest.mouseMove(canvas, QPoint(160, 120))
    QTest.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=QPoint(160, 120))
    qtbot.waitUntil(lambda: view.frame is not None and view.frame.camera.startswith("free"),
                    timeout=30_000)  # fmt: skip
    assert view.camera.currentText().startswith("free") and view.free.azimuth != 135.0
    orbited = view.frame.image.copy()
    assert not np.array_equal(orbited, before)
    view.labels.setChecked(True)
    qtbot.waitUntil(lambda: view.frame is not None
                    and not np.array_equal(view.frame.image, orbited), timeout=30_000)  # fmt: skip
    # a symbolic episode says it has nothing to render
    with Project.open(root) as p:
        sym = run_episode(open_scenario("stack-two"), mode="symbolic", project=p).episode_id
    assert sym is not None
    ws.open(sym)
    qtbot.waitUntil(
        lambda: ws.timeline is not None and ws.timeline.episode.id == sym, timeout=30_000
    )
    assert "no physics" in view.status.text() and view.frames is None
    assert not view.isVisible()


def test_live_episode_with_the_user_seat(
    make_window: Callable[[Path], MainWindow], tmp_path: Path, qtbot: QtBot
) -> None:
    root = tmp_path / "live"
    Project.create(root).close()
    w = make_window(root)
    w.set_workspace("episode")
    ws, panel = w.episode, w.episode.live
    assert not panel.play_button.isVisible() and not panel.say.isVisible()
    panel.scenario.setCurrentText("cook-patty")
    panel.seat.setChecked(True)
    QTest.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    # built off the GUI thread
    qtbot.waitUntil(lambda: panel.play_button.isEnabled(), timeout=30_000)
    assert panel.say.isEnabled() and panel.human is not None
    QTest.mouseClick(panel.step_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.live.tick == 1, timeout=30_000)
    QTest.keyClicks(panel.say, "What should I start with?")
    QTest.keyClick(panel.say, Qt.Key.Key_Return)
    assert panel.say.text() == ""
    panel.live.step(30)  # the first rows reach the project after 25 ticks
    qtbot.waitUntil(lambda: panel.live.tick == 31, timeout=30_000)
    qtbot.waitUntil(lambda: ws.timeline is not None and ws.tick == 31, timeout=10_000)
    said = [t.text for t in ws.transcript.turns]
    assert "What should I start with?" in said
    answer = next(t for t in ws.transcript.turns if t.speaker == "assistant" and t.tick >= 1)
    assert "pick up the patty" in answer.text.lower()
    QTest.keyClicks(panel.do, "pick up the patty")
    QTest.keyClick(panel.do, Qt.Key.Key_Return)
    QTest.mouseClick(panel.play_button, Qt.MouseButton.LeftButton)  # play at 1× real time
    qtbot.waitUntil(lambda: panel.live.tick >= 45, timeout=10_000)
    assert panel.live.playing and "playing" in panel.status.text()
    qtbot.waitUntil(lambda: "RTF" in panel.status.text(), timeout=5_000)
    QTest.mouseClick(panel.play_button, Qt.MouseButton.LeftButton)  # pause
    qtbot.waitUntil(lambda: not panel.live.playing, timeout=30_000)
    assert any(a.action.describe() == "pick up the patty" for a in panel.live.runner.actions)
    target = panel.live.tick + 7
    panel.run_to.setValue(target)
    QTest.mouseClick(panel.run_to_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.live.tick == target, timeout=30_000)
    assert not panel.live.playing
    eid = panel.episode_id
    panel.stop()
    with Project.open(root) as p:
        assert eid is not None and p.episodes.get(eid).status.value == "cancelled"


def test_fork_at_the_playhead_take_the_seat_and_compare(
    make_window: Callable[[Path], MainWindow], tmp_path: Path, qtbot: QtBot
) -> None:
    root = tmp_path / "fork"
    with Project.create(root) as p:
        parent = run_interactive(bound=open_scenario("cook-patty"), persona=PROFILES["novice"],
                                 project=p).episode_id  # fmt: skip
    assert parent is not None
    w = make_window(root)
    w.set_workspace("episode")
    ws, panel = w.episode, w.episode.live
    ws.open(parent)
    qtbot.waitUntil(lambda: ws.timeline is not None and ws.fork_button.isEnabled(), timeout=30_000)
    ws.seek(120)
    panel.seat.setChecked(True)
    QTest.mouseClick(ws.fork_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.human is not None, timeout=20_000)  # the seat is ours at 120
    assert panel.live is not None and panel.live.tick == 120
    assert "user's seat" in panel.status.text()
    QTest.keyClicks(panel.do, "turn off the burner")
    QTest.keyClick(panel.do, Qt.Key.Key_Return)
    QTest.mouseClick(panel.done_button, Qt.MouseButton.LeftButton)
    panel.speed.setValue(0)
    QTest.mouseClick(panel.play_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.live is not None and panel.live.finished, timeout=30_000)
    fork = panel.episode_id
    assert fork is not None
    panel.stop()
    ws.open(fork)
    qtbot.waitUntil(lambda: "fork of" in ws.title.text(), timeout=30_000)
    tl = ws.timeline
    assert tl is not None and tl.episode.id == fork
    assert tl.parent is not None and tl.diverges_at is not None and tl.diverges_at >= 120
    assert f"fork of {parent[:8]} at tick 120" in ws.title.text()
    assert ws.parent_view.isVisible()
    ws.seek(tl.diverges_at)  # one playhead for both branches
    assert ws.parent_view.playhead.value() == ws.view.playhead.value() == tl.diverges_at


def test_open_a_bundle_from_another_harness_and_see_belief_against_world(
    make_window: Callable[[Path], MainWindow], tmp_path: Path, qtbot: QtBot
) -> None:
    from tests.sim.review.bundle_harness import FAIL_TICK, write_bundle

    root = tmp_path / "imp"
    Project.create(root).close()
    bundle = write_bundle(tmp_path / "their-run")
    w = make_window(root)
    w.set_workspace("episode")
    ws = w.episode
    assert ws.browser.import_button.isVisible()
    ws.import_bundle(bundle)
    qtbot.waitUntil(lambda: ws.timeline is not None and ws.timeline.episode.agent
                    == "their-policy-v3", timeout=30_000)  # fmt: skip
    assert len(ws.browser.ids) == 1
    # click the rejection on the timeline: every view goes to the failing tick
    rejection = ws.timeline.on("rejections")[0]
    vb = ws.view.getPlotItem().vb
    pt = ws.view.mapFromScene(vb.mapViewToScene(QPointF(rejection.start,
                                                        ws.view.row_y("rejections"))))  # fmt: skip
    QTest.mouseClick(ws.view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(pt.x(), pt.y()))
    qtbot.waitUntil(lambda: ws.tick == FAIL_TICK, timeout=30_000)
    top = ws.inspector.find_row("world vs belief")
    assert top is not None and "1 mismatch" in top.text(1)
    row = ws.inspector.find_row("drawer · open")
    assert row is not None and row.text(1) == "world: 0   belief: 1"
    assert not ws.world.isVisible()  # nothing to render: the view gives its room away
    # the 3D scene: the drawer where the world has it, and its belief as a red ghost
    assert ws.scene3d.canvas is None  # no GL surface until the tab is opened
    ws.tabs.setCurrentWidget(ws.scene3d)
    qtbot.waitUntil(lambda: ws.scene3d.canvas is not None, timeout=30_000)
    assert ws.scene3d.shown_ghosts == ["drawer"]
    image = ws.scene3d.canvas.render()
    red = (image[..., 0] > 180) & (image[..., 1] < 140) & (image[..., 2] < 140)
    assert red.sum() > 50  # the ghost is drawn
    ws.tabs.setCurrentWidget(ws.inspector)
    ws.seek(FAIL_TICK - 1)  # before the agent said what it believed: nothing to compare
    assert ws.inspector.find_row("world vs belief") is None


def test_the_timeline_spans_each_episode_it_shows(
    make_window: Callable[[Path], MainWindow], episodes_dir: tuple[Path, str], qtbot: QtBot
) -> None:
    root, long_id = episodes_dir
    with Project.open(root) as p:
        short_id = next(e.id for e in p.episodes.list() if e.scenario == "stack-two")
        long_ticks = p.episodes.get(long_id).ticks
    w = make_window(root)
    w.set_workspace("episode")
    ws = w.episode
    for eid in (short_id, long_id):  # a short episode first must not clamp the long one
        ws.open(eid)
        qtbot.waitUntil(
            lambda e=eid: ws.timeline is not None and ws.timeline.episode.id == e, timeout=30_000
        )
    (x0, x1), _ = ws.view.getPlotItem().vb.viewRange()
    assert x0 <= 0 and x1 >= long_ticks


def test_live_physics_shows_the_running_world(
    make_window: Callable[[Path], MainWindow], tmp_path: Path, qtbot: QtBot
) -> None:
    root = tmp_path / "livephys"
    Project.create(root).close()
    w = make_window(root)
    w.set_workspace("episode")
    ws, panel = w.episode, w.episode.live
    panel.scenario.setCurrentText("stack-two")
    panel.mode.setCurrentText("physics")
    QTest.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.play_button.isEnabled(), timeout=30_000)
    assert panel.frames is not None
    panel.speed.setValue(2.0)  # paced: the frames must follow a world that is still moving
    QTest.mouseClick(panel.play_button, Qt.MouseButton.LeftButton)
    view = ws.world
    qtbot.waitUntil(lambda: view.frame is not None and view.frame.tick >= 10, timeout=30_000)
    first = view.frame
    qtbot.waitUntil(lambda: view.frame is not None and view.frame.tick > first.tick + 10,
                    timeout=30_000)  # fmt: skip
    assert view.isVisible() and "live" in view.status.text()
    panel.stop()
    assert panel.frames is None and view.frames is None


def test_compare_any_two_episodes_on_one_playhead(
    make_window: Callable[[Path], MainWindow], tmp_path: Path, qtbot: QtBot
) -> None:
    root = tmp_path / "cmp"
    with Project.create(root) as p:
        a = run_interactive(bound=open_scenario("cook-patty"), persona=PROFILES["novice"],
                            project=p).episode_id  # fmt: skip
        b = run_interactive(bound=open_scenario("cook-patty"), persona=PROFILES["expert"],
                            project=p).episode_id  # fmt: skip
        ha, hb = p.episodes.hashes(str(a)), p.episodes.hashes(str(b))
    assert a is not None and b is not None
    first = next(t for t, (x, y) in enumerate(zip(ha, hb, strict=False)) if x != y)
    w = make_window(root)
    w.set_workspace("episode")
    ws = w.episode
    ws.open(a)
    qtbot.waitUntil(lambda: ws.timeline is not None and ws.timeline.episode.id == a, timeout=30_000)
    browser = ws.browser
    row = next(r for r in range(browser.table.rowCount())
               if browser.table.item(r, 0).text() == b[:8])  # fmt: skip
    browser.table.setCurrentCell(row, 0)
    QTest.mouseClick(browser.compare_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: ws.compared is not None, timeout=30_000)
    assert ws.compared == (b, first)  # the same layout and seed: they part when behaviour does
    assert ws.parent_view.isVisible()
    ws.seek(first)
    assert ws.parent_view.playhead.value() == ws.view.playhead.value() == first


def test_a_bundles_video_plays_at_the_playhead(
    make_window: Callable[[Path], MainWindow], tmp_path: Path, qtbot: QtBot
) -> None:
    import json
    import subprocess

    import numpy as np

    from sim.review import import_bundle
    from storage.media import FrameSource, index_video
    from tests.sim.review.bundle_harness import write_bundle

    bundle = write_bundle(tmp_path / "b")
    (bundle / "videos").mkdir()
    clip = bundle / "videos" / "head.mp4"
    subprocess.run(["ffmpeg", "-loglevel", "error", "-f", "lavfi", "-i",
                    "testsrc=size=160x120:rate=10", "-t", "3", "-pix_fmt", "yuv420p", str(clip)],
                   check=True)  # fmt: skip
    meta = json.loads((bundle / "episode.json").read_text())
    meta["videos"] = [{"file": "videos/head.mp4", "camera": "head", "offset_s": 1.0}]
    (bundle / "episode.json").write_text(json.dumps(meta))
    root = tmp_path / "p"
    with Project.create(root) as p:
        eid = import_bundle(p, bundle)
    w = make_window(root)
    w.set_workspace("episode")
    ws = w.episode
    ws.open(eid)
    qtbot.waitUntil(
        lambda: ws.timeline is not None and ws.timeline.episode.id == eid, timeout=30_000
    )
    (video,) = ws.timeline.on("video")
    assert (video.start, video.end) == (10, 40)  # 1 s in, 3 s long, at 0.1 s a tick
    view = ws.world
    # the videos are opened off the GUI thread
    qtbot.waitUntil(lambda: view.camera.count() > 0, timeout=30_000)
    assert view.isVisible() and view.camera.currentText() == "head"
    ws.seek(25)  # 2.5 s of episode time is 1.5 s into the video: its frame 15
    qtbot.waitUntil(lambda: view.frame is not None and view.frame.tick == 25, timeout=20_000)
    expect = FrameSource(clip, index_video(clip), store_path=None).frame(15)[..., :3]
    assert np.array_equal(view.frame.image, expect)


def _mouse(widget: QWidget, kind: QEvent.Type, pos: QPointF, buttons: Qt.MouseButton,
           mods: Qt.KeyboardModifier) -> None:  # fmt: skip
    button = Qt.MouseButton.NoButton if kind == QEvent.Type.MouseMove else Qt.MouseButton.LeftButton
    held = Qt.MouseButton.NoButton if kind == QEvent.Type.MouseButtonRelease else buttons
    ev = QMouseEvent(kind, pos, widget.mapToGlobal(pos), button, held, mods)
    QApplication.sendEvent(widget, ev)


def test_ctrl_drag_pushes_a_body_in_a_live_physics_run(
    make_window: Callable[[Path], MainWindow], tmp_path: Path, qtbot: QtBot
) -> None:
    import numpy as np

    from sim.episode import make_world

    bound = open_scenario("stack-two")
    probe: Any = make_world(bound, "physics")
    probe.reset(bound.scenario.seed)
    probe.render("top", 640, 480)
    grid = [
        (float(x), float(y)) for y in np.linspace(0.1, 0.9, 17) for x in np.linspace(0.1, 0.9, 17)
    ]
    spot = next(xy for xy in grid if probe.grab("top", *xy) is not None)
    probe.close()
    root = tmp_path / "push"
    Project.create(root).close()
    w = make_window(root)
    w.set_workspace("episode")
    ws, panel, view = w.episode, w.episode.live, w.episode.world
    panel.scenario.setCurrentText("stack-two")
    panel.mode.setCurrentText("physics")
    QTest.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.play_button.isEnabled(), timeout=30_000)
    panel.live.step(5)
    qtbot.waitUntil(lambda: view.camera.count() > 0, timeout=30_000)
    view.camera.setCurrentText("top")
    qtbot.waitUntil(lambda: view.frame is not None and view.frame.camera == "top", timeout=30_000)
    r = view.canvas.picture_rect()
    at = QPointF(r.x() + spot[0] * r.width(), r.y() + (1 - spot[1]) * r.height())
    ctrl, left = Qt.KeyboardModifier.ControlModifier, Qt.MouseButton.LeftButton
    _mouse(view.canvas, QEvent.Type.MouseButtonPress, at, left, ctrl)
    qtbot.waitUntil(lambda: "pushing" in view.status.text(), timeout=10_000)
    _mouse(view.canvas, QEvent.Type.MouseMove, at + QPointF(0, -40), left,
           ctrl | Qt.KeyboardModifier.ShiftModifier)  # fmt: skip
    start = panel.live.tick
    panel.live.step(4)
    qtbot.waitUntil(lambda: panel.live.tick == start + 4, timeout=30_000)
    _mouse(view.canvas, QEvent.Type.MouseButtonRelease, at + QPointF(0, -40), left, ctrl)
    qtbot.waitUntil(lambda: view.status.text() == "let go", timeout=10_000)
    eid = panel.live.episode_id
    with Project.open(root) as p:
        (span,) = p.episodes.get(eid).config["perturbed"]
    assert span[0] == start and span[1] == start + 4
    panel.stop()
    assert ws.live is panel


def test_export_the_open_episode_to_rerun(
    make_window: Callable[[Path], MainWindow], episodes_dir: tuple[Path, str], qtbot: QtBot,
    tmp_path: Path,
) -> None:  # fmt: skip
    from rerun.chunk import RrdReader

    root, eid = episodes_dir
    w = make_window(root)
    w.set_workspace("episode")
    ws = w.episode
    assert not ws.rerun_button.isEnabled()  # nothing open yet
    ws.open(eid)
    qtbot.waitUntil(lambda: ws.timeline is not None and ws.rerun_button.isEnabled(), timeout=30_000)
    out = tmp_path / "ep.rrd"
    ws.export_rerun(out)
    qtbot.waitUntil(lambda: ws.title.text().startswith("wrote"), timeout=60_000)
    assert out.is_file() and str(out) in ws.title.text()
    (rec,) = RrdReader(out).recordings()
    assert rec.application_id == "rollout-workbench"
