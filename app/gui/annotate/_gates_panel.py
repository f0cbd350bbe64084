"""Gate entry for the current subgoal: T1→T3 then P1→P4, early exit, keyboard first.

Which rows are enabled is the core's rule (:func:`annotation.enabled_gates`, the same one storage
enforces): rows after a failure are disabled and read "not reached"; Physics is locked
"unattempted" when the Task level is 0. The current gate is highlighted, and its question with
pass/fail examples is shown underneath, in the rubric's own words.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from annotation import (
    GATES_ALL,
    Answer,
    Mark,
    Rubric,
    SubgoalResult,
    enabled_gates,
    evaluate_subgoal,
)
from app.gui.common import AnnotateState

ANSWER_TEXT = {
    Answer.PASS: "yes",
    Answer.FAIL: "no",
    Answer.NA: "N/A",
    Answer.UNRESOLVED: "unresolved",
}
ANSWER_COLOR = {
    Answer.PASS: "#2e7d32",
    Answer.FAIL: "#c62828",
    Answer.NA: "#6d6d6d",
    Answer.UNRESOLVED: "#ef6c00",
}


def level_text(outcome: int | Mark | None, axis_max: int) -> str:
    if outcome is None:
        return "pending"
    if isinstance(outcome, Mark):
        return {Mark.NA: "N/A", Mark.UNATTEMPTED: "unattempted", Mark.UNRESOLVED: "unresolved"}[
            outcome
        ]
    return f"{outcome}/{axis_max}"


class GatePanel(QWidget):
    """Seven gate rows plus inline rubric help for the current gate."""

    answer_clicked = Signal(int, object)  # gate index, Answer
    gate_clicked = Signal(int)

    def __init__(self, state: AnnotateState, rubric: Rubric, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.rubric = rubric
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.header = QLabel(self)
        self.header.setWordWrap(True)
        self.header.setStyleSheet("font-weight: bold;")
        lay.addWidget(self.header)
        self.rows: list[tuple[QFrame, QLabel, QLabel, dict[Answer, QPushButton]]] = []
        self.axis_labels: dict[str, QLabel] = {}
        for axis, gates in (("Task", GATES_ALL[:3]), ("Physics", GATES_ALL[3:])):
            box = QGroupBox(axis, self)
            grid = QGridLayout(box)
            grid.setContentsMargins(4, 4, 4, 4)
            grid.setVerticalSpacing(2)
            level = QLabel(box)
            level.setAlignment(Qt.AlignmentFlag.AlignRight)
            grid.addWidget(level, 0, 0, 1, 3)
            self.axis_labels[axis] = level
            for r, gid in enumerate(gates, start=1):
                self._add_row(grid, r, gid)
            lay.addWidget(box)
        self.help = QTextBrowser(self)
        self.help.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.help.setMinimumHeight(120)
        lay.addWidget(self.help, 1)
        state.cursor_changed.connect(self.refresh)
        state.data_changed.connect(self.refresh)
        state.video_changed.connect(self.refresh)

    def _add_row(self, grid: QGridLayout, r: int, gid: str) -> None:
        gate = self.rubric.gate(gid)
        index = GATES_ALL.index(gid)
        frame = QFrame(self)
        frame.setObjectName("gaterow")
        inner = QGridLayout(frame)
        inner.setContentsMargins(4, 2, 4, 2)
        name = QLabel(f"<b>{gid}</b> {gate.name}", frame)
        name.setToolTip(gate.question)
        state_label = QLabel(frame)
        state_label.setMinimumWidth(84)
        inner.addWidget(name, 0, 0)
        inner.addWidget(state_label, 0, 1)
        buttons: dict[Answer, QPushButton] = {}
        choices = [Answer.PASS, Answer.FAIL, Answer.UNRESOLVED]
        if gate.allows_na:
            choices.insert(2, Answer.NA)
        keys = {Answer.PASS: "Y", Answer.FAIL: "N", Answer.NA: "A", Answer.UNRESOLVED: "U"}
        for c, ans in enumerate(choices):
            b = QPushButton(ANSWER_TEXT[ans] if ans is not Answer.UNRESOLVED else "?", frame)
            b.setToolTip(f"{ANSWER_TEXT[ans]} ({keys[ans]})")
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            b.setFixedWidth(44)
            b.setCheckable(True)
            b.clicked.connect(lambda _c=False, i=index, a=ans: self.answer_clicked.emit(i, a))
            inner.addWidget(b, 0, 2 + c)
            buttons[ans] = b
        frame.installEventFilter(self)
        frame.setProperty("gate_index", index)
        grid.addWidget(frame, r, 0, 1, 3)
        self.rows.append((frame, name, state_label, buttons))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """A click anywhere on a gate row moves the cursor to that gate."""
        if (
            event.type() == QEvent.Type.MouseButtonPress
            and watched.property("gate_index") is not None
        ):
            self.gate_clicked.emit(int(watched.property("gate_index")))
        return super().eventFilter(watched, event)

    def current_result(self) -> tuple[dict[str, Answer], SubgoalResult] | None:
        st = self.state
        if st.project is None or st.video is None or st.subgoal_id is None:
            return None
        answers = st.project.annotations.answers(st.video.id, st.rater).get(st.subgoal_id, {})
        return answers, evaluate_subgoal(answers)

    def enabled_gates(self, answers: dict[str, Answer] | None = None) -> list[int]:
        """Indices of gates that can be answered now (reached, not locked), as the core says;
        ``answers`` are the subgoal's, when the caller has read them already."""
        if answers is None:
            cur = self.current_result()
            if cur is None:
                return []
            answers = cur[0]
        if self.state.project is None:
            return []
        mode = self.state.project.annotations.gate_mode()
        return [GATES_ALL.index(g) for g in enabled_gates(answers, mode=mode)]

    def refresh(self) -> None:
        st = self.state
        sg = st.current_subgoal()
        cur = self.current_result()
        if sg is None or cur is None:
            self.header.setText("No subgoal yet: add one (Ctrl+Shift+N) to start scoring.")
            for frame, _n, label, buttons in self.rows:
                frame.setEnabled(False)
                label.setText("")
                for b in buttons.values():
                    b.setChecked(False)
            for lab in self.axis_labels.values():
                lab.setText("")
            self.help.setHtml(self._help_html(st.gate_index))
            return
        answers, res = cur
        target = f" → {sg.target}" if sg.target else ""
        self.header.setText(f"{sg.label}: {sg.action} {sg.source}{target}")
        self.axis_labels["Task"].setText(f"t = {level_text(res.task.outcome, 3)}")
        self.axis_labels["Physics"].setText(f"p = {level_text(res.physics.outcome, 4)}")
        enabled = set(self.enabled_gates(answers))
        for k, (frame, _name, label, buttons) in enumerate(self.rows):
            gid = GATES_ALL[k]
            ans = answers.get(gid)
            on = k in enabled
            frame.setEnabled(on)
            locked = k >= 3 and res.physics.outcome is Mark.UNATTEMPTED
            if locked:
                label.setText("unattempted")
            elif not on:
                label.setText("not reached")
            elif ans is None:
                label.setText("—")
            else:
                label.setText(
                    f"<span style='color:{ANSWER_COLOR[ans]}'><b>{ANSWER_TEXT[ans]}</b></span>"
                )
            for a, b in buttons.items():
                b.setChecked(on and ans is a)
            current = k == st.gate_index
            frame.setStyleSheet(
                "QFrame#gaterow { background: palette(highlight); border-radius: 3px; }"
                "QFrame#gaterow QLabel { color: palette(highlighted-text); }"
                if current
                else ""
            )
        self.help.setHtml(self._help_html(st.gate_index))

    def _help_html(self, k: int) -> str:
        gate = self.rubric.gate(GATES_ALL[k])
        axis = self.rubric.axis(self.rubric.axes[0].axis if k < 3 else self.rubric.axes[1].axis)
        ok = "".join(f"<li>{e}</li>" for e in gate.pass_examples)
        bad = "".join(f"<li>{e}</li>" for e in gate.fail_examples)
        na = f"<p><i>{gate.na_hint}</i></p>" if gate.na_hint else ""
        return (
            f"<p><b>{gate.id} {gate.name}.</b> {gate.question}</p>"
            f"<p style='color:#2e7d32'><b>Yes, e.g.</b></p><ul>{ok}</ul>"
            f"<p style='color:#c62828'><b>No, e.g.</b></p><ul>{bad}</ul>{na}"
            f"<p style='color:gray'>{axis.tolerance}</p>"
        )
