"""The gates panel enables what the core allows: early exit, the t = 0 lock, pilot mode."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pytestqt.qtbot import QtBot

from annotation import GATES_ALL, Answer, GateMode
from app.gui._main_window import MainWindow

P, F, NA = Answer.PASS, Answer.FAIL, Answer.NA


def test_panel_enables_exactly_the_gates_the_core_allows(
    qtbot: QtBot, project_dir: Path, make_window: Callable[[Path], MainWindow]
) -> None:
    w = make_window(project_dir)
    st = w.state
    assert st.project is not None and st.video is not None
    ann = st.project.annotations
    sg = ann.add_subgoal(st.video.case_id, st.rater, source="cup", action="lift")
    st.set_cursor(sg.id, 0)
    panel = w.annotate.gates

    def answer(gate: str, a: Answer | None) -> None:
        assert st.project is not None and st.video is not None
        ann.set_answer(st.video.id, st.rater, sg.id, gate, a)
        st.data_changed.emit()

    def shown() -> tuple[list[str], list[str]]:
        on = [GATES_ALL[k] for k, row in enumerate(panel.rows) if row[0].isEnabled()]
        return on, [row[2].text() for row in panel.rows]

    st.data_changed.emit()
    assert shown()[0] == ["T1", "P1"]  # Physics may start while the Task walk is open
    for gate in ("T1", "T2", "T3", "P1", "P2"):
        answer(gate, P)
    assert shown()[0] == ["T1", "T2", "T3", "P1", "P2", "P3"]
    answer("T2", F)  # T3 is not reached any more: its answer is gone, its row says so
    on, labels = shown()
    assert on == ["T1", "T2", "P1", "P2", "P3"] and labels[2] == "not reached"
    answer("T1", F)  # t = 0: Physics locked
    on, labels = shown()
    assert on == ["T1"] and labels[3:] == ["unattempted"] * 4
    # keyboard on a locked gate records nothing, and says why in the status bar
    messages: list[str] = []
    w.annotate.message.connect(messages.append)
    st.set_cursor(sg.id, 4)
    w.annotate.answer(P)
    assert messages == ["P2 is not reached for this subgoal"]
    assert ann.answers(st.video.id, st.rater)[sg.id] == {"T1": F}

    # pilot mode: every Task gate stays open after a "no", Physics stays locked at t = 0
    ann.set_gate_mode(GateMode.RECORD_ALL)
    st.data_changed.emit()
    assert shown()[0] == ["T1", "T2", "T3"]
    answer("T1", P)
    answer("P1", NA)
    assert shown()[0] == ["T1", "T2", "T3", "P1"]
