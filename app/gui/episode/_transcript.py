"""The episode's conversation, one row per turn, following the playhead; a click seeks."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QListWidget, QListWidgetItem

from storage import TurnRecord

SPEAKER = {"user": "#1f4e8c", "assistant": "#2d6a2d"}


class Transcript(QListWidget):
    seek = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self.setWordWrap(True)
        self.setAlternatingRowColors(True)
        self.turns: list[TurnRecord] = []
        self.itemClicked.connect(lambda it: self.seek.emit(int(it.data(Qt.ItemDataRole.UserRole))))

    def show_turns(self, turns: list[TurnRecord]) -> None:
        self.clear()
        self.turns = [t for t in turns if t.text or t.flag]
        for t in self.turns:
            flag = (
                f"  ⚑ {t.flag}" + (f" ({t.flag_target})" if t.flag_target else "") if t.flag else ""
            )
            move = f" [{t.move}]" if t.move and t.move not in ("continue", "say") else ""
            it = QListWidgetItem(f"t{t.tick}  {t.speaker}{move}: {t.text}{flag}")
            it.setData(Qt.ItemDataRole.UserRole, t.tick)
            it.setForeground(QBrush(QColor(SPEAKER.get(t.speaker, "#333333"))))
            self.addItem(it)
        if not self.turns:
            self.addItem(QListWidgetItem("(no dialogue in this episode)"))

    def follow(self, tick: int) -> int | None:
        """Select the last turn at or before ``tick``; returns its row."""
        row = None
        for k, t in enumerate(self.turns):
            if t.tick <= tick:
                row = k
            else:
                break
        self.blockSignals(True)
        if row is None:
            self.clearSelection()
        else:
            self.setCurrentRow(row)
            self.scrollToItem(self.item(row))
        self.blockSignals(False)
        return row
