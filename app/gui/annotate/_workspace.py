"""The annotate workspace: wires the player, timeline and rubric panels to the project.

Widgets render :class:`AnnotateState` and the stored annotations; every user decision goes
straight to ``project.annotations`` (committed before the call returns), then ``data_changed``
makes the views re-read. Command handlers here are what the keyboard and menus call.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QDialog, QInputDialog, QMessageBox, QVBoxLayout, QWidget

from annotation import GATES_ALL, Answer, UserError, evaluate_subgoal, load_rubric
from app.gui.annotate._candidate_timeline import CandidateTimeline
from app.gui.annotate._candidates import (
    NONE_FOUND,
    NOT_SCANNED,
    Candidate,
    candidates,
    step_candidate,
)
from app.gui.annotate._case_panel import CasePanel
from app.gui.annotate._cursor import landing_gate
from app.gui.annotate._evidence_panel import EvidencePanel
from app.gui.annotate._gates_panel import ANSWER_TEXT, GatePanel
from app.gui.annotate._player import PlayerController, TransportBar
from app.gui.annotate._score_panel import ScorePanel
from app.gui.annotate._subgoals import SubgoalDialog, SubgoalPanel
from app.gui.annotate._video_list import VideoList
from app.gui.common import AnnotateState, Bridge, FrameFeed, FrameView, Mark
from storage import AnnotationError, Settings, Video


class AnnotateWorkspace(QObject):
    """Owns the annotate widgets and the commands that act on them."""

    message = Signal(str)  # for the status bar

    def __init__(self, state: AnnotateState, bridge: Bridge, settings: Settings) -> None:
        super().__init__()
        self.state = state
        self.bridge = bridge
        self.settings = settings
        self.rubric = load_rubric()
        self.feed: FrameFeed | None = None
        self.player = PlayerController(state, hop=settings.hop_frames)
        self._store_timer = QTimer(self)
        self._store_timer.setInterval(300)
        self._store_timer.timeout.connect(self._poll_store)

        self.center = QWidget()
        lay = QVBoxLayout(self.center)
        lay.setContentsMargins(4, 4, 4, 4)
        self.case_panel = CasePanel(state)
        self.view = FrameView()
        self.transport = TransportBar(self.player)
        self.timeline = CandidateTimeline(state)
        self.scanned = False  # the current video has a continuity scan (of the current version)
        # a key that would replace a different answer waits for the same key again:
        # (video, subgoal, gate index, answer) of the first press
        self._replacing: tuple[str, int, int, Answer] | None = None
        lay.addWidget(self.case_panel)
        lay.addWidget(self.view, 1)
        lay.addWidget(self.transport)
        lay.addWidget(self.timeline)

        self.videos = VideoList(state)
        self.scores = ScorePanel(state)
        self.subgoals = SubgoalPanel(state)
        self.gates = GatePanel(state, self.rubric)
        self.evidence = EvidencePanel(state)

        self.videos.video_activated.connect(self.open_video)
        self.subgoals.add_requested.connect(self.add_subgoal)
        self.subgoals.edit_requested.connect(self.edit_subgoal)
        self.subgoals.delete_requested.connect(self.delete_subgoal)
        self.gates.answer_clicked.connect(self._answer_at)
        self.gates.gate_clicked.connect(lambda i: state.set_cursor(state.subgoal_id, i))
        self.evidence.delete_requested.connect(self.delete_evidence)
        self.evidence.note_requested.connect(self.edit_evidence_note)
        state.frame_changed.connect(self._frame_changed)
        state.data_changed.connect(self._refresh_marks)
        state.video_changed.connect(self._refresh_marks)
        state.video_changed.connect(self._refresh_candidates)
        state.project_changed.connect(self._project_changed)
        state.cursor_changed.connect(self._drop_replacing)
        state.video_changed.connect(self._drop_replacing)

    # ---- commands ----------------------------------------------------------------------
    def handlers(self) -> dict[str, Callable[[], None]]:
        p = self.player
        return {
            "play.toggle": p.toggle,
            "play.step_fwd": lambda: p.step(1),
            "play.step_back": lambda: p.step(-1),
            "play.hop_fwd": lambda: p.step(p.hop),
            "play.hop_back": lambda: p.step(-p.hop),
            "play.first": p.first,
            "play.last": p.last,
            "play.slower": p.slower,
            "play.faster": p.faster,
            "play.mark_in": p.mark_in,
            "play.mark_out": p.mark_out,
            "play.loop": lambda: p.set_loop(not p.loop),
            "play.next_candidate": lambda: self.move_candidate(1),
            "play.prev_candidate": lambda: self.move_candidate(-1),
            "video.next": lambda: self.next_video(1),
            "video.prev": lambda: self.next_video(-1),
            "gate.pass": lambda: self.answer(Answer.PASS),
            "gate.fail": lambda: self.answer(Answer.FAIL),
            "gate.na": lambda: self.answer(Answer.NA),
            "gate.unresolved": lambda: self.answer(Answer.UNRESOLVED),
            "gate.clear": lambda: self.answer(None),
            "gate.next": lambda: self.move_gate(1),
            "gate.prev": lambda: self.move_gate(-1),
            "subgoal.next": lambda: self.move_subgoal(1),
            "subgoal.prev": lambda: self.move_subgoal(-1),
            "subgoal.add": self.add_subgoal,
            "subgoal.edit": self.edit_subgoal,
            "subgoal.delete": self.delete_subgoal,
            "evidence.mark": self.mark_evidence,
        }

    # ---- video -------------------------------------------------------------------------
    def _project_changed(self) -> None:
        self._close_feed()
        self.state.set_video(None, 0)
        self.player.set_index(None)
        self.timeline.set_index(None)
        self.view.set_image(None)
        videos = self.videos.videos()
        if videos:
            self.open_video(videos[0])

    def open_video(self, video: Video) -> None:
        st = self.state
        assert st.project is not None
        self._close_feed()
        index = st.project.video_index(video)
        store = st.project.store_path(video) if self.settings.frame_store else None
        self.feed = FrameFeed(
            self.bridge,
            st.project.video_path(video),
            index,
            store,
            self.settings.frame_cache_mb * 2**20,
            on_frame=self._show_frame,
            store_crf=self.settings.frame_store_crf,
        )
        self._store_timer.start()
        self.player.set_index(index)
        self.timeline.set_index(index)
        st.set_video(video, index.frame_count)
        if st.subgoal_id is not None:  # a rated video opens on its first gate still to answer
            st.set_cursor(st.subgoal_id, landing_gate(st, st.subgoal_id))
        self.feed.request(0)

    def next_video(self, step: int) -> None:
        videos = self.videos.videos()
        if not videos:
            return
        ids = [v.id for v in videos]
        cur = ids.index(self.state.video.id) if self.state.video in videos else -1
        self.open_video(videos[(cur + step) % len(videos)])

    def _close_feed(self) -> None:
        if self.feed is not None:
            self.feed.close()
            self.feed = None

    def close(self) -> None:
        self.player.pause()
        self._close_feed()

    def _frame_changed(self, frame: int) -> None:
        if self.feed is not None:
            self.feed.request(frame)

    def _show_frame(self, i: int, image: QImage) -> None:
        if i != self.state.frame and not self.player.playing:
            return
        self.view.set_image(image)
        self._show_boxes()

    def _poll_store(self) -> None:
        feed = self.feed
        if feed is None:
            self._store_timer.stop()
            return
        if feed.store_error is not None:  # the last progress must not stay up forever
            self._store_timer.stop()
            self.message.emit("Seek cache not built: frames are decoded exactly instead (slower)")
            return
        progress = feed.store_progress
        if progress is None:
            return
        done, total = progress
        if done >= total:
            self._store_timer.stop()
            self.message.emit("Seek cache ready: any frame shows at once")
        else:
            self.message.emit(f"Building seek cache {100 * done // max(total, 1)}%")

    # ---- continuity candidates -----------------------------------------------------------
    def _refresh_candidates(self) -> None:
        st, index = self.state, self.player.index
        scan = None
        if st.project is not None and st.video is not None and index is not None:
            scan = st.project.continuity.get(st.video.media)
        self.scanned = scan is not None
        found = candidates(scan, index.index_at) if index is not None else []
        self.timeline.set_candidates(found)

    def move_candidate(self, step: int) -> None:
        """Put the playhead on the next (previous) candidate window's start; decides nothing."""
        if self.state.video is None:
            return
        if not self.scanned:  # a scan made since the video opened (import, a job) shows now
            self._refresh_candidates()
        found: list[Candidate] = self.timeline.candidates
        k = step_candidate([c.start_frame for c in found], self.state.frame, step)
        if k is None:
            self.message.emit(NONE_FOUND if self.scanned else NOT_SCANNED)
            return
        self.player.pause()
        self.state.seek(found[k].start_frame)
        self.message.emit(found[k].status(len(found)))

    # ---- gates -------------------------------------------------------------------------
    def _answer_at(self, gate_index: int, answer: Answer) -> None:
        self.state.set_cursor(self.state.subgoal_id, gate_index)
        current = self.gates.current_result()
        if current and current[0].get(GATES_ALL[gate_index]) is answer:
            self.answer(None)  # clicking the checked answer again clears it
        else:
            self.answer(answer, replace=True)  # a click on the button is not a stray key

    def _drop_replacing(self) -> None:
        self._replacing = None

    def answer(self, answer: Answer | None, *, replace: bool = False) -> None:
        """Record ``answer`` at the cursor's gate (None clears it). A key that would replace a
        different recorded answer only says so; the same key again replaces it (``replace``:
        at once, for a click on the answer's own button)."""
        st = self.state
        if st.project is None or st.video is None:
            return
        if st.subgoal_id is None:
            self.message.emit("Add a subgoal first (Ctrl+Shift+N)")
            return
        gate = GATES_ALL[st.gate_index]
        if st.gate_index not in self.gates.enabled_gates():
            self.message.emit(f"{gate} is not reached for this subgoal")
            return
        current = self.gates.current_result()
        old = current[0].get(gate) if current else None
        if answer is not None and old is not None and old is not answer and not replace:
            asked = (st.video.id, st.subgoal_id, st.gate_index, answer)
            if self._replacing != asked:
                self._replacing = asked
                self.message.emit(
                    f"{gate} is already answered {ANSWER_TEXT[old]}: press the same key again "
                    f"to change it to {ANSWER_TEXT[answer]}"
                )
                return
        self._replacing = None
        try:
            st.project.annotations.set_answer(st.video.id, st.rater, st.subgoal_id, gate, answer)
        except UserError as e:  # a refused edit or a gate the rubric does not reach
            self.message.emit(str(e))
            return
        if answer is not None:
            self._advance()
        st.data_changed.emit()

    def _advance(self) -> None:
        """After an answer, go to the next gate still to answer (this subgoal, then later ones)."""
        st = self.state
        assert st.project is not None and st.video is not None
        answers = st.project.annotations.answers(st.video.id, st.rater)
        plan = st.plan()
        ids = [s.id for s in plan]
        start = ids.index(st.subgoal_id) if st.subgoal_id in ids else 0
        for sg in plan[start:] + plan[:start]:
            res = evaluate_subgoal(answers.get(sg.id, {}))
            if res.task.next_gate is not None:
                st.set_cursor(sg.id, res.task.next_gate)
                return
            if res.physics.next_gate is not None:
                st.set_cursor(sg.id, 3 + res.physics.next_gate)
                return
        self.message.emit("Every subgoal is scored")

    def move_gate(self, step: int) -> None:
        self.state.set_cursor(self.state.subgoal_id, self.state.gate_index + step)

    def move_subgoal(self, step: int) -> None:
        plan = self.state.plan()
        if not plan:
            return
        ids = [s.id for s in plan]
        cur = ids.index(self.state.subgoal_id) if self.state.subgoal_id in ids else 0
        target = ids[max(0, min(len(ids) - 1, cur + step))]
        self.state.set_cursor(target, landing_gate(self.state, target))

    # ---- subgoals ----------------------------------------------------------------------
    def add_subgoal(self) -> None:
        st = self.state
        if st.project is None or st.video is None:
            return
        dlg = SubgoalDialog(st.plan(), None, self.center.window())
        if dlg.exec() != QDialog.DialogCode.Accepted:
            return
        try:
            sg = st.project.annotations.add_subgoal(st.video.case_id, st.rater, **dlg.values())
        except AnnotationError as e:
            QMessageBox.warning(self.center.window(), "Subgoal not added", str(e))
            return
        st.set_cursor(sg.id, 0)
        st.data_changed.emit()

    def edit_subgoal(self) -> None:
        st = self.state
        sg = st.current_subgoal()
        if st.project is None or sg is None:
            return
        earlier = [s for s in st.plan() if s.position < sg.position]
        dlg = SubgoalDialog(earlier, sg, self.center.window())
        if dlg.exec() != QDialog.DialogCode.Accepted:
            return
        try:
            st.project.annotations.update_subgoal(sg.id, st.rater, **dlg.values())
        except AnnotationError as e:
            QMessageBox.warning(self.center.window(), "Subgoal not changed", str(e))
            return
        st.data_changed.emit()

    def delete_subgoal(self) -> None:
        st = self.state
        sg = st.current_subgoal()
        if st.project is None or sg is None:
            return
        st.project.annotations.delete_subgoal(sg.id, st.rater)
        plan = st.plan()
        first = plan[0].id if plan else None
        st.set_cursor(first, landing_gate(st, first))
        st.data_changed.emit()
        self.message.emit(f"Deleted {sg.label} (Ctrl+Z to undo)")

    # ---- evidence ----------------------------------------------------------------------
    def mark_evidence(self) -> None:
        st = self.state
        if st.project is None or st.video is None:
            return
        start, end = st.range if st.range else (st.frame, st.frame)
        gate = GATES_ALL[st.gate_index] if st.subgoal_id is not None else None
        try:
            st.project.annotations.add_evidence(
                st.video.id,
                st.rater,
                start_frame=start,
                end_frame=end,
                subgoal_id=st.subgoal_id,
                gate=gate,
                box=self.view.pending_box(),
            )
        except AnnotationError as e:
            self.message.emit(str(e))
            return
        self.view.clear_pending_box()
        st.data_changed.emit()
        self.message.emit(f"Evidence {start}–{end} marked for {gate or 'the video'}")

    def edit_evidence_note(self, evidence_id: int) -> None:
        st = self.state
        if st.project is None:
            return
        current = next((m.note for m in self.evidence.marks if m.id == evidence_id), "")
        text, ok = QInputDialog.getText(
            self.center.window(), "Evidence note", "What does this evidence show?", text=current
        )
        if ok and text != current:
            st.project.annotations.update_evidence_note(evidence_id, st.rater, text)
            st.data_changed.emit()

    def delete_evidence(self, evidence_id: int) -> None:
        st = self.state
        if st.project is None:
            return
        st.project.annotations.delete_evidence(evidence_id, st.rater)
        st.data_changed.emit()

    def _refresh_marks(self) -> None:
        st = self.state
        if st.project is None or st.video is None:
            self.timeline.set_marks([])
            return
        labels = {s.id: s.label for s in st.plan()}
        marks = st.project.annotations.evidence(st.video.id, st.rater)
        self.timeline.set_marks(
            [
                Mark(
                    m.id,
                    m.start_frame,
                    m.end_frame,
                    m.gate,
                    f"{labels.get(m.subgoal_id or -1, '')} {m.gate or ''}".strip(),
                )
                for m in marks
            ]
        )
        self._show_boxes()

    def _show_boxes(self) -> None:
        f = self.state.frame
        boxes = [
            (m.box, m.gate or "")
            for m in self.evidence.marks
            if m.box is not None and m.start_frame <= f <= m.end_frame
        ]
        self.view.set_boxes(boxes)


__all__ = ["AnnotateWorkspace"]
