"""The state at the playhead: the scene graph as a tree, what changed at this tick, and the
contract checklist (each goal condition, and the tick it became true)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from sim.review import mismatches
from sim.world import SceneGraph

OK, NOT = QColor("#27ae60"), QColor("#c0392b")


class Inspector(QTreeWidget):
    def __init__(self) -> None:
        super().__init__()
        self.setHeaderLabels(["what", "value"])
        self.setColumnWidth(0, 170)
        self.tick = -1

    def show_state(
        self, tick: int, graph: SceneGraph, diff: dict[str, Any],
        contract: list[tuple[str, bool, int | None]], belief: SceneGraph | None = None,
    ) -> None:  # fmt: skip
        self.tick = tick
        self.clear()
        if belief is not None:
            wrong = mismatches(graph, belief)
            top = QTreeWidgetItem(self, ["world vs belief",
                                         f"{len(wrong)} mismatch(es) at tick {tick}" if wrong
                                         else f"the belief of t{belief.tick} matches"])  # fmt: skip
            top.setForeground(1, QBrush(NOT if wrong else OK))
            for m in wrong:
                row = QTreeWidgetItem(top, [f"{m.obj} · {m.what}",
                                            f"world: {m.world}   belief: {m.belief}"])  # fmt: skip
                row.setForeground(1, QBrush(NOT))
            top.setExpanded(True)
        goal = QTreeWidgetItem(self, ["contract", f"{sum(c[1] for c in contract)}/{len(contract)}"])
        for text, holds, since in contract:
            row = QTreeWidgetItem(goal, [text, f"true since t{since}" if holds else "not yet"])
            row.setForeground(1, QBrush(OK if holds else NOT))
        changed = QTreeWidgetItem(self, ["changed at this tick", _diff_summary(diff)])
        for key in ("added", "removed"):
            for r in diff.get(key, ()):
                QTreeWidgetItem(changed, [key, " ".join(str(x) for x in r)])
        for obj, attrs in diff.get("attrs", {}).items():
            for name, (before, after) in attrs.items():
                QTreeWidgetItem(changed, [f"{obj}.{name}", f"{before} → {after}"])
        held = graph.held()
        scene = QTreeWidgetItem(
            self, ["scene graph", f"as of tick {graph.tick}, holding {held or '—'}"]
        )
        rels: dict[str, list[str]] = {}
        for kind, a, b in sorted(graph.relations):
            rels.setdefault(a, []).append(f"{kind} {b}")
        for k in sorted(graph.nodes):
            node = graph.nodes[k]
            where = ", ".join(rels.get(k, [])) or "—"
            item = QTreeWidgetItem(scene, [k, where + ("" if node.visible else " (hidden)")])
            for name, value in sorted(node.attrs.items()):
                QTreeWidgetItem(item, [name, str(value)])
        for top in (goal, changed, scene):
            top.setExpanded(True)

    def find_row(self, text: str) -> QTreeWidgetItem | None:
        hits = self.findItems(text, Qt.MatchFlag.MatchRecursive)
        return hits[0] if hits else None


def _diff_summary(diff: dict[str, Any]) -> str:
    n = sum(len(diff.get(k, ())) for k in ("added", "removed")) + sum(
        len(v) for v in diff.get("attrs", {}).values()
    )
    return "nothing" if n == 0 else f"{n} change(s)"
