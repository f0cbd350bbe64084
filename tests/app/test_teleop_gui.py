"""The teleop workspace driven by synthetic key events only: grasp the red brick and place it on
the blue one (the contract holds), record two demonstrations and re-record one (two stored),
export both formats and read them back with pyarrow and h5py. The keys are held for ticks the
way the scripted operator of tests/sim/teleop/operator.py decides, reading only what the
workspace shows (its status: where the gripper is, the scene graph)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import h5py
import numpy as np
import pyarrow.parquet as pq
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from app.gui._main_window import MainWindow
from app.gui.teleop import TeleopWorkspace
from sim.teleop import TELEOP_DELTA, SessionStatus, list_demonstrations
from storage import Project

pytestmark = pytest.mark.gui
K = Qt.Key
FAST_NEAR = 0.03  # m: the operator's switch to precision speed (operator.NEAR)
TOL = 0.004  # m (operator.TOL)
YAW_TOL = 0.03  # rad
TICK_WAIT_MS = 5000
# the operator decides ten times a second, as the scripted one does; the session steps faster
PER_DECISION = max(1, round(0.1 / TELEOP_DELTA))


class KeyOperator:
    """Holds keys on the view the way tests/sim/teleop/operator.py holds its "keys"."""

    def __init__(self, qtbot: QtBot, ws: TeleopWorkspace) -> None:
        self.qtbot, self.ws = qtbot, ws
        self.view: QWidget = ws.view.canvas
        self.held: set[Qt.Key] = set()
        self.shift = False

    @property
    def st(self) -> SessionStatus:
        assert self.ws.status is not None
        return self.ws.status

    def tick(self) -> None:
        """Wait for the session to run 0.1 s more with the keys as they are now."""
        t = self.st.tick
        self.qtbot.waitUntil(lambda: self.st.tick >= t + PER_DECISION, timeout=TICK_WAIT_MS)

    def _mods(self) -> Qt.KeyboardModifier:
        return Qt.KeyboardModifier.ShiftModifier if self.shift else Qt.KeyboardModifier.NoModifier

    def keys(self, want: set[Qt.Key], shift: bool = False) -> None:
        if shift != self.shift:
            self.shift = shift
            (QTest.keyPress if shift else QTest.keyRelease)(self.view, K.Key_Shift, self._mods())
        for k in self.held - want:
            QTest.keyRelease(self.view, k, self._mods())
        for k in want - self.held:
            QTest.keyPress(self.view, k, self._mods())
        self.held = set(want)

    def tap(self, key: Qt.Key) -> None:
        QTest.keyClick(self.view, key, self._mods())

    def move_to(self, goal: np.ndarray, limit: int = 150) -> None:
        # the keys move as seen through the front camera (at +x, looking back along -x): S
        # (toward the viewer) is +x, D (right in the picture) is +y, R (up) is +z
        pairs = ((K.Key_S, K.Key_W), (K.Key_D, K.Key_A), (K.Key_R, K.Key_F))
        for _ in range(limit):
            err = goal - np.array(self.st.ee)
            if float(np.max(np.abs(err))) <= TOL:
                self.keys(set())
                return
            want = {pos if e > 0 else neg for e, (pos, neg) in zip(err, pairs, strict=True)
                    if abs(e) > TOL}  # fmt: skip
            self.keys(want, shift=float(np.linalg.norm(err)) < FAST_NEAR)
            self.tick()
        raise AssertionError(f"did not reach {goal} (at {self.st.ee})")

    def turn_to(self, yaw: float, limit: int = 80) -> None:
        for _ in range(limit):
            err = math.remainder(yaw - self.st.yaw, math.pi / 2)  # a square jaw fits 4 ways
            if abs(err) <= YAW_TOL:
                self.keys(set())
                return
            self.keys({K.Key_Q if err > 0 else K.Key_E}, shift=abs(err) < 0.15)
            self.tick()
        raise AssertionError(f"did not turn to {yaw:.3f} (at {self.st.yaw:.3f})")

    def grip(self, closed: bool, ticks: int = 6) -> None:
        self.keys(set())
        if (self.st.grip >= 0.5) != closed:
            self.tap(K.Key_Space)
        for _ in range(ticks):
            self.tick()
        assert (self.st.grip >= 0.5) == closed

    def hold(self, ticks: int) -> None:
        self.keys(set())
        for _ in range(ticks):
            self.tick()

    def pick_and_place(self, obj: str, onto: str) -> None:
        """As operator.pick_and_place: from above, down, grip, up, over, down, let go, up."""
        nodes = self.st.graph.nodes
        src, dst = nodes[obj], nodes[onto]
        sp, above = np.array(src.pos), 0.08
        self.move_to(np.array([sp[0], sp[1], sp[2] + above]))
        self.turn_to(src.yaw)
        self.move_to(np.array([sp[0], sp[1], sp[2] + 0.005]))
        self.grip(True)
        self.move_to(np.array([sp[0], sp[1], sp[2] + above]))
        dp = np.array(self.st.graph.nodes[onto].pos)
        self.move_to(np.array([dp[0], dp[1], dp[2] + above]))
        self.turn_to(dst.yaw)
        self.move_to(np.array([dp[0], dp[1], dp[2] + dst.size[2] + src.size[2] + 0.008]))
        self.grip(False)
        self.move_to(np.array([dp[0], dp[1], dp[2] + above]))
        self.hold(3)


@pytest.fixture
def teleop_window(qtbot: QtBot, tmp_path: Path) -> MainWindow:
    from storage import load_settings

    Project.create(tmp_path / "p").close()
    w = MainWindow(load_settings())
    qtbot.addWidget(w)
    w.resize(1366, 768)
    w.show()
    qtbot.waitExposed(w)
    w.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w)
    assert w.open_project(tmp_path / "p")
    yield w
    w.close()


def _start(qtbot: QtBot, w: MainWindow) -> tuple[TeleopWorkspace, KeyOperator]:
    w.actions_by_id["view.teleop"].trigger()  # Ctrl+5's action
    ws = w.teleop
    assert w.center.currentWidget() is ws.center
    ws.choose("stack-two", "wb6")
    qtbot.waitUntil(lambda: ws.status is not None, timeout=30_000)
    ws.view.canvas.setFocus()
    qtbot.waitUntil(lambda: ws.view.canvas.hasFocus())
    return ws, KeyOperator(qtbot, ws)


def _wait_for(qtbot: QtBot, cond: Callable[[], bool]) -> None:
    qtbot.waitUntil(cond, timeout=TICK_WAIT_MS)


def test_keys_grasp_place_record_rerecord_and_export(
    qtbot: QtBot, teleop_window: MainWindow, tmp_path: Path
) -> None:
    w = teleop_window
    ws, op = _start(qtbot, w)
    root = tmp_path / "p"

    # demonstration 1: the whole task, by keys alone
    ws.record_button.click()
    _wait_for(qtbot, lambda: op.st.recording)
    assert ws.view.canvas.hasFocus()  # the button did not take the keys away
    assert not op.st.success
    op.pick_and_place("brick_red", "brick_blue")
    assert op.st.success, "the red brick is not on the blue one"
    assert "recording" in ws.line.text() and "task done" in ws.line.text()
    steps = op.st.steps
    op.tap(K.Key_Return)  # Next: stored at once, the next one starts from the reset
    _wait_for(qtbot, lambda: len(op.st.stored) == 1 and op.st.steps < 3 * PER_DECISION)
    assert not op.st.success  # reset: the bricks are back
    with Project.open(root) as p:
        (first,) = list_demonstrations(p, "stack-two")
        # the steps run while Enter travelled are in it too
        assert first.id == op.st.stored[0] and first.ticks >= steps - 1

    # demonstration 2: a few ticks, re-recorded (Backspace), then a short one kept (Esc)
    op.keys({K.Key_W})
    for _ in range(4):
        op.tick()
    op.keys(set())
    op.tap(K.Key_Backspace)
    _wait_for(qtbot, lambda: op.st.recording and op.st.steps <= 2 * PER_DECISION)
    op.keys({K.Key_A, K.Key_R})
    for _ in range(5):
        op.tick()
    op.keys(set())
    op.tap(K.Key_Escape)
    _wait_for(qtbot, lambda: not op.st.recording and len(op.st.stored) == 2)
    assert "demonstrations: 2" in ws.line.text()
    with Project.open(root) as p:
        assert len(list_demonstrations(p, "stack-two")) == 2

    # export both formats through the workspace (off the GUI thread), read them back
    with qtbot.waitSignal(ws.exported, timeout=120_000) as got:
        ws.export("lerobot", tmp_path / "ds")
    ds, count = got.args[0].path, got.args[0].demonstrations
    assert count == 2
    # it says where it wrote, and how much, where a person looks (the status line is rewritten)
    said = f"exported 2 demonstration(s) as lerobot to {ds}"
    assert said in ws.export_line.text() and said in w.statusBar().currentMessage()
    assert "2 camera video(s) (MP4)" in ws.export_line.text()
    for key in ("front", "wrist"):  # what the label promised: an MP4 per camera
        assert (ds / f"videos/observation.images.{key}/chunk-000/file-000.mp4").is_file()
    with qtbot.waitSignal(ws.exported, timeout=60_000) as got:
        ws.export("robomimic", tmp_path / "demos.hdf5")
    h5 = got.args[0].path
    with Project.open(root) as p:
        lengths = [p.episodes.get(e).ticks + 1 for e in op.st.stored]
    assert lengths[0] >= steps and 5 * PER_DECISION <= lengths[1] <= 8 * PER_DECISION
    total = sum(lengths)

    info = json.loads((ds / "meta/info.json").read_text())
    fps = round(1 / TELEOP_DELTA)
    assert info["total_episodes"] == 2 and info["total_frames"] == total and info["fps"] == fps
    assert info["video_path"] is not None
    data = pq.read_table(ds / "data/chunk-000/file-000.parquet").to_pydict()
    assert data["episode_index"] == [0] * lengths[0] + [1] * lengths[1]
    assert data["frame_index"] == [*range(lengths[0]), *range(lengths[1])]
    np.testing.assert_allclose(
        data["timestamp"], np.concatenate([np.arange(n) / fps for n in lengths]), atol=1e-6
    )
    assert [i for i, d in enumerate(data["next.done"]) if d] == [lengths[0] - 1, total - 1]
    assert np.asarray(data["observation.state"]).shape == (total, 7)  # six joints + gripper
    assert np.asarray(data["action"]).shape == (total, 7)
    eps = pq.read_table(ds / "meta/episodes/chunk-000/file-000.parquet").to_pydict()
    assert eps["length"] == lengths
    assert eps["dataset_from_index"] == [0, lengths[0]] and eps["dataset_to_index"] == [
        lengths[0],
        total,
    ]

    with h5py.File(h5, "r") as f:
        assert f["data"].attrs["total"] == total
        groups = sorted(f["data"], key=lambda g: int(g.split("_")[1]))
        assert len(groups) == 2
        for name, n in zip(groups, lengths, strict=True):
            g = f["data"][name]
            assert g.attrs["num_samples"] == n
            assert g["actions"].shape == (n, 7) and g["obs/joint_pos"].shape == (n, 6)
            assert g["dones"][()].tolist() == [0] * (n - 1) + [1]
            ts = g["timestamps"][()]
            assert ts.shape == (n,) and bool(np.all(np.diff(ts) > 0))
        first_group = f["data"][groups[0]]
        assert first_group["rewards"][()][-1] == 1.0  # the first one stacked the bricks
        assert [n.decode() for n in f["mask/success"][()]] == [groups[0]]


def test_teleop_keys_are_scoped_to_the_view(qtbot: QtBot, teleop_window: MainWindow) -> None:
    w = teleop_window
    ws, op = _start(qtbot, w)
    quits: list[bool] = []
    w.actions_by_id["app.quit"].triggered.connect(lambda: quits.append(True))
    # Ctrl held (clutch released) + Q (yaw): taken by the view, never the window's Ctrl+Q
    ee = op.st.ee
    QTest.keyPress(op.view, K.Key_Control, Qt.KeyboardModifier.NoModifier)
    QTest.keyPress(op.view, K.Key_Q, Qt.KeyboardModifier.ControlModifier)
    QTest.keyPress(op.view, K.Key_W, Qt.KeyboardModifier.ControlModifier)
    for _ in range(4):
        op.tick()
    assert not op.st.clutch and "clutch released" in ws.line.text()
    assert not quits and w.isVisible()
    assert float(np.max(np.abs(np.array(op.st.ee) - ee))) < 2e-3  # the clutch held it
    QTest.keyRelease(op.view, K.Key_Control, Qt.KeyboardModifier.ControlModifier)
    op.tick()
    op.tick()
    assert op.st.clutch and op.st.ee[0] < ee[0] - 0.01  # W held: engaged, away from the camera
    # focus leaves the view: every key is let go, and W typed elsewhere drives nothing
    ws.scenario.setFocus()
    qtbot.waitUntil(lambda: not ws.view.canvas.hasFocus())
    op.tick()
    op.tick()
    x = op.st.ee[0]
    QTest.keyPress(ws.scenario, K.Key_W)
    for _ in range(3):
        op.tick()
    QTest.keyRelease(ws.scenario, K.Key_W)
    assert abs(op.st.ee[0] - x) < 2e-3
    # the window's own shortcuts still work outside the view: Ctrl+4 is the episode workspace
    QTest.keyClick(ws.scenario, K.Key_4, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: w.workspace == "episode")
