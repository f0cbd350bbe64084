"""The subgoal plan: a list of S1..Sn and a dialog to add or edit one (spec §2.2)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.gui.annotate._cursor import landing_gate
from app.gui.common import AnnotateState
from storage import Subgoal


def describe(sg: Subgoal) -> str:
    target = f" → {sg.target}" if sg.target else ""
    return f"{sg.label}  {sg.action} {sg.source}{target}"


class SubgoalDialog(QDialog):
    """Fields of one subgoal. Requires lists only earlier subgoals, so no cycles can be made."""

    def __init__(
        self, earlier: list[Subgoal], current: Subgoal | None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Edit {current.label}" if current else "Add subgoal")
        self.setMinimumWidth(460)
        form = QFormLayout()
        self.source = QLineEdit(current.source if current else "")
        self.source.setPlaceholderText("the one object acted on, e.g. red block")
        self.target = QLineEdit((current.target or "") if current else "")
        self.target.setPlaceholderText("at most one destination, e.g. blue plate (optional)")
        self.action = QLineEdit(current.action if current else "")
        self.action.setPlaceholderText("one high-level action, e.g. place on")
        self.end_state = QLineEdit(current.end_state if current else "")
        self.end_state.setPlaceholderText("what must be true afterwards")
        self.reason = QLineEdit(current.reason if current else "")
        self.enabling = QCheckBox("Enabling action (e.g. open before insert)")
        self.enabling.setChecked(bool(current and current.enabling))
        form.addRow("&Source", self.source)
        form.addRow("&Target", self.target)
        form.addRow("&Action", self.action)
        form.addRow("&End state", self.end_state)
        form.addRow("&Reason", self.reason)
        form.addRow("", self.enabling)
        self.requires: list[tuple[int, QCheckBox]] = []
        if earlier:
            box = QVBoxLayout()
            for s in earlier:
                cb = QCheckBox(describe(s))
                cb.setChecked(bool(current and s.id in current.requires))
                box.addWidget(cb)
                self.requires.append((s.id, cb))
            form.addRow("Requires", box)
        self.warning = QLabel("")
        self.warning.setStyleSheet("color: #c0392b;")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.warning)
        lay.addWidget(buttons)
        self.source.textChanged.connect(self._warn)
        self.target.textChanged.connect(self._warn)

    def _warn(self) -> None:
        multi = any(sep in self.source.text() for sep in (",", " and "))
        self.warning.setText(
            "A subgoal has one source: split 'A and B' into two subgoals." if multi else ""
        )

    def values(self) -> dict[str, Any]:
        return {
            "source": self.source.text(),
            "target": self.target.text() or None,
            "action": self.action.text(),
            "end_state": self.end_state.text(),
            "reason": self.reason.text(),
            "enabling": self.enabling.isChecked(),
            "requires": [sid for sid, cb in self.requires if cb.isChecked()],
        }


class SubgoalPanel(QWidget):
    """The rater's plan for the current case; selecting a subgoal moves the gate cursor to its
    first gate still to answer (:func:`landing_gate`)."""

    add_requested = Signal()
    edit_requested = Signal()
    delete_requested = Signal()

    def __init__(self, state: AnnotateState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.list = QListWidget(self)
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.list.currentItemChanged.connect(self._picked)
        # deferred: editing rebuilds this list, which must not happen inside its own handler
        self.list.itemDoubleClicked.connect(
            lambda _i: QTimer.singleShot(0, self.edit_requested.emit)
        )
        lay.addWidget(self.list)
        row = QHBoxLayout()
        for text, sig in (
            ("Add…", self.add_requested),
            ("Edit…", self.edit_requested),
            ("Delete", self.delete_requested),
        ):
            b = QPushButton(text, self)
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            b.clicked.connect(sig.emit)
            row.addWidget(b)
        lay.addLayout(row)
        state.video_changed.connect(self.refresh)
        state.data_changed.connect(self.refresh)
        state.cursor_changed.connect(self._sync_selection)

    def refresh(self) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        for sg in self.state.plan():
            item = QListWidgetItem(describe(sg))
            item.setData(Qt.ItemDataRole.UserRole, sg.id)
            item.setToolTip(sg.end_state or "")
            self.list.addItem(item)
        self.list.blockSignals(False)
        self._sync_selection()

    def _sync_selection(self) -> None:
        self.list.blockSignals(True)
        for k in range(self.list.count()):
            item = self.list.item(k)
            if item.data(Qt.ItemDataRole.UserRole) == self.state.subgoal_id:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)

    def _picked(self, item: QListWidgetItem | None) -> None:
        if item is not None:
            sid = item.data(Qt.ItemDataRole.UserRole)
            self.state.set_cursor(sid, landing_gate(self.state, sid))
