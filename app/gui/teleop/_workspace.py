"""The teleop workspace: drive the arm of a physics scenario by hand and record demonstrations.

The control loop runs on its own thread (``sim.teleop.TeleopSession``, paced to the world's
tick); the MuJoCo view renders the snapshots it publishes on a frame thread of its own
(``sim.review.LiveFrames``), so the GUI thread only turns key events into commands and paints.
Snapshots come only when the world moved: where nothing moves, nothing is rendered.

Every device gives screen-frame commands (right, forward, up as seen in the picture); the
workspace tells the session which camera the view shows (a scene camera, or the free camera
after a drag), and the session turns them into world axes through it.

Record starts a demonstration; Next stores it at once and starts the next from the reset;
Re-record discards the one in progress; Stop stores it and ends. Export… (``_export``) writes
the scenario's demonstrations as LeRobot (parquet + an MP4 per camera) or robomimic, and says
where it wrote.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.gui.common import Bridge
from app.gui.episode import WorldView
from app.gui.teleop._export import ExportLine, ask_export, export_job
from app.gui.teleop._keys import KEY_HELP, KeyboardDevice
from sim.episode import ARMS, make_world, open_scenario, resolve_arm
from sim.review import LiveFrames
from sim.scenario import shipped
from sim.teleop import Command, SessionStatus, TeleopSession, list_demonstrations
from storage import Project

DEFAULT_SCENARIO = "stack-two"
KEYBOARD = "keyboard"
PAD_POLL_MS = 50  # twice per control step: a stick's change reaches the next tick


class _DeviceBox(QComboBox):
    """The device picker: it lists what is attached at the moment it is opened, so a pad
    plugged in after the workspace was built is offered without a restart."""

    def __init__(self, workspace: TeleopWorkspace) -> None:
        super().__init__()
        self._workspace = workspace

    def showPopup(self) -> None:
        self._workspace.refresh_devices()
        super().showPopup()


class TeleopWorkspace(QObject):
    """The center of the window while teleoperating (no docks)."""

    status_changed = Signal(object)  # a SessionStatus, from the session thread (queued)
    stored = Signal(str)  # a demonstration's episode id, stored
    session_failed = Signal(object)
    session_ready = Signal()
    exported = Signal(object)  # an Exported: where, how many demonstrations, frames, videos
    export_failed = Signal(object)

    def __init__(self, bridge: Bridge) -> None:
        super().__init__()
        self.bridge = bridge
        self.project: Project | None = None
        self.session: TeleopSession | None = None
        self.frames: LiveFrames | None = None
        self.status: SessionStatus | None = None  # the newest, on the GUI thread
        self.before = 0  # demonstrations of the scenario stored before this session
        self.active = False
        self.frames_shown = 0  # frames the view received (none while nothing moves)
        self.scenario = QComboBox()
        self.scenario.addItems(sorted(shipped()))
        self.scenario.setCurrentText(DEFAULT_SCENARIO)
        self.scenario.setToolTip("The physics scenario to demonstrate")
        self.arm = QComboBox()
        self.arm.setToolTip("A shipped arm or one of the project's arm profiles")
        self.device = _DeviceBox(self)  # lists the devices attached now each time it opens
        self.device.setToolTip(
            "What drives the arm: the keyboard (while the view has focus), a gamepad (SDL) or a "
            "SpaceMouse (hidapi); a device that is not there is not offered"
        )
        # the hand device in use, a Gamepad or a SpaceMouse (both poll() -> Command, close()),
        # polled on this thread
        self.pad: Any = None
        self._pad_grip: float | None = None  # the device's last toggle, kept between its edges
        self.pad_timer = QTimer(self)
        self.pad_timer.setInterval(PAD_POLL_MS)
        self.pad_timer.timeout.connect(self._poll_pad)
        self.refresh_devices()
        self.device.activated.connect(lambda _i: self._device_changed())
        for box in (self.scenario, self.arm):
            box.activated.connect(lambda _i: self.start())
        self.view = WorldView()
        # a hand on the keys wants the frame soon: under software GL shadows cost most of it
        # and multisampling half the rest (bench/teleop)
        self.view.shadows.setChecked(False)
        self.view.smooth.setChecked(False)
        self.view.frame_arrived.connect(self._frame_shown)
        # the camera looked through sets the axes of every device's "right", "forward", "up";
        # connected after the view's own slots, so the view has already taken the change
        self.view.camera.currentTextChanged.connect(lambda _c: self._view_changed())
        self.view.canvas.dragged.connect(lambda *_a: self._view_changed())  # the free camera
        self.view.frames_ready.connect(self._view_changed)
        canvas = self.view.canvas
        canvas.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # click it to drive with the keys
        canvas.setToolTip(KEY_HELP)
        self.keys = KeyboardDevice(self._command, self._decide)
        self.keys.attach(canvas)
        self.record_button = QPushButton("● Record")
        self.next_button = QPushButton("Next ⏎")
        self.rerecord_button = QPushButton("Re-record ⌫")
        self.stop_button = QPushButton("Stop Esc")
        self.export_button = QPushButton("Export…")
        tips = (
            (self.record_button, "Start a demonstration from the scenario's reset"),
            (self.next_button, "Store this demonstration now and start the next (Enter)"),
            (self.rerecord_button, "Discard this demonstration and start it again (Backspace)"),
            (self.stop_button, "Store this demonstration and stop recording (Esc)"),
            (self.export_button, "Export this scenario's demonstrations: LeRobot or robomimic"),
        )
        for button, tip in tips:
            button.setToolTip(tip)
            # a click must not take the focus from the view: the keys keep driving the arm
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.record_button.clicked.connect(lambda: self._decide("record"))
        self.next_button.clicked.connect(lambda: self._decide("next"))
        self.rerecord_button.clicked.connect(lambda: self._decide("rerecord"))
        self.stop_button.clicked.connect(lambda: self._decide("stop"))
        self.export_button.clicked.connect(self.export_dialog)
        # what the last export wrote (the status line is rewritten by every status)
        self.export_line = ExportLine()
        self.line = QLabel("Open a project to teleoperate.")
        self.line.setToolTip(KEY_HELP)
        self.help = QLabel(KEY_HELP)
        self.help.setWordWrap(True)
        self.status_changed.connect(self._show_status)
        self.stored.connect(self._stored)
        self.session_failed.connect(self._failed)
        self.session_ready.connect(self._ready)
        self.exported.connect(self.export_line.exported)
        self.export_failed.connect(self.export_line.failed)

        self.center = QWidget()
        lay = QVBoxLayout(self.center)
        lay.setContentsMargins(4, 4, 4, 4)
        top = QHBoxLayout()
        for label, box in (("scenario", self.scenario), ("arm", self.arm),
                           ("device", self.device)):  # fmt: skip
            top.addWidget(QLabel(label))
            top.addWidget(box)
        top.addStretch(1)
        # the recording buttons on a row of their own: one row of both would make the whole
        # window wider than a 1366-pixel laptop screen (the pages share one minimum width)
        buttons = QHBoxLayout()
        buttons.addWidget(self.export_line, 1)
        for button in (self.record_button, self.next_button, self.rerecord_button,
                       self.stop_button, self.export_button):  # fmt: skip
            buttons.addWidget(button)
        lay.addLayout(top)
        lay.addLayout(buttons)
        lay.addWidget(self.view, 1)
        lay.addWidget(self.line)
        lay.addWidget(self.help)
        self._buttons()

    # ---- project and session -----------------------------------------------------------
    def set_project(self, project: Project | None) -> None:
        self.close()
        self.project = project
        self.arm.clear()
        self.arm.addItems(list(ARMS))
        if project is not None:
            self.arm.addItems(project.arms.names())
        self.line.setText("Open a project to teleoperate." if project is None else "ready")
        if self.active:
            self.start()

    def set_active(self, active: bool) -> None:
        """Shown: the session runs. Hidden: it ends unless a demonstration is being recorded
        (a physics loop and its renders cost a core's share nobody is looking at)."""
        self.active = active
        if active and self.session is None:
            self.start()
        elif not active and not (self.status is not None and self.status.recording):
            self.close()

    def choose(self, scenario: str, arm: str | None = None) -> None:
        """Pick the scenario (and arm) and start driving it."""
        if self.scenario.findText(scenario) < 0:
            self.scenario.addItem(scenario)  # a scenario file, not a shipped name
        self.scenario.setCurrentText(scenario)
        if arm:
            if self.arm.findText(arm) < 0:
                self.arm.addItem(arm)
            self.arm.setCurrentText(arm)
        self.start()

    def start(self) -> None:
        """(Re)start the session on the picked scenario and arm."""
        self.close()
        if self.project is None:
            return
        root = self.project.root
        scenario, arm = self.scenario.currentText(), self.arm.currentText() or ARMS[0]
        try:
            self.before = len(list_demonstrations(self.project, open_scenario(scenario).name))
        except Exception as err:  # a bad scenario name: said in the status line
            self._failed(err)
            return
        view = self.view

        def frames_world() -> Any:  # on the frame thread: a world of its own, same arm
            with Project.open(root) as p:
                resolved = resolve_arm(arm, p)
            return make_world(open_scenario(scenario), "physics", arm=resolved)

        self.view.close_episode()
        self.view.camera.clear()
        # keep=1: the teleop view only ever follows the running world, never seeks back
        self.frames = LiveFrames(frames_world, view.frame_arrived.emit, view.failed.emit,
                                 on_ready=view.frames_ready.emit, keep=1)  # fmt: skip
        self.view.frames = self.frames
        self.view.status.setText("preparing the world…")
        frames = self.frames
        self.session = TeleopSession(
            root, scenario, arm,
            on_status=self.status_changed.emit,
            on_snapshot=frames.publish,
            on_stored=self.stored.emit,
            on_error=self.session_failed.emit,
            on_ready=self.session_ready.emit,
        )  # fmt: skip
        self.line.setText(f"starting {scenario} on {arm}…")
        self._view_changed()
        if self.pad is not None:
            self.pad_timer.start()
        self._buttons()

    def close(self) -> None:
        self.pad_timer.stop()
        if self.session is not None:
            self.session.close()
            self.session = None
        if self.frames is not None:
            if self.view.frames is self.frames:
                self.view.frames = None
            self.frames.close()
            self.frames = None
        self.status = None
        self._buttons()

    # ---- devices -----------------------------------------------------------------------
    def refresh_devices(self) -> None:
        """The keyboard, then each gamepad attached now (none without SDL), then each
        SpaceMouse (none without hidapi). The device in use stays chosen while it is listed;
        if it is gone, the keyboard has the arm again."""
        from app.devices import gamepads, spacemice

        current = self.device.currentText()
        self.device.blockSignals(True)
        self.device.clear()
        self.device.addItem(KEYBOARD, None)
        for info in gamepads():
            self.device.addItem(f"gamepad: {info.name}", info.index)
        for mouse in spacemice():
            self.device.addItem(f"spacemouse: {mouse.name}", mouse)
        keep = self.device.findText(current)
        self.device.setCurrentIndex(max(keep, 0))
        self.device.blockSignals(False)
        if keep < 0 and self.pad is not None:  # unplugged since it was chosen
            self._device_changed()

    def _device_changed(self) -> None:
        from app.devices import Gamepad, SpaceMouse

        self.pad_timer.stop()
        if self.pad is not None:
            self.pad.close()
            self.pad = None
            # the device's last command must not go on driving the arm: the keys' does now
            if self.session is not None:
                self.session.set_command(self.keys.command())
        index = self.device.currentData()
        if index is None:
            return
        limits = {"max_linear": self.keys.max_linear, "max_angular": self.keys.max_angular}
        try:
            if isinstance(index, int):
                self.pad = Gamepad.open(index, **limits)
            else:
                self.pad = SpaceMouse.open(index, **limits)
        except Exception as err:  # unplugged since it was listed: said, keyboard again
            self._failed(err)
            self.device.setCurrentIndex(0)
            return
        self._pad_grip = None
        self.pad_timer.start()

    def _poll_pad(self) -> None:
        if self.pad is None or self.session is None:
            return
        cmd = self.pad.poll()
        if cmd.grip is not None:
            self._pad_grip = cmd.grip
        # the toggle's edge is kept until the next one, so a poll between ticks cannot drop it
        self.session.set_command(dataclasses.replace(cmd, grip=self._pad_grip))

    def _view_changed(self) -> None:
        """Tell the session which camera the view shows: a scene camera by name, else the free
        camera (the view's own entry for it is not a scene camera's name)."""
        session, frames = self.session, self.frames
        camera = self.view.camera.currentText()
        if session is None or not camera:
            return
        scene = frames.cameras if frames is not None and frames.ready.is_set() else []
        if camera in scene:
            session.set_view(camera)
        else:
            session.set_view(camera, self.view.free)

    def _frame_shown(self, _frame: object) -> None:
        self.frames_shown += 1

    def _command(self, cmd: Command) -> None:
        if self.session is not None and self.pad is None:  # a gamepad in use has the arm
            self.session.set_command(cmd)

    def _decide(self, action: str) -> None:
        session = self.session
        if session is None:
            return
        if action in ("record", "next", "rerecord"):
            # a fresh reset: the arm's jaws are open again, whatever the keys last toggled
            self.keys.grip, self.keys.grip_known = 0.0, False
            session.set_command(self.keys.command())
        {"record": session.record, "next": session.next, "rerecord": session.rerecord,
         "stop": session.stop_recording}[action]()  # fmt: skip

    # ---- export ------------------------------------------------------------------------
    def export(self, fmt: str, out: Path) -> None:
        """Export the project's demonstrations of the scenario off the GUI thread;
        ``exported(Exported)`` or ``export_failed(error)`` when done (the line says which)."""
        if self.project is None:
            return
        scenario = open_scenario(self.scenario.currentText()).name
        self.export_line.say(f"exporting {scenario} as {fmt} to {out}…")
        self.bridge.submit("teleop.export", export_job, self.project.root, fmt, Path(out),
                           scenario, on_done=self.exported.emit,
                           on_error=self.export_failed.emit, long=True)  # fmt: skip

    def export_dialog(self) -> None:
        if self.project is None:
            return
        asked = ask_export(self.center, self.project.root)
        if asked is not None:
            self.export(*asked)

    # ---- what it shows -----------------------------------------------------------------
    def _ready(self) -> None:
        session = self.session
        if session is None:
            return
        self.keys.max_linear, self.keys.max_angular = session.max_linear, session.max_angular
        self.view.canvas.setFocus()
        self._buttons()

    def _show_status(self, st: SessionStatus) -> None:
        if self.session is None:
            return  # a late status of a session already closed
        self.status = st
        held = ", ".join(st.limits) if st.limits else "—"
        rec = f"recording: {st.steps} steps" if st.recording else "not recording"
        self.line.setText(
            f"speed {'precision ' if st.speed < 1 else ''}×{st.speed:g} · "
            f"clutch {'engaged' if st.clutch else 'released'} · "
            f"gripper {'closed' if st.grip >= 0.5 else 'open'} · held by: {held} · {rec} · "
            f"demonstrations: {self.before + len(st.stored)} · "
            f"task {'done' if st.success else 'not done'}"
        )
        self._buttons()

    def _buttons(self) -> None:
        on = self.session is not None and self.session.ready.is_set()
        recording = self.status is not None and self.status.recording
        self.record_button.setEnabled(on and not recording)
        for b in (self.next_button, self.rerecord_button, self.stop_button):
            b.setEnabled(on and recording)
        self.export_button.setEnabled(self.project is not None)

    def _stored(self, eid: str) -> None:
        self.view.status.setText(f"stored demonstration {eid[:8]}")

    def _failed(self, err: object) -> None:
        self.line.setText(f"teleop: {err}")
