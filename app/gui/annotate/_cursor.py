"""Where the gate cursor lands when a subgoal is chosen (a click, PgUp/PgDn, opening a video).

On the first gate still to answer, so the next key answers it: a cursor on an answered T1 made
the next "no" replace a "yes" without a word. Which gates count is the core's rule
(:func:`annotation.enabled_gates`, the same walk storage enforces): gates past a "no", or the
Physics gates when the Task level is 0, are not reached and so not to answer. When every
reachable gate is answered the cursor goes to T1, and the workspace asks before a key replaces
an answer (:meth:`AnnotateWorkspace.answer`).
"""

from __future__ import annotations

from annotation import GATES_ALL, enabled_gates
from app.gui.common import AnnotateState


def landing_gate(state: AnnotateState, subgoal_id: int | None) -> int:
    """The index (0..6) of the subgoal's first reachable unanswered gate; 0 if there is none."""
    project, video = state.project, state.video
    if project is None or video is None or subgoal_id is None:
        return 0
    answers = project.annotations.answers(video.id, state.rater).get(subgoal_id, {})
    for gate in enabled_gates(answers, mode=project.annotations.gate_mode()):
        if gate not in answers:
            return GATES_ALL.index(gate)
    return 0
