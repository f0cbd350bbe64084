"""Live T, P, S and coverage for the current video and rater.

A score the rubric leaves undefined shows "—" and says why underneath, in the scoring's own
terms (:func:`why_undefined`): only complete subgoals count, an unresolved gate withholds its
axis, and P needs at least one physics window scored with a number.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from annotation import TASK_GATES, Mark, SubgoalResult, score_subgoals
from app.gui.common import AnnotateState


def _fmt(v: float | None) -> str:
    return "—" if v is None else f"{v:.1f}"


_PHYSICS_MARK: dict[object, str] = {Mark.NA: "N/A", Mark.UNATTEMPTED: "unattempted"}


def _next_gate(r: SubgoalResult) -> str:
    if r.task.next_gate is not None:
        return TASK_GATES[r.task.next_gate]
    return f"P{(r.physics.next_gate or 0) + 1}"


def why_undefined(
    results: Sequence[SubgoalResult], labels: Sequence[str], t: float | None, p: float | None
) -> dict[str, str]:
    """Why each of T, P and S is undefined (only those that are), given the live T and P."""
    pairs = list(zip(labels, results, strict=True))
    done = [(label, r) for label, r in pairs if r.complete]
    if not done:
        label, first = next((lab, r) for lab, r in pairs if not r.complete)
        why = f"no subgoal complete yet: gate {_next_gate(first)} of {label} not answered"
        return {"T": why, "P": why, "S": why}
    out: dict[str, str] = {}
    if t is None:
        which = [label for label, r in done if r.task.outcome is Mark.UNRESOLVED]
        out["T"] = f"Task answered unresolved in {', '.join(which)}"
    if p is None:
        unresolved = [label for label, r in done if r.physics.outcome is Mark.UNRESOLVED]
        # else every complete window is N/A or unattempted (t = 0): none has a number
        windows = ", ".join(f"{label} {_PHYSICS_MARK.get(r.physics.outcome)}" for label, r in done)
        out["P"] = (
            f"Physics answered unresolved in {', '.join(unresolved)}"
            if unresolved
            else f"no physics window scored with a number ({windows})"
        )
    if "T" in out or "P" in out:
        out["S"] = f"needs both T and P ({'T' if 'T' in out else 'P'} undefined)"
    return out


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
        self.reason = QLabel(self)  # why a score is undefined ("—"), in words
        self.reason.setWordWrap(True)
        self.reason.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.reason.setStyleSheet("color: palette(mid); font-size: 11px;")
        grid.addWidget(self.reason, 3, 0, 1, 4)
        state.data_changed.connect(self.refresh)
        state.video_changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        st = self.state
        for v in self.values.values():
            v.setToolTip("")
        self.reason.setText("")
        if st.project is None or st.video is None:
            for v in self.values.values():
                v.setText("—")
            self.note.setText("")
            return
        results = st.project.annotations.results(st.video.id, st.video.case_id, st.rater)
        live = score_subgoals(results)  # what annotations.live_score computes, from one read
        sc = live.score
        if live.n_subgoals == 0:
            for v in self.values.values():
                v.setText("—")
            self.note.setText("no subgoals yet: add the plan for this goal")
            return
        self.values["S"].setText(_fmt(sc.s))
        self.values["T"].setText(_fmt(sc.t100))
        self.values["P"].setText(_fmt(sc.p100))
        self._explain(results, sc.t100, sc.p100)
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

    def _explain(self, results: list[SubgoalResult], t: float | None, p: float | None) -> None:
        """Each undefined score's reason as its tooltip, and all of them in a line below:
        "S, T, P — (no subgoal complete yet: gate T1 of S1 not answered)"."""
        labels = [sg.label for sg in self.state.plan()]
        why = why_undefined(results, labels, t, p)
        for key, text in why.items():
            self.values[key].setToolTip(text)
        lines: dict[str, list[str]] = {}
        for key in ("S", "T", "P"):
            if key in why:
                lines.setdefault(why[key], []).append(key)
        self.reason.setText("\n".join(f"{', '.join(k)} — ({t})" for t, k in lines.items()))
