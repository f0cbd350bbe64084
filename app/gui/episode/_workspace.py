"""The episode workspace: one recorded episode on one playhead.

The browser opens an episode; its trace is read off the GUI thread (``sim.review``) and shown
as a timeline, the transcript and the state inspector. The playhead is the one source of time
(DESIGN §4): the slider, the step buttons, the keys (←/→ a tick, Shift a hop, Home/End, Space
plays), a click on any timeline item or transcript row all call :meth:`EpisodeWorkspace.seek`,
which moves every view — the MuJoCo picture included, in every kind of episode: recorded,
live, forked, compared, taken over.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.gui.common import Bridge
from app.gui.episode._browser import EpisodeBrowser
from app.gui.episode._information import InformationView
from app.gui.episode._inspector import Inspector
from app.gui.episode._live_panel import LivePanel
from app.gui.episode._scene3d import Scene3D
from app.gui.episode._timeline_view import TimelineView
from app.gui.episode._transcript import Transcript
from app.gui.episode._world_view import WorldView
from sim.review import EpisodeTimeline, RerunExport, load_timeline
from storage import Project, load_settings


def read_live(root: Path, episode_id: str) -> EpisodeTimeline | None:
    """A running episode's trace so far (None before its first rows are stored)."""
    with Project.open(root) as project:
        if not project.episodes.ticks(episode_id, 0, 1):
            return None
        return load_timeline(project, episode_id)


def read_comparison(root: Path, a: str, b: str) -> tuple[EpisodeTimeline, int | None]:
    """Episode ``b``'s timeline and the first tick its world and ``a``'s differ."""
    from sim.review import diverges_at

    with Project.open(root) as project:
        other = load_timeline(project, b, with_parent=False)
        return other, diverges_at(project.episodes.ticks(a), other.graphs.rows)


def import_into(root: Path, folder: Path) -> str:
    from sim.review import import_bundle

    with Project.open(root) as project:
        return import_bundle(project, folder)


def export_into(root: Path, episode_id: str, path: Path) -> RerunExport:
    from sim.review import export_rerun

    with Project.open(root) as project:
        return export_rerun(project, episode_id, path)


def read_timeline(root: Path, episode_id: str) -> EpisodeTimeline:
    """On a worker thread, with its own connection (connections stay on their thread)."""
    with Project.open(root) as project:
        return load_timeline(project, episode_id)


