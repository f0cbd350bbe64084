"""Which gates may be answered: the rubric's entry rules, for every writer of gate answers.

The gates panel, ``storage`` (a script's :meth:`set_answer`, a merged work bundle) and any later
importer ask these functions, so an answer the rubric forbids cannot be stored by any route.

Rules (spec ego2act.md §2.3–2.4, §9 items 9–10):

- **Early exit.** A gate is asked only once every earlier gate of its axis passed. After a "no",
  an unresolved gate or N/A at P1, the later gates of that axis are *not reached*.
- **Unattempted.** When T1 is answered "no" the Task level is 0 and every Physics gate is locked.
  Physics may be answered while the Task walk is still open (t is not known to be 0 yet).
- **N/A** exists only at P1.
- **Pilot mode** (:attr:`GateMode.RECORD_ALL`, "record all gates" for the rubric ablation, §5.5):
  the early exit is lifted, so every gate may be answered in any order; the t = 0 lock and the N/A
  rules stay, because no ablation variant scores a window that is unattempted or uninspectable.

Stored answers obey a slightly weaker rule than new ones: an *unanswered* earlier gate (cleared
after the later ones were given) only pauses the walk, so those later answers wait rather than
being forbidden. What an edit does to later answers is :func:`blocked_answers`: storage clears
exactly those, in the same undoable action, so what is stored is always what the walk scores.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from annotation._errors import UserError
from annotation._gates import GATES_ALL, PHYSICS_GATES, TASK_GATES, Answer

_SAID = {
    Answer.FAIL: "was answered no",
    Answer.UNRESOLVED: "is unresolved",
    Answer.NA: "is N/A (nothing inspectable in this window)",
}
_LOCKED = "T is 0 and physics is unattempted"
_ANSWERS = frozenset({Answer.PASS, Answer.FAIL, Answer.UNRESOLVED})


class GateMode(StrEnum):
    """How gates are entered: with early exit (the rubric), or every gate (pilot)."""

    GATED = "gated"
    RECORD_ALL = "record_all"


class GateRuleError(UserError, ValueError):
    """An answer the rubric does not allow at this gate now; nothing was stored.

    Attributes:
        gate: The gate that cannot take the answer (``T1`` … ``P4``).
    """

    def __init__(self, gate: str, message: str) -> None:
        super().__init__(message)
        self.gate = gate


def _known(gate: str) -> None:
    if gate not in GATES_ALL:
        raise GateRuleError(gate, f"unknown gate {gate!r}; expected one of {', '.join(GATES_ALL)}")


def _valid(gate: str, answer: Answer | None) -> None:
    """The gate exists and can ever take this answer (N/A only at P1), whatever else is given."""
    _known(gate)
    if answer is Answer.NA and gate != "P1":
        raise GateRuleError(gate, f"{gate} cannot be N/A: N/A is allowed only at P1")


def _blocker(
    answers: Mapping[str, Answer], gate: str, mode: GateMode, *, pending_blocks: bool
) -> str | None:
    """Why ``gate`` cannot hold an answer given the *other* answers, or None if it can."""
    if gate in PHYSICS_GATES and answers.get("T1") is Answer.FAIL:
        return f"{gate} cannot be answered: T1 was answered no, so {_LOCKED}"
    axis = TASK_GATES if gate in TASK_GATES else PHYSICS_GATES
    for earlier in axis[: axis.index(gate)]:
        a = answers.get(earlier)
        if mode is GateMode.RECORD_ALL:
            if a is Answer.NA:  # only P1 can be N/A: the window is uninspectable throughout
                return f"{gate} not reached: {earlier} {_SAID[a]}"
            continue
        if a is None:
            if pending_blocks:
                return f"{gate} not reached: {earlier} is not answered yet"
            continue
        if a is not Answer.PASS:
            return f"{gate} not reached: {earlier} {_SAID[a]}"
    return None


def allowed_answers(
    answers: Mapping[str, Answer], gate: str, *, mode: GateMode = GateMode.GATED
) -> frozenset[Answer]:
    """The answers ``gate`` may take now (empty when it is not reached or locked)."""
    _known(gate)
    if _blocker(answers, gate, mode, pending_blocks=True) is not None:
        return frozenset()
    return _ANSWERS | {Answer.NA} if gate == "P1" else _ANSWERS


def check_answer(
    answers: Mapping[str, Answer],
    gate: str,
    answer: Answer | None,
    *,
    mode: GateMode = GateMode.GATED,
) -> None:
    """Raise :class:`GateRuleError` unless ``answer`` may be recorded at ``gate`` now.

    ``answers`` are the subgoal's recorded answers (gate id → answer). Clearing (``None``) is
    always allowed: it cannot create an answer the rubric refuses.
    """
    _valid(gate, answer)
    if answer is None:
        return
    why = _blocker(answers, gate, mode, pending_blocks=True)
    if why is not None:
        raise GateRuleError(gate, why)


def enabled_gates(
    answers: Mapping[str, Answer], *, mode: GateMode = GateMode.GATED
) -> tuple[str, ...]:
    """The gates that can be answered now, in rubric order (what the gates panel enables)."""
    return tuple(g for g in GATES_ALL if allowed_answers(answers, g, mode=mode))


def blocked_answers(
    answers: Mapping[str, Answer], *, mode: GateMode = GateMode.GATED
) -> tuple[str, ...]:
    """Recorded answers the others leave unreached (after a "no", or t = 0), in rubric order.

    After an edit, these are the answers the walk can no longer reach; storage clears them in the
    same action. A valid stored set has none.
    """
    return tuple(
        g
        for g in GATES_ALL
        if g in answers and _blocker(answers, g, mode, pending_blocks=False) is not None
    )


def check_answers(answers: Mapping[str, Answer], *, mode: GateMode = GateMode.GATED) -> None:
    """Raise :class:`GateRuleError` for the first answer of a whole stored set that the rubric
    forbids (an unknown gate, N/A after P1, an answer after a "no", physics when t = 0)."""
    for gate, answer in answers.items():
        _valid(gate, answer)
    for gate in GATES_ALL:
        why = _blocker(answers, gate, mode, pending_blocks=False) if gate in answers else None
        if why is not None:
            raise GateRuleError(gate, why)
