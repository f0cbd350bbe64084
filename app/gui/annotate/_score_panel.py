"""Live T, P, S and coverage for the current video and rater."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from app.gui.common import AnnotateState


def _fmt(v: float | None) -> str:
    return "undefined" if v is None else f"{v:.1f}"


class ScorePanel(QWidget):
    """Four figures and a note saying whether they are final."""

    def __init__(self, state: AnnotateState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        grid = QGridLayout(self)
        grid.setContentsMargins(4, 4, 4, 4)
        self.values: dict[str, QLabel] = {}
        for c, (key, title) in enumerate(
            (("S", "Final S"), ("T", "Task T"), ("P", "Physics P"), ("C", "Coverage"))
        ):
            head = QLabel(title, self)
            head.setAlignment(Qt.AlignmentFlag.AlignCenter)
            head.setStyleSheet("color: palette(mid); font-size: 11px;")
            val = QLabel("—", self)
            val.setAlignment(Qt.AlignmentFlag.AlignCenter)
            f = val.font()
            f.setPointSize(f.pointSize() + (8 if key == "S" else 4))
            f.setBold(True)
            val.setFont(f)
            grid.addWidget(head, 0, c)
            grid.addWidget(val, 1, c)
            self.values[key] = val
        self.note = QLabel(self)
        self.note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.note.setStyleSheet("color: palette(mid);")
        grid.addWidget(self.note, 2, 0, 1, 4)
        state.data_changed.connect(self.refresh)
        state.video_changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        st = self.state
        if st.project is None or st.video is None:
            for v in self.values.values():
                v.setText("—")
            self.note.setText("")
            return
        live = st.project.annotations.live_score(st.video.id, st.video.case_id, st.rater)
        sc = live.score
        if live.n_subgoals == 0:
            for v in self.values.values():
                v.setText("—")
            self.note.setText("no subgoals yet: add the plan for this goal")
            return
        self.values["S"].setText(_fmt(sc.s))
        self.values["T"].setText(_fmt(sc.t100))
        self.values["P"].setText(_fmt(sc.p100))
        cov = "—" if sc.coverage is None else f"{sc.n_scored_windows}/{sc.n_subgoals}"
        self.values["C"].setText(cov)
        if live.n_subgoals == 0:
            self.note.setText("no subgoals yet")
        elif live.provisional:
            self.note.setText(
                f"provisional: {live.n_complete} of {live.n_subgoals} subgoals complete"
            )
        else:
            self.note.setText("complete")
