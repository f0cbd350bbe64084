"""What each participant was shown: the view or prompt sent at the last query at or before the
playhead, and what came back — the information boundary, as it was, for the assistant and,
separately, the user (or an agent's model calls)."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from storage import ExchangeRecord

MAX_TEXT = 300


class InformationView(QTreeWidget):
    """One party's exchange at the playhead, as a tree of what was sent and received."""

    def __init__(self, party: str) -> None:
        super().__init__()
        self.party = party
        self.setHeaderLabels(["field", "value"])
        self.setColumnWidth(0, 140)
        self.shown: ExchangeRecord | None = None

    def show_exchange(self, x: ExchangeRecord | None, tick: int) -> None:
        if x is self.shown and x is not None:
            return
        self.shown = x
        self.clear()
        if x is None:
            QTreeWidgetItem(self, [f"nothing sent to the {self.party} by tick {tick}", ""])
            return
        due = f", reply due t{x.due_tick}" if x.due_tick is not None else ""
        took = f", took {x.latency_s:.2f} s" if x.latency_s else ""
        head = QTreeWidgetItem(self, [f"sent at t{x.tick}", f"to the {self.party}{due}{took}"])
        head.setExpanded(True)
        sent = QTreeWidgetItem(self, ["sent", ""])
        _fill(sent, json.loads(x.sent_json))
        sent.setExpanded(True)
        got = QTreeWidgetItem(self, ["received", "" if x.received_json else "(in flight)"])
        if x.received_json:
            _fill(got, json.loads(x.received_json))
        got.setExpanded(True)


def _fill(parent: QTreeWidgetItem, value: Any) -> None:
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, v in items:
        if isinstance(v, dict | list) and v:
            node = QTreeWidgetItem(parent, [str(key), f"{len(v)} item(s)"])
            _fill(node, v)
        else:
            text = json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v
            node = QTreeWidgetItem(parent, [str(key), text[:MAX_TEXT]])
            if len(text) > MAX_TEXT:
                node.setToolTip(1, text[:4000])