class EpisodeWorkspace(QObject):
    """The center (playhead, timeline, transcript, inspector) and the browser dock."""

    moved = Signal(int)  # the playhead's new tick, after every view has moved

    def __init__(self, bridge: Bridge) -> None:
        super().__init__()
        self.bridge = bridge
        self.project: Project | None = None
        self.timeline: EpisodeTimeline | None = None
        self.tick = 0
        self.compared: tuple[str, int | None] | None = None
        self._loading: str | None = None  # the episode asked for last (see _load)
        self.browser = EpisodeBrowser()
        self.browser.open_episode.connect(self.open)
        self.browser.import_requested.connect(self._import_dialog)
        self.browser.compare_requested.connect(self.compare_with)
        self.view = TimelineView()
        self.transcript = Transcript()
        self.inspector = Inspector()
        self.world = WorldView()
        self.saw_assistant = InformationView("assistant")
        self.saw_user = InformationView("user")
        self.saw_agent = InformationView("agent")
        self.scene3d = Scene3D()
        self.live = LivePanel()
        self.live.world_view = self.world
        self.live.keys.watch(self.world)  # a person driving the arm looks at the picture
        self.world.canvas.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.world.picked.connect(self.select_object)
        self.live.updated.connect(self.follow_live)
        self.live.ended.connect(self._live_ended)
        self.hop = load_settings().hop_frames  # ticks per Shift+arrow, as frames in Annotate
        self.playing = QTimer(self)  # plays a recorded episode at its own pace (Space)
        self.playing.timeout.connect(self._play_tick)
        self.title = QLabel("Open an episode from the Episodes list (double-click).")
        self.title.setWordWrap(True)
        self.tick_label = QLabel("tick —")
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.valueChanged.connect(self.seek)
        back, fwd = QPushButton("◀ tick"), QPushButton("tick ▶")
        back.clicked.connect(lambda: self.seek(self.tick - 1))
        fwd.clicked.connect(lambda: self.seek(self.tick + 1))
        self.fork_button = QPushButton("Fork here")
        self.fork_button.setToolTip(
            "Re-run this episode to the playhead as a new, linked episode and continue it live "
            "(tick 'I am the user' to take the user's seat there)"
        )
        self.fork_button.clicked.connect(self.fork_here)
        self.fork_button.setEnabled(False)
        self.rerun_button = QPushButton("Export to Rerun…")
        self.rerun_button.setToolTip(
            "Write this episode as a Rerun recording (.rrd): world, belief, videos, dialogue, "
            "events and contract on Rerun's timeline (needs rollout-workbench[rerun])"
        )
        self.rerun_button.clicked.connect(self._export_dialog)
        self.rerun_button.setEnabled(False)
        nxt = QPushButton("next item ▶▶")
        nxt.setToolTip("Jump to the next thing that happens on the timeline")
        nxt.clicked.connect(self.next_item)
        nxt_event = QPushButton("next event ▶▶")
        nxt_event.setToolTip("Jump to the next scheduled event's trigger, commit or resolution")
        nxt_event.clicked.connect(lambda: self.next_item("events"))
        self.view.seek.connect(self.seek)
        self.transcript.seek.connect(self.seek)

        self.center = QWidget()
        lay = QVBoxLayout(self.center)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.title)
        lay.addWidget(self.live)
        bar = QHBoxLayout()
        for w in (back, fwd, nxt, nxt_event, self.fork_button, self.rerun_button):
            bar.addWidget(w)
        bar.addWidget(self.slider, 1)
        bar.addWidget(self.tick_label)
        lay.addLayout(bar)
        split = QSplitter(Qt.Orientation.Vertical)
        upper = QSplitter(Qt.Orientation.Horizontal)
        upper.addWidget(self.world)
        upper.addWidget(self.transcript)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.inspector, "State")
        self.tabs.addTab(self.saw_assistant, "Assistant was shown")
        self.tabs.addTab(self.saw_user, "User was shown")
        self.tabs.addTab(self.saw_agent, "Agent's calls")
        self.tabs.addTab(self.scene3d, "3D scene")
        upper.addWidget(self.tabs)
        upper.setSizes([400, 300, 440])  # the state and what each side saw need the width
        split.addWidget(upper)
        split.addWidget(self.view)
        self.parent_view = TimelineView()  # a fork's parent, on the same playhead
        self.parent_view.setXLink(self.view)  # one tick axis: zoom and pan move both
        self.parent_view.seek.connect(self.seek)
        self.parent_view.hide()
        split.addWidget(self.parent_view)
        split.setSizes([420, 330, 200])
        lay.addWidget(split, 1)

    # ---- project and episode ---------------------------------------------------------------
    def set_project(self, project: Project | None) -> None:
        self.live.stop(quiet=True)
        self.stop_playing()
        self.project = project
        self.live.root = None if project is None else project.root
        self.browser.show_project(project)

    def open(self, episode_id: str, at: int = 0) -> None:
        """Show a stored episode with the playhead at ``at``. Leaving a live run asks first."""
        if self.project is None:
            return
        if episode_id != self.live.episode_id and not self.live.ask_to_leave(
            f"Opening episode {episode_id[:8]}", can_keep=True
        ):
            return
        self.stop_playing()
        self._load(episode_id, at)

    def _load(self, episode_id: str, at: int) -> None:
        """Read the episode off the GUI thread and show it, unless another was asked for since
        (two reads in flight finish in any order: the last one asked for wins)."""
        assert self.project is not None
        self._loading = episode_id
        self.title.setText(f"loading episode {episode_id[:8]}…")

        def done(tl: EpisodeTimeline) -> None:
            if self._loading == tl.episode.id:
                self._loading = None
                self.show(tl, at=at)

        self.bridge.submit("episode", read_timeline, self.project.root, episode_id,
                           on_done=done, on_error=self._failed)  # fmt: skip

    @property
    def loading(self) -> bool:
        """Whether an episode asked for is still being read."""
        return self._loading is not None

    def _live_ended(self, episode_id: str, tick: int) -> None:
        """A live run ended (finished, or stopped and stored): it becomes a recorded episode,
        opened where it ended, whose every tick replays exactly; the list shows it."""
        if self.project is None:
            return
        self.browser.show_project(self.project)
        self._load(episode_id, tick)

    def _failed(self, err: BaseException) -> None:
        from annotation import UserError

        if isinstance(err, UserError):
            self.title.setText(f"could not open the episode: {err}")
        else:
            self.title.setText("could not open the episode (a bug: see the report)")
            self.bridge.fail("episode", err)

    def follow_live(self, episode_id: str, tick: int) -> None:
        """The live episode's trace so far, with the playhead at its newest tick."""
        if self.project is None:
            return
        self.bridge.submit("episode-live", read_live, self.project.root, episode_id,
                           on_done=lambda tl: self._show_live(tl, tick),
                           on_error=lambda _e: None)  # fmt: skip

    def _show_live(self, tl: EpisodeTimeline | None, tick: int) -> None:
        live = self.live.live
        if tl is None or live is None or tl.episode.id != self.live.episode_id:
            return  # a late read of a run that has ended or was replaced
        if tl.ticks < tick:  # read while the run's last ticks were still being written
            self.live.reread()
        self.show(tl, at=tick, live=True)

    def show(self, tl: EpisodeTimeline, *, at: int = 0, live: bool = False) -> None:
        self.timeline = tl
        ep = tl.episode
        # the MuJoCo view is for physics: a symbolic or imported episode gives its room away
        has_video = bool(tl.on("video"))
        self.world.setVisible(ep.mode.value == "physics" or has_video)
        if live:
            self.world.live(ep, self.live.frames)
        elif self.project is not None:
            self.world.open(self.project.root, ep, has_video=has_video)
        ok = {1.0: "succeeded", 0.0: "failed"}.get(
            self.project.episodes.metrics(ep.id).get("success", -1.0) if self.project else -1.0,
            "",
        )
        fork = ""
        if ep.parent_id is not None:
            where = (f"diverges at tick {tl.diverges_at}" if tl.diverges_at is not None
                     else "never diverges")  # fmt: skip
            fork = f" · fork of {ep.parent_id[:8]} at tick {ep.fork_tick}, {where}"
        state = (
            f"live · {tl.ticks} ticks so far"
            if live
            else f"{ep.status.value} {ok} · {ep.ticks} ticks"
        )
        self.title.setText(
            f"<b>{ep.scenario}</b> · {ep.agent} · {ep.mode.value} · episode {ep.id[:8]} · "
            f"{state} of {ep.delta:g} s{fork}"
        )
        shared = max(tl.ticks, tl.parent.ticks) if tl.parent is not None else tl.ticks
        self.compared = None
        self.view.show_items(tl.tracks, tl.items, shared)
        self.view.mark_divergence(tl.diverges_at)
        if tl.parent is not None:
            ticks = max(tl.ticks, tl.parent.ticks)
            self.parent_view.show_items(tl.parent.tracks, tl.parent.items, ticks)
            self.parent_view.mark_divergence(tl.diverges_at)
            self.parent_view.setTitle(f"parent {tl.parent.episode.id[:8]}: the branch this one "
                                      f"forked from at tick {ep.fork_tick}")  # fmt: skip
            self.parent_view.show()
        else:
            self.parent_view.hide()
        self.fork_button.setEnabled(not live and bool(ep.config.get("interactive")))
        self.rerun_button.setEnabled(not live)
        self.transcript.show_turns(tl.turns)
        self.slider.blockSignals(True)
        self.slider.setRange(0, tl.ticks)
        self.slider.blockSignals(False)
        self.tick = -1
        # a run playing live: the picture follows the running world; paused, it is the tick
        self.seek(min(at, tl.ticks), follow=live and self.live.live is not None
                  and self.live.live.playing)  # fmt: skip

    # ---- the playhead ----------------------------------------------------------------------
    def seek(self, tick: int, *, follow: bool = False) -> None:
        """Move every view to ``tick`` (clamped to the episode). ``follow``: a live run's
        picture shows the running world as it goes (else exactly this tick)."""
        tl = self.timeline
        if tl is None:
            return
        tick = max(0, min(int(tick), tl.ticks))
        if self.world.following != follow:
            self.world.following = follow
            self.tick = -1  # the same tick, asked for another way
        if tick == self.tick:
            return
        self.tick = tick
        self.slider.blockSignals(True)
        self.slider.setValue(tick)
        self.slider.blockSignals(False)
        self.tick_label.setText(f"tick {tick} · {tick * tl.tick_s:.1f} s")
        self.view.set_playhead(tick)
        self.parent_view.set_playhead(tick)
        self.transcript.follow(tick)
        i = tl.graphs.index(tick)
        self.inspector.show_state(tick, tl.graphs.graph_at(tick), tl.graphs.diff(i),
                                  tl.contract_at(tick), tl.belief_at(tick))  # fmt: skip
        self.world.show_tick(tick)
        self.scene3d.show_graph(tl.graphs.graph_at(tick), tl.belief_at(tick),
                                tl.arm_path(tick), tl.contacts_at(tick))  # fmt: skip
        for view in (self.saw_assistant, self.saw_user, self.saw_agent):
            view.show_exchange(tl.exchange_at(view.party, tick), tick)
        self.moved.emit(tick)

    def _export_dialog(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        if self.timeline is None:
            return
        name = f"{self.timeline.episode.id[:8]}.rrd"
        path, _ = QFileDialog.getSaveFileName(self.center, "Export to Rerun", name,
                                              "Rerun recording (*.rrd)")  # fmt: skip
        if path:
            self.export_rerun(Path(path))

    def export_rerun(self, path: Path) -> None:
        """Write the open episode to a Rerun file off the GUI thread (it replays the world)."""
        if self.project is None or self.timeline is None:
            return
        self.title.setText(f"exporting to {path.name}…")
        self.bridge.submit("episode-rerun", export_into, self.project.root,
                           self.timeline.episode.id, path, on_done=self._exported,
                           on_error=self._failed, long=True)  # fmt: skip

    def _exported(self, done: RerunExport) -> None:
        self.title.setText(done.summary().splitlines()[0])

    def _import_dialog(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        folder = QFileDialog.getExistingDirectory(self.center, "Import an episode bundle")
        if folder:
            self.import_bundle(Path(folder))

    def import_bundle(self, folder: Path) -> None:
        """Import a bundle off the GUI thread, then list and open it."""
        if self.project is None:
            return
        self.title.setText(f"importing {folder.name}…")
        self.bridge.submit("episode-import", import_into, self.project.root, folder,
                           on_done=self._imported, on_error=self._failed)  # fmt: skip

    def _imported(self, episode_id: str) -> None:
        self.browser.show_project(self.project)
        self.open(episode_id)

    def compare_with(self, other_id: str) -> None:
        """Another episode under the open one, on the same playhead, and where they part."""
        tl = self.timeline
        if tl is None or self.project is None or other_id == tl.episode.id:
            return
        self.bridge.submit(
            "episode-compare", read_comparison, self.project.root, tl.episode.id, other_id,
            on_done=self._show_comparison, on_error=self._failed,
        )  # fmt: skip

    def _show_comparison(self, got: tuple[EpisodeTimeline, int | None]) -> None:
        other, parts = got
        tl = self.timeline
        if tl is None:
            return
        ticks = max(tl.ticks, other.ticks)  # one scale for both: a tick is one x in each
        self.view.show_items(tl.tracks, tl.items, ticks)
        self.view.set_playhead(self.tick)
        self.parent_view.show_items(other.tracks, other.items, ticks)
        self.parent_view.mark_divergence(parts)
        self.view.mark_divergence(parts)
        where = f"their worlds differ from tick {parts}" if parts is not None else "identical"
        o = other.episode
        self.parent_view.setTitle(f"compared with {o.id[:8]} ({o.scenario}, {o.agent}): {where}")
        self.parent_view.show()
        self.parent_view.set_playhead(self.tick)
        self.compared = (other.episode.id, parts)

    def select_object(self, obj: str | None) -> None:
        """An object clicked in the MuJoCo view: its row in the state inspector."""
        if obj is None:
            return
        row = self.inspector.find_row(obj)
        if row is not None:
            self.tabs.setCurrentWidget(self.inspector)
            self.inspector.setCurrentItem(row)
            row.setExpanded(True)

    def fork_here(self) -> None:
        """Fork the open episode at the playhead into a live episode (see LivePanel)."""
        tl = self.timeline
        if tl is None or self.project is None:
            return
        from sim.review import fork_build, fork_world

        build = fork_build(self.project, tl.episode.id, self.tick)
        self.live.start_fork(build, self.tick, take_seat=self.live.seat.isChecked(),
                             make_world=fork_world(self.project, tl.episode.id))  # fmt: skip

    def next_item(self, track: str | None = None) -> None:
        """Seek to the next thing on the timeline (on ``track`` only, when given)."""
        tl = self.timeline
        if tl is None:
            return
        later = [i.start for i in tl.items
                 if i.start > self.tick and (track is None or i.track == track)]  # fmt: skip
        if later:
            self.seek(min(later))

    # ---- keys and playback (the window's Play commands, while this workspace is shown) ------
    def handlers(self) -> dict[str, Callable[[], object]]:
        """The Play menu's commands in this workspace: ticks instead of frames."""
        return {
            "play.toggle": self.toggle_play,
            "play.step_fwd": lambda: self.step(1),
            "play.step_back": lambda: self.step(-1),
            "play.hop_fwd": lambda: self.step(self.hop),
            "play.hop_back": lambda: self.step(-self.hop),
            "play.first": lambda: self.seek(0),
            "play.last": lambda: self.seek(self.timeline.ticks if self.timeline else 0),
        }

    def step(self, n: int) -> None:
        """Move the playhead ``n`` ticks; past a paused live run's newest tick, the run steps."""
        self.stop_playing()
        tl, live = self.timeline, self.live.live
        at_head = live is not None and tl is not None and tl.episode.id == self.live.episode_id
        if at_head and live is not None and not live.finished and self.tick + n > live.tick:
            live.pause()
            live.step(self.tick + n - live.tick)
            return
        self.seek(self.tick + n)

    def toggle_play(self) -> None:
        """Space: a live run plays or pauses; a recorded episode plays at its own pace."""
        tl = self.timeline
        if self.live.live is not None and tl is not None and tl.episode.id == self.live.episode_id:
            self.live.toggle()
            return
        if self.playing.isActive():
            self.stop_playing()
        elif tl is not None:
            if self.tick >= tl.ticks:
                self.seek(0)
            self.playing.start(max(15, round(1000 * tl.tick_s)))

    def stop_playing(self) -> None:
        self.playing.stop()

    def _play_tick(self) -> None:
        tl = self.timeline
        if tl is None or self.tick >= tl.ticks:
            self.stop_playing()
            return
        self.seek(self.tick + 1)
