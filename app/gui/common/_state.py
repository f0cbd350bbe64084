"""UI state of the annotate workspace, as one evented model (psygnal).

Widgets read from it and call its setters; they never hold authoritative state of their own.
Stored data (subgoals, answers, evidence) lives in the project; ``data_changed`` tells views to
re-read it after any edit, undo or redo.
"""

from __future__ import annotations

from psygnal import Signal

from storage import Project, Subgoal, Video


class AnnotateState:
    """Current project, rater, video, frame, range, subgoal and gate."""

    project_changed = Signal()
    video_changed = Signal()
    frame_changed = Signal(int)
    range_changed = Signal()
    cursor_changed = Signal()  # current subgoal or gate
    data_changed = Signal()  # stored annotations changed (edit, undo, redo, import)

    def __init__(self, rater: str) -> None:
        self.project: Project | None = None
        self.rater = rater
        self.video: Video | None = None
        self.frame = 0
        self.frame_count = 0
        self.range: tuple[int, int] | None = None
        self.subgoal_id: int | None = None
        self.gate_index = 0  # 0..6 over T1 T2 T3 P1 P2 P3 P4

    # ---- setters that emit -------------------------------------------------------------
    def set_project(self, project: Project | None) -> None:
        if self.project is not None and self.project is not project:
            self.project.close()
        self.project = project
        self.video = None
        self.subgoal_id = None
        self.project_changed.emit()

    def set_video(self, video: Video | None, frame_count: int) -> None:
        self.video = video
        self.frame_count = frame_count
        self.frame = 0
        self.range = None
        plan = self.plan()
        self.subgoal_id = plan[0].id if plan else None
        self.gate_index = 0
        self.video_changed.emit()
        self.frame_changed.emit(0)
        self.range_changed.emit()
        self.cursor_changed.emit()

    def seek(self, frame: int) -> None:
        frame = max(0, min(frame, self.frame_count - 1)) if self.frame_count else 0
        if frame != self.frame:
            self.frame = frame
            self.frame_changed.emit(frame)

    def set_range(self, rng: tuple[int, int] | None) -> None:
        if rng is not None:
            a, b = sorted(rng)
            rng = (max(0, a), min(b, max(0, self.frame_count - 1)))
        self.range = rng
        self.range_changed.emit()

    def set_cursor(self, subgoal_id: int | None, gate_index: int | None = None) -> None:
        self.subgoal_id = subgoal_id
        if gate_index is not None:
            self.gate_index = max(0, min(6, gate_index))
        self.cursor_changed.emit()

    # ---- derived reads -----------------------------------------------------------------
    def plan(self) -> list[Subgoal]:
        if self.project is None or self.video is None:
            return []
        return self.project.annotations.plan(self.video.case_id, self.rater)

    def current_subgoal(self) -> Subgoal | None:
        for s in self.plan():
            if s.id == self.subgoal_id:
                return s
        return None
