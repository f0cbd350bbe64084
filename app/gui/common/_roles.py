"""Roles of a window session: *rater* or *lead*, so blinding holds in a shared project.

A project in blind mode (``storage.Blinding``, turned on by the lead with a passphrase) opens in
the rater view: the Annotate workspace only. Results, the judge trace, the jobs list and the
episodes (which name generators, judges and their scores) are out of reach: their workspaces'
commands are disabled, their docks cannot be shown (not from View, not from a loaded layout),
and the panels that hold figures blank themselves (:class:`Blindable`). *Results → Unlock as
Lead…* asks the passphrase, which the core checks, and unlocks this window until the project is
opened again. Without blind mode everyone is the lead, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal, Protocol, runtime_checkable

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDockWidget,
    QInputDialog,
    QLabel,
    QLineEdit,
    QStatusBar,
    QWidget,
)

from annotation import UserError
from app.gui.common._state import AnnotateState

Role = Literal["rater", "lead"]

#: docks whose content names generators, judges or their scores
HIDDEN_DOCKS = ("Results", "Judge trace", "Jobs", "Episodes")
#: commands a rater cannot use: every workspace but Annotate, the judge's, and the export
#: (its rows carry model, seed and role)
LEAD_COMMANDS = (
    "view.judge", "view.results", "view.episode", "view.teleop", "judge.run", "jobs.workers",
    "jobs.show", "project.export", "results.lock", "results.blind",
)  # fmt: skip


@runtime_checkable
class Blindable(Protocol):
    """A panel that shows figures a rater must not see, and can drop and refuse them."""

    def set_blind(self, blind: bool) -> None: ...


class RoleWindow(Protocol):
    """What the roles need of the main window."""

    state: AnnotateState
    docks: dict[str, QDockWidget]
    actions_by_id: dict[str, QAction]
    workspace: str

    def set_workspace(self, name: str) -> None: ...

    def statusBar(self) -> QStatusBar: ...


class Roles(QObject):
    """The window's role, applied to its docks, commands and panels on every project open."""

    changed = Signal(str)

    def __init__(self, window: RoleWindow, blindable: Iterable[Blindable] = ()) -> None:
        super().__init__(window if isinstance(window, QObject) else None)  # dies with it
        self.window = window
        self.blindable = list(blindable)
        self.role: Role = "lead"
        self.label = QLabel("")
        self.label.setToolTip(
            "Blind mode: raters see no results, judge scores or generators in this project"
        )
        self.label.hide()
        window.statusBar().addPermanentWidget(self.label)
        self._project: object = None  # the open project the role was decided for
        for title in HIDDEN_DOCKS:
            dock = window.docks.get(title)
            if dock is not None:  # a dock shown by a layout or a workspace is hidden again
                dock.visibilityChanged.connect(lambda shown, d=dock: self._shown(d, shown))
        window.state.project_changed.connect(self.project_opened)
        # the commands are made after the roles (their handlers are ours): set them once made
        QTimer.singleShot(0, self, lambda: self.apply(self.role))

    def handlers(self) -> dict[str, Callable[[], object]]:
        return {
            "results.unlock": self.unlock_dialog,
            "results.lock": self.lock,
            "results.blind": self.blind_mode_dialog,
        }

    # ---- role --------------------------------------------------------------------------
    def blind(self) -> bool:
        project = self.window.state.project
        return project is not None and project.blinding.enabled

    def project_opened(self) -> None:
        """A project opens in the rater view while it is in blind mode, whoever unlocked the
        previous one. (``project_changed`` also tells lists to re-read after an import: the
        same project keeps its role.)"""
        project = self.window.state.project
        if project is self._project:
            return
        self._project = project
        self.apply("rater" if self.blind() else "lead")

    def apply(self, role: Role) -> None:
        w = self.window
        self.role = role
        rater = role == "rater"
        if rater and w.workspace != "annotate":
            w.set_workspace("annotate")
        for title in HIDDEN_DOCKS:
            dock = w.docks.get(title)
            if dock is not None:
                dock.toggleViewAction().setEnabled(not rater)
                if rater:
                    dock.hide()
        for panel in self.blindable:
            panel.set_blind(rater)
        for cid in LEAD_COMMANDS:
            act = w.actions_by_id.get(cid)
            if act is not None:
                act.setEnabled(not rater)
        blind = self.blind()
        if "results.unlock" in w.actions_by_id:
            w.actions_by_id["results.unlock"].setEnabled(rater)
            w.actions_by_id["results.lock"].setEnabled(not rater and blind)
        self.label.setText("Rater view (blind mode)" if rater else "Lead (unlocked)")
        self.label.setVisible(blind)
        self.changed.emit(role)

    def _shown(self, dock: QDockWidget, shown: bool) -> None:
        if shown and self.role == "rater":  # hidden after Qt has finished the restore or raise
            QTimer.singleShot(0, lambda: self._rehide(dock))

    def _rehide(self, dock: QDockWidget) -> None:
        if self.role == "rater":
            dock.hide()

    # ---- commands ----------------------------------------------------------------------
    def _ask(self, title: str, prompt: str) -> str | None:
        parent = self.window if isinstance(self.window, QWidget) else None
        text, ok = QInputDialog.getText(parent, title, prompt, QLineEdit.EchoMode.Password)
        return text if ok else None

    def _say(self, message: str) -> None:
        self.window.statusBar().showMessage(message, 8000)

    def unlock_dialog(self) -> None:
        project = self.window.state.project
        if project is None or self.role == "lead":
            return
        passphrase = self._ask("Unlock as lead", "The lead's passphrase:")
        if passphrase is None:
            return
        if not project.blinding.unlock(passphrase):
            self._say("Wrong passphrase: this window stays in the rater view")
            return
        self.apply("lead")
        self._say("Unlocked: results, judge scores and generators are shown in this window")

    def lock(self) -> None:
        if self.blind():
            self.apply("rater")
            self._say("Locked: the rater view until Results → Unlock as Lead…")

    def blind_mode_dialog(self) -> None:
        """Turn blind mode on (the passphrase twice) or off (the passphrase); lead only."""
        project = self.window.state.project
        if project is None or self.role == "rater":
            return
        try:
            if project.blinding.enabled:
                passphrase = self._ask("Turn blind mode off", "The lead's passphrase:")
                if passphrase is not None:
                    project.blinding.disable(passphrase)
                    self.apply("lead")
                    self._say("Blind mode off: everyone who opens this project sees results")
                return
            first = self._ask(
                "Turn blind mode on",
                "A passphrase for the lead (8 characters or more).\n"
                "Raters then open this project in the rater view.",
            )
            if first is None:
                return
            again = self._ask("Turn blind mode on", "The same passphrase again:")
            if again is None:
                return
            if again != first:
                self._say("The passphrases differ: blind mode stays off")
                return
            project.blinding.enable(first)
        except UserError as e:  # a short or wrong passphrase: said in place
            self._say(str(e))
            return
        self.apply("lead")  # this window stays unlocked; the next one opens locked
        self._say("Blind mode on: the project opens in the rater view until the lead unlocks it")
