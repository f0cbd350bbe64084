"""Help: the shortcuts overlay, the shortcut editor and the about box."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QKeySequenceEdit,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.gui.common._commands import COMMANDS, conflicts


def _keys_text(keys: tuple[str, ...]) -> str:
    return "  or  ".join(
        QKeySequence(k).toString(QKeySequence.SequenceFormat.NativeText) for k in keys
    )


class ShortcutOverlay(QDialog):
    """Every command with its keys, grouped by menu. Any key closes it."""

    def __init__(self, keys: Mapping[str, tuple[str, ...]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.resize(760, 620)
        view = QTextBrowser(self)
        html = ["<table width='100%' cellspacing='8'><tr>"]
        menus: dict[str, list[str]] = {}
        for c in COMMANDS:
            if keys.get(c.id):
                title = c.title.replace("&", "").rstrip("…")
                menus.setdefault(c.menu, []).append(
                    f"<tr><td><code>{_keys_text(keys[c.id])}</code></td><td>{title}</td></tr>"
                )
        cols = [["Play", "Edit"], ["Annotate", "View"], ["File", "Judge", "Help"]]
        for col in cols:
            html.append("<td valign='top'>")
            for menu in col:
                if menu in menus:
                    html.append(f"<h3>{menu}</h3><table>{''.join(menus[menu])}</table>")
            html.append("</td>")
        html.append("</tr></table><p style='color:gray'>Edit keys in Help → Edit Shortcuts…</p>")
        view.setHtml("".join(html))
        lay = QVBoxLayout(self)
        lay.addWidget(view)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        self.accept()


class ShortcutEditor(QDialog):
    """A table of commands; click a key cell and press the new key. Conflicts are refused."""

    def __init__(self, keys: Mapping[str, tuple[str, ...]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Edit shortcuts")
        self.resize(620, 640)
        self.keys = dict(keys)
        self.table = QTableWidget(len(COMMANDS), 3, self)
        self.table.setHorizontalHeaderLabels(["Command", "Menu", "Shortcut"])
        self.editors: dict[str, QKeySequenceEdit] = {}
        for r, c in enumerate(COMMANDS):
            self.table.setItem(r, 0, QTableWidgetItem(c.title.replace("&", "")))
            self.table.setItem(r, 1, QTableWidgetItem(c.menu))
            ed = QKeySequenceEdit(
                QKeySequence(self.keys[c.id][0]) if self.keys[c.id] else QKeySequence()
            )
            ed.keySequenceChanged.connect(lambda _s, cid=c.id: self._changed(cid))
            self.table.setCellWidget(r, 2, ed)
            self.editors[c.id] = ed
        self.table.resizeColumnsToContents()
        self.status = QLabel("", self)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Cancel
            | QDialogButtonBox.StandardButton.RestoreDefaults
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        restore = self.buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults)
        restore.clicked.connect(self._restore)
        lay = QVBoxLayout(self)
        lay.addWidget(self.table)
        lay.addWidget(self.status)
        lay.addWidget(self.buttons)

    def _changed(self, cid: str) -> None:
        seq = self.editors[cid].keySequence().toString(QKeySequence.SequenceFormat.PortableText)
        rest = tuple(self.keys[cid][1:]) if seq else ()
        self.keys[cid] = ((seq,) if seq else ()) + rest
        clashes = conflicts(self.keys)
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(not clashes)
        self.status.setText(
            ""
            if not clashes
            else f"'{clashes[0][0]}' is used by {clashes[0][1]} and {clashes[0][2]}"
        )
        self.status.setStyleSheet("color: #c62828;" if clashes else "")

    def _restore(self) -> None:
        for c in COMMANDS:
            self.keys[c.id] = c.keys
            self.editors[c.id].blockSignals(True)
            self.editors[c.id].setKeySequence(QKeySequence(c.keys[0]) if c.keys else QKeySequence())
            self.editors[c.id].blockSignals(False)
        self._changed(COMMANDS[0].id)

    def overrides(self) -> dict[str, list[str]]:
        defaults = {c.id: c.keys for c in COMMANDS}
        return {cid: list(k) for cid, k in self.keys.items() if tuple(k) != defaults[cid]}


ABOUT = """<h2>Rollout Workbench</h2>
<p>Judge and debug embodied AI rollouts, offline.</p>
<p>Annotate generated egocentric videos with the gated Task (T1–T3) and Physics (P1–P4)
rubric; every decision is saved the moment you make it.</p>
<p style='color:gray'>Version {version}</p>"""


def about_text() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        v = version("rollout-workbench")
    except PackageNotFoundError:
        v = "development"
    return ABOUT.format(version=v)


__all__ = ["ShortcutEditor", "ShortcutOverlay", "about_text"]
