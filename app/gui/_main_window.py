"""The main window: menus built from the command table, docks, projects, drag-and-drop."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from PySide6.QtCore import QByteArray, Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QGuiApplication,
    QKeySequence,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QProgressBar,
    QSplitter,
    QStackedWidget,
    QTabBar,
    QVBoxLayout,
    QWidget,
)

from annotation import UserError
from app.gui.annotate import AnnotateWorkspace
from app.gui.common import (
    COMMANDS,
    AnnotateState,
    Bridge,
    CaseImporter,
    LayoutError,
    Layouts,
    LocalWorkers,
    ProjectWatch,
    Roles,
    ShortcutEditor,
    ShortcutOverlay,
    VerticalScroll,
    about_text,
    effective_keys,
    load_overrides,
    read_layouts,
    save_overrides,
)
from app.gui.episode import EpisodeWorkspace
from app.gui.judge import JobsPanel, JudgeDialog, TraceView
from app.gui.results import ResultsPanel
from app.gui.teleop import TeleopWorkspace
from judge import QueueError, queue_judge
from storage import (
    ImportReport,
    Project,
    Settings,
    bundle_origin,
    to_csv,
    to_json,
)

MAX_RECENT = 8
STATE_VERSION = 1  # of the dock arrangement (see app/gui/common/_layouts.py)
PREFERRED_SIZE = (1500, 920)  # on screens that have the room; smaller ones get the whole screen


class MainWindow(QMainWindow):
    """Menus, docks and the annotate workspace for one open project at a time."""

    def __init__(self, settings: Settings, bridge: Bridge | None = None) -> None:
        super().__init__()
        self.settings = settings
        self._owns_bridge = bridge is None
        self.bridge = bridge or Bridge()
        self.state = AnnotateState(rater=settings.rater)
        self.setWindowTitle("Rollout Workbench")
        self._fitted = False
        self._fit_to_screen(*PREFERRED_SIZE)
        self.setAcceptDrops(True)
        self.setDockOptions(
            QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowTabbedDocks
        )

        self.annotate = AnnotateWorkspace(self.state, self.bridge, settings)
        self.episode = EpisodeWorkspace(self.bridge)
        self.episode.browser.bind(self.state)  # attributions and notes: the rater's, undoable
        # the middle of the window: the player, or the episode on its playhead
        self.center = QStackedWidget()
        self.center.addWidget(self.annotate.center)
        self.center.addWidget(self.episode.center)
        self.teleop = TeleopWorkspace(self.bridge)
        self.center.addWidget(self.teleop.center)
        self.setCentralWidget(self.center)
        self.annotate.message.connect(lambda m: self.statusBar().showMessage(m, 5000))
        self.docks: dict[str, QDockWidget] = {}
        self._dock("Videos", self.annotate.videos, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.docks["Videos"].setMinimumWidth(150)
        rubric = QWidget()
        rl = QVBoxLayout(rubric)
        rl.setContentsMargins(2, 2, 2, 2)
        split = QSplitter(Qt.Orientation.Vertical)
        split.setChildrenCollapsible(False)
        split.addWidget(self.annotate.subgoals)
        gates = VerticalScroll(self.annotate.gates)
        split.addWidget(gates)
        # keyboard moves between gates keep the current gate row in view on a short screen
        self.state.cursor_changed.connect(
            lambda: gates.ensureWidgetVisible(self.annotate.gates.rows[self.state.gate_index][0])
        )
        split.setSizes([150, 650])
        rl.addWidget(self.annotate.scores)
        rl.addWidget(split, 1)
        self._dock("Rubric", rubric, Qt.DockWidgetArea.RightDockWidgetArea)
        self._dock("Evidence", self.annotate.evidence, Qt.DockWidgetArea.RightDockWidgetArea)
        self.trace_view = TraceView(self.state)
        self._dock("Judge trace", self.trace_view, Qt.DockWidgetArea.RightDockWidgetArea)
        self.tabifyDockWidget(self.docks["Evidence"], self.docks["Judge trace"])
        self.docks["Evidence"].raise_()
        self.workers = LocalWorkers(self)
        self.jobs_panel = JobsPanel(self.state, self.workers)
        self._dock("Jobs", self.jobs_panel, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.jobs_panel.finished.connect(self.trace_view.refresh)  # new runs appear by themselves
        self.results = ResultsPanel(self.state, self.bridge)
        self.results.open_video.connect(self.open_video_by_id)
        self._dock("Results", self.results, Qt.DockWidgetArea.RightDockWidgetArea)
        self.docks["Results"].hide()
        self._dock("Episodes", self.episode.browser, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.docks["Episodes"].hide()
        self.state.project_changed.connect(lambda: self.episode.set_project(self.state.project))
        self.state.project_changed.connect(lambda: self.teleop.set_project(self.state.project))
        # the lists follow the project: what a worker, the CLI or a live run commits shows up
        self.watch = ProjectWatch(self)
        # first (priority): the baseline is read before the views read, so nothing slips between
        self.state.project_changed.connect(
            lambda: self.watch.set_project(self.state.project), priority=1
        )
        self.watch.changed.connect(self._landed)
        self.jobs_panel.follow(self.watch)
        self.episode.live.updated.connect(lambda *_: self.watch.check_now(force=False))
        self.docks["Jobs"].hide()  # shown when jobs are queued or on request
        self._annotate_sizes()

        self.layouts = Layouts(settings.config_dir / "layouts.json")
        self.workspace = "annotate"
        self.actions_by_id: dict[str, QAction] = {}
        # rater or lead: blind mode hides results from raters (app/gui/common/_roles.py)
        self.roles = Roles(self, blindable=[self.results, self.trace_view])
        self._shortcut_file = settings.config_dir / "shortcuts.json"
        self._build_menus()
        self.apply_shortcuts()
        self.state.data_changed.connect(self._update_undo_text)
        self.state.video_changed.connect(self._update_undo_text)
        self.rater_label = QLabel(f"Rater: {settings.rater}")
        self.rater_label.setToolTip(
            "Decisions are recorded under this rater id (WB_RATER, or the assignment's rater)"
        )
        self.statusBar().addPermanentWidget(self.rater_label)
        self.statusBar().showMessage("Open a project (Ctrl+O) or drop a case folder here")
        self.import_bar = QProgressBar()
        self.import_bar.setMaximumWidth(200)
        self.import_bar.setFormat("import %v/%m files")
        self.import_bar.hide()
        self.statusBar().addPermanentWidget(self.import_bar)
        self.importer = CaseImporter(self.bridge, self)
        self.importer.started.connect(self._import_started)
        self.importer.progress.connect(self._import_progress)
        self.importer.imported.connect(self._imported)
        self.importer.failed.connect(self._import_failed)

    # ---- size --------------------------------------------------------------------------
    def _fit_to_screen(self, width: int, height: int) -> None:
        """Take ``width`` × ``height`` where it fits, else the screen's available size, frame
        included, so nothing (the Rubric dock on the right least of all) is off screen."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        avail = screen.availableGeometry()
        # The window manager's frame, once it has one (zero before the window is first shown).
        fw = self.frameGeometry().width() - self.width()
        fh = self.frameGeometry().height() - self.height()
        w = min(width, avail.width() - fw)
        h = min(height, avail.height() - fh)
        self.resize(w, h)
        self.move(
            avail.x() + max(0, (avail.width() - w - fw) // 2),
            avail.y() + max(0, (avail.height() - h - fh) // 2),
        )

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._fitted:  # again on the screen it opens on, if a caller resized it past it
            self._fitted = True
            avail = (self.screen() or QGuiApplication.primaryScreen()).availableGeometry()
            if not avail.contains(self.frameGeometry()):
                self._fit_to_screen(self.width(), self.height())

    # ---- menus -------------------------------------------------------------------------
    def _handlers(self) -> dict[str, Callable[[], object]]:
        own: dict[str, Callable[[], object]] = {
            "project.new": self.new_project,
            "project.open": self.open_project_dialog,
            "project.import": self.import_dialog,
            "project.export": self.export_dialog,
            "app.quit": self.close,
            "edit.undo": self.undo,
            "edit.redo": self.redo,
            "view.annotate": lambda: self.set_workspace("annotate"),
            "view.judge": lambda: self.set_workspace("judge"),
            "view.results": lambda: self.set_workspace("results"),
            "view.episode": lambda: self.set_workspace("episode"),
            "view.teleop": lambda: self.set_workspace("teleop"),
            "view.save_layout": self.save_layout_dialog,
            "view.load_layout": self.load_layout_dialog,
            "judge.run": self.judge_dialog,
            "jobs.workers": self.jobs_panel.toggle_workers,
            "jobs.show": self.show_jobs,
            "help.shortcuts": self.show_shortcuts,
            "help.edit_shortcuts": self.edit_shortcuts,
            "help.about": lambda: QMessageBox.about(self, "About Rollout Workbench", about_text()),
        }
        return own | dict(self.annotate.handlers()) | self._per_workspace() | self.roles.handlers()

    def _per_workspace(self) -> dict[str, Callable[[], object]]:
        """The Play commands act on the workspace shown: ticks in Episode, frames elsewhere
        (Annotate's player); in Teleop they do nothing (its keys drive the arm)."""
        annotate, episode = self.annotate.handlers(), self.episode.handlers()

        def route(cid: str) -> Callable[[], object]:
            def run() -> object:
                if self.workspace == "episode":
                    return episode[cid]() if cid in episode else None
                return None if self.workspace == "teleop" else annotate[cid]()

            return run

        scoped = {c.id for c in COMMANDS if c.scope in ("player", "gates")}
        return {cid: route(cid) for cid in scoped if cid in annotate}

    def _enable_for_workspace(self) -> None:
        """A Play or Annotate command that does nothing in the workspace shown is disabled, so
        its key reaches the widget instead (↑/↓ and PgUp/PgDn scroll the Episodes list)."""
        episode = self.episode.handlers()
        for c in COMMANDS:
            if c.scope not in ("player", "gates"):
                continue
            on = (c.id in episode) if self.workspace == "episode" else self.workspace != "teleop"
            self.actions_by_id[c.id].setEnabled(on)

    def _build_menus(self) -> None:
        handlers = self._handlers()
        menus: dict[str, QMenu] = {}
        for name in ("File", "Edit", "View", "Play", "Annotate", "Judge", "Results", "Help"):
            menus[name] = self.menuBar().addMenu(f"&{name}")
        for cmd in COMMANDS:
            act = QAction(cmd.title, self)
            act.setObjectName(cmd.id)
            act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            if cmd.help:
                act.setStatusTip(cmd.help)
            act.triggered.connect(lambda _c=False, h=handlers[cmd.id]: h())
            menus[cmd.menu].addAction(act)
            self.addAction(act)  # shortcuts work even with the menu bar hidden
            self.actions_by_id[cmd.id] = act
            if cmd.id == "project.open":
                self.recent_menu = menus["File"].addMenu("Open &Recent")
                self._fill_recent()
            if cmd.id in ("project.export", "edit.redo", "play.loop", "video.prev"):
                menus[cmd.menu].addSeparator()
        view = menus["View"]
        group = QActionGroup(self)
        for cid in ("view.annotate", "view.judge", "view.results", "view.episode", "view.teleop"):
            act = self.actions_by_id[cid]
            act.setCheckable(True)
            group.addAction(act)
        self.actions_by_id["view.annotate"].setChecked(True)
        view.addSeparator()
        for dock in self.docks.values():
            view.addAction(dock.toggleViewAction())

    def apply_shortcuts(self) -> None:
        """(Re)bind keys from defaults plus the user's overrides."""
        try:
            overrides = load_overrides(self._shortcut_file)
        except ValueError as e:
            self.statusBar().showMessage(f"{e}; using default shortcuts", 10000)
            overrides = {}
        self.keys = effective_keys(overrides)
        for cid, act in self.actions_by_id.items():
            act.setShortcuts([QKeySequence(k) for k in self.keys[cid]])

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> None:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock.{title.lower()}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        self.docks[title] = dock

    # ---- projects ----------------------------------------------------------------------
    def open_project(self, path: Path, *, create: bool = False) -> bool:
        if not self.episode.live.ask_to_leave(f"Opening project {path.name}"):
            return False
        try:
            project = Project.open_or_create(path) if create else Project.open(path)
        except (UserError, OSError) as e:  # not a project, too new a schema, no permission
            QMessageBox.warning(self, "Cannot open project", str(e))
            return False
        origin = bundle_origin(project)
        if origin is not None:  # a rater's blind assignment: decisions go under its rater id
            self.state.rater = origin.rater_id
            self.rater_label.setText(f"Rater: {origin.rater_id} · study {origin.study_id}")
        else:
            self.state.rater = self.settings.rater
            self.rater_label.setText(f"Rater: {self.settings.rater}")
        self.state.set_project(project)
        self.setWindowTitle(f"{path.name} — Rollout Workbench")
        self._remember(path)
        self._update_undo_text()
        self.statusBar().showMessage(f"Opened {path}", 5000)
        return True

    def new_project(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "New project: choose an empty folder")
        if folder:
            self.open_project(Path(folder), create=True)

    def open_project_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open project folder")
        if folder:
            self.open_project(Path(folder))

    def import_folder(self, folder: Path) -> None:
        """Import in the background (a folder dropped meanwhile waits its turn)."""
        if self.state.project is None:
            QMessageBox.information(self, "Import", "Open or create a project first.")
            return
        self.importer.add(self.state.project.root, folder)

    def _import_started(self, folder: Path) -> None:
        self.import_bar.setRange(0, 0)  # busy until the first count arrives
        self.import_bar.show()
        self.statusBar().showMessage(f"Importing {folder.name}…")

    def _import_progress(self, folder: Path, done: int, total: int) -> None:
        self.import_bar.setRange(0, total)
        self.import_bar.setValue(done)
        self.statusBar().showMessage(f"Importing {folder.name}: {done} of {total} files")

    def _imported(self, root: Path, folder: Path, report: ImportReport) -> None:
        self.import_bar.hide()  # a queued import's `started` shows it again
        project = self.state.project
        if project is not None and project.root == root:  # not if another project opened since
            self.state.project_changed.emit()
        self.statusBar().showMessage(f"Imported {folder.name}: {report.summary()}", 10000)

    def _import_failed(self, folder: Path, err: Exception) -> None:
        self.import_bar.hide()
        self.statusBar().clearMessage()
        QMessageBox.warning(self, "Import failed — nothing was changed", str(err))

    def import_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self, "Import a case folder (or a folder of cases)"
        )
        if folder:
            self.import_folder(Path(folder))

    def export_dialog(self) -> None:
        if self.state.project is None:
            return
        path, _ = QFileDialog.getSaveFileName(
            self, "Export annotations", "", "CSV (*.csv);;JSON (*.json)"
        )
        if path:
            p = Path(path)
            text = (
                to_json(self.state.project) if p.suffix == ".json" else to_csv(self.state.project)
            )
            p.write_text(text, "utf-8")
            self.statusBar().showMessage(f"Exported to {p}", 5000)

    def _recent_file(self) -> Path:
        return self.settings.config_dir / "recent.json"

    def recent(self) -> list[str]:
        try:
            data = json.loads(self._recent_file().read_text("utf-8"))
            return [str(p) for p in data][:MAX_RECENT]
        except (OSError, ValueError, TypeError):
            return []

    def _remember(self, path: Path) -> None:
        items = [str(path.resolve())] + [p for p in self.recent() if p != str(path.resolve())]
        f = self._recent_file()
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(items[:MAX_RECENT]), "utf-8")
        self._fill_recent()

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for p in self.recent():
            act = self.recent_menu.addAction(p)
            act.triggered.connect(lambda _c=False, p=p: self.open_project(Path(p)))
        self.recent_menu.setEnabled(bool(self.recent()))

    # ---- edit --------------------------------------------------------------------------
    def undo(self) -> None:
        if self.state.project is not None:
            label = self.state.project.history.undo(self.state.rater)
            self.statusBar().showMessage(f"Undid: {label}" if label else "Nothing to undo", 4000)
            self.state.data_changed.emit()

    def redo(self) -> None:
        if self.state.project is not None:
            label = self.state.project.history.redo(self.state.rater)
            self.statusBar().showMessage(f"Redid: {label}" if label else "Nothing to redo", 4000)
            self.state.data_changed.emit()

    def _update_undo_text(self) -> None:
        project = self.state.project
        undo = project.history.undo_label(self.state.rater) if project else None
        redo = project.history.redo_label(self.state.rater) if project else None
        self.actions_by_id["edit.undo"].setText(f"&Undo {undo}" if undo else "&Undo")
        self.actions_by_id["edit.undo"].setEnabled(undo is not None)
        self.actions_by_id["edit.redo"].setText(f"&Redo {redo}" if redo else "&Redo")
        self.actions_by_id["edit.redo"].setEnabled(redo is not None)

    # ---- judge -------------------------------------------------------------------------
    def profile_names(self) -> list[str]:
        project = self.state.project
        profiles = getattr(project, "profiles", None)
        return [] if profiles is None else sorted(profiles.list())

    def judge_dialog(self) -> None:
        project = self.state.project
        if project is None:
            return
        dlg = JudgeDialog(project, self.state.video, self.profile_names(), self)
        if not dlg.exec():
            return
        videos, profile, mode = dlg.selection()
        try:
            batch, ids = queue_judge(project, videos, profile=profile, mode=mode,
                                     config=dlg.config())  # fmt: skip
        except QueueError as e:
            QMessageBox.warning(self, "Nothing queued", str(e))
            return
        self.show_jobs()
        self.statusBar().showMessage(
            f"Queued {len(ids)} judge job(s) in {batch}; start a worker to run them", 8000
        )

    # which docks each workspace shows; the player is always in the middle
    WORKSPACES: ClassVar[dict[str, tuple[str, ...]]] = {
        "annotate": ("Videos", "Rubric", "Evidence"),
        "judge": ("Videos", "Judge trace", "Jobs"),
        "results": ("Videos", "Results"),
        "episode": ("Episodes",),
        "teleop": (),
    }

    def set_workspace(self, name: str) -> None:
        """Show the docks of one workspace (users can still toggle any dock in View); the
        arrangement you left it in comes back with it."""
        self.layouts.keep(self.workspace, self.saveState(STATE_VERSION).data())
        self.workspace = name
        wanted = self.WORKSPACES[name]
        for title, dock in self.docks.items():
            dock.setVisible(title in wanted)
        if wanted:
            self.docks[wanted[-1] if len(wanted) < 2 else wanted[1]].raise_()
        self.center.setCurrentIndex({"episode": 1, "teleop": 2}.get(name, 0))
        self.teleop.set_active(name == "teleop")
        self._enable_for_workspace()
        self.actions_by_id[f"view.{name}"].setChecked(True)
        if name == "annotate":  # the other workspaces squeeze the Videos and Rubric docks
            self._annotate_sizes()
        if name == "judge":  # the trace and the player matter most; the jobs table stays short
            self.resizeDocks([self.docks["Jobs"]], [190], Qt.Orientation.Vertical)
            width = int(self.width() * 0.3)
            self.resizeDocks([self.docks["Judge trace"]], [width], Qt.Orientation.Horizontal)
        if name == "episode":
            # the list is for choosing; the episode's own views need the width
            self.resizeDocks([self.docks["Episodes"]], [int(self.width() * 0.22)],
                             Qt.Orientation.Horizontal)  # fmt: skip
        if name == "results":
            self.resizeDocks(
                [self.docks["Results"]], [int(self.width() * 0.55)], Qt.Orientation.Horizontal
            )
            if self.results.results is None:
                self.results.refresh()
        kept = self.layouts.get(name)
        if kept is not None:
            self.restoreState(QByteArray(kept), STATE_VERSION)
            # your arrangement of this workspace's docks comes back; a dock shown in passing
            # (the jobs list after queueing) does not stay in a workspace it is not part of
            for title, dock in self.docks.items():
                if title not in wanted:
                    dock.hide()
        QTimer.singleShot(0, self._hide_stale_tab_bars)  # once Qt has laid the docks out

    def _hide_stale_tab_bars(self) -> None:
        """Qt leaves the tab bar of a tabbed dock group on screen after the group's docks are
        hidden (drawn over the next workspace: "Evidence | Judge trace" under the teleop
        view); a bar that stands for no group of shown docks goes."""
        shown = {title for title, dock in self.docks.items() if dock.isVisible()}
        for bar in self.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly):
            tabs = [bar.tabText(i) for i in range(bar.count())]
            if sum(t in shown for t in tabs) < 2:
                bar.hide()

    def _annotate_sizes(self) -> None:
        """The Rubric gets the height, the Evidence list what is left (at least a few rows)."""
        self.resizeDocks([self.docks["Videos"]], [190], Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["Rubric"]], [470], Qt.Orientation.Horizontal)
        evidence = max(110, self.height() // 6)
        self.resizeDocks(
            [self.docks["Rubric"], self.docks["Evidence"]],
            [self.height() - evidence, evidence],
            Qt.Orientation.Vertical,
        )

    def open_video_by_id(self, video_id: str) -> None:
        project = self.state.project
        if project is not None:
            self.annotate.open_video(project.video(video_id))

    def show_jobs(self) -> None:
        self.docks["Jobs"].show()
        self.docks["Jobs"].raise_()
        self.jobs_panel.refresh()

    def _landed(self, areas: frozenset[str]) -> None:
        """Another connection committed to the project (the Jobs panel follows by itself)."""
        if "episodes" in areas:
            self.episode.browser.outdated()  # now if shown, else when next shown
        if "videos" in areas:
            self.annotate.videos.refresh()  # keeps the highlighted video and the scroll
        elif "ratings" in areas:
            self.annotate.videos.refresh_scores()
        if "ratings" in areas:
            self.results.outdated()  # the bootstrap only while Results is on screen

    # ---- help --------------------------------------------------------------------------
    def show_shortcuts(self) -> None:
        ShortcutOverlay(self.keys, self).exec()

    def edit_shortcuts(self) -> None:
        dlg = ShortcutEditor(self.keys, self)
        if dlg.exec():
            save_overrides(self._shortcut_file, dlg.overrides())
            self.apply_shortcuts()

    # ---- drag and drop -----------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        urls = event.mimeData().urls()
        if urls and all(u.isLocalFile() and Path(u.toLocalFile()).is_dir() for u in urls):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        for url in event.mimeData().urls():
            self.import_folder(Path(url.toLocalFile()))

    def save_layout_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save layout", "layout.json", "JSON (*.json)")
        if path:
            self.layouts.keep(self.workspace, self.saveState(STATE_VERSION).data())
            self.layouts.save(Path(path))

    def load_layout_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load layout", "", "JSON (*.json)")
        if path:
            self.load_layout(Path(path))

    def load_layout(self, path: Path) -> None:
        """Every workspace's arrangement from a file; this workspace's applies now."""
        try:
            self.layouts.states.update(read_layouts(path))
        except LayoutError as err:
            QMessageBox.warning(self, "Layout not loaded", str(err))
            return
        kept = self.layouts.get(self.workspace)
        if kept is not None:
            self.restoreState(QByteArray(kept), STATE_VERSION)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.episode.live.ask_to_leave("Closing the window"):
            event.ignore()  # the person chose to keep working
            return
        self.layouts.keep(self.workspace, self.saveState(STATE_VERSION).data())
        with contextlib.suppress(OSError):  # a read-only settings folder: only the layout is lost
            self.layouts.save()
        self.workers.stop()
        self.annotate.close()
        self.episode.live.stop(quiet=True)
        self.episode.world.close_episode()  # its render thread frees its GL context
        self.teleop.close()
        self.state.set_project(None)
        if self._owns_bridge:  # late results must not reach the widgets being deleted
            self.bridge.close()
        super().closeEvent(event)
