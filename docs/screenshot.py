"""Regenerate docs/images/annotate.png: the annotate workspace on the demo project.

    xvfb-run -s "-screen 0 1600x1000x24" .venv/bin/python docs/screenshot.py demo-project

Adds a short worked example (three subgoals, a few answers and evidence marks) for the rater
``docs`` on the teleport video of ``stack_blocks``, then saves a 1600×960 grab of the window.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from annotation import Answer
from app.gui._main_window import MainWindow
from storage import load_settings

P = Answer.PASS


def main() -> None:
    project = Path(sys.argv[1])
    out = Path(__file__).resolve().parent / "images" / "annotate.png"
    app = QApplication(sys.argv)
    settings = load_settings().model_copy(update={"rater": "docs"})
    w = MainWindow(settings)
    w.resize(1600, 960)
    w.show()
    w.open_project(project)
    st = w.state
    assert st.project is not None

    def is_teleport(video_id: str) -> bool:
        assert st.project is not None
        truth = st.project.video_truth(video_id) or {}
        return any(d["kind"] == "teleport" for d in truth.get("defects", []))

    video = next(v for v in st.project.videos("stack_blocks") if is_teleport(v.id))
    w.annotate.open_video(video)
    a = st.project.annotations
    if not a.plan(video.case_id, st.rater):
        s1 = a.add_subgoal(
            video.case_id,
            st.rater,
            source="red block",
            target="blue block",
            action="stack on",
            end_state="red block rests on the blue block",
        )
        s2 = a.add_subgoal(
            video.case_id,
            st.rater,
            source="green block",
            target="red block",
            action="stack on",
            requires=[s1.id],
        )
        a.add_subgoal(video.case_id, st.rater, source="yellow block", target="box", action="put in")
        for gate in ("T1", "T2", "T3", "P1", "P2", "P3", "P4"):
            a.set_answer(video.id, st.rater, s1.id, gate, P)
        a.add_evidence(
            video.id,
            st.rater,
            start_frame=10,
            end_frame=55,
            subgoal_id=s1.id,
            gate="T2",
            note="carried and set down",
        )
        for gate in ("T1", "T2", "T3"):
            a.set_answer(video.id, st.rater, s2.id, gate, P)
        a.set_answer(video.id, st.rater, s2.id, "P1", Answer.FAIL)
        a.add_evidence(
            video.id,
            st.rater,
            start_frame=88,
            end_frame=92,
            subgoal_id=s2.id,
            gate="P1",
            box=(0.40, 0.25, 0.22, 0.30),
            note="block jumps mid-carry",
        )
    st.data_changed.emit()
    plan = st.plan()
    st.set_cursor(plan[1].id, 3)
    st.seek(90)
    st.set_range((88, 92))
    QTimer.singleShot(2500, lambda: (w.grab().save(str(out)), app.quit()))
    app.exec()
    print(out)


if __name__ == "__main__":
    main()
