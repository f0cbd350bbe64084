"""A person in the user's seat: what they type at the episode workspace is the user's turn.

The workspace calls :meth:`HumanUser.say` (words to the assistant) or :meth:`HumanUser.do`
(a command for the user's own action queue) from the GUI thread; the episode's thread takes the
input as the user's next turn (the loop asks the user as soon as ``wants_turn``). A person who
types nothing is silent. The turns are recorded like any user's, so the episode replays
exactly without them.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from sim.interact._types import SimUser, UserTurn, UserView


class HumanUser:
    name = "human"

    def __init__(self) -> None:
        self._pending: deque[UserTurn] = deque()
        self._lock = threading.Lock()
        self._done = False  # once said, the person stays done
        self.last_view: UserView | None = None  # what the person's seat was shown last

    def wants_turn(self, _tick: int) -> bool:
        """Whether the person typed something the loop has not taken yet."""
        return bool(self._pending)

    def say(self, utterance: str) -> None:
        """Words to the assistant (a question, an answer, "ok")."""
        if utterance.strip():
            with self._lock:
                self._pending.append(UserTurn(utterance.strip(), "continue"))

    def do(self, command: str) -> None:
        """A command added to the user's own action queue ("pick up the patty")."""
        if command.strip():
            with self._lock:
                self._pending.append(UserTurn("", "continue", plan="append",
                                              commands=(command.strip(),)))  # fmt: skip

    def done(self) -> None:
        """The person considers the task finished."""
        with self._lock:
            self._done = True
            self._pending.append(UserTurn("", "continue", done=True))

    def turn(self, view: UserView) -> UserTurn:
        self.last_view = view
        with self._lock:
            return self._pending.popleft() if self._pending else UserTurn(done=self._done)

    def state(self) -> dict[str, Any]:
        with self._lock:
            return {"pending": [t.to_json() for t in self._pending], "done": self._done}

    def restore(self, state: dict[str, Any]) -> None:
        with self._lock:
            self._pending = deque(UserTurn.from_json(t) for t in state.get("pending", ()))
            self._done = bool(state.get("done", False))


class SeatUser:
    """The recorded episode's own user until a person takes the seat (:meth:`take`), then the
    person (a :class:`HumanUser`): how a fork hands an episode over at the playhead."""

    def __init__(self, original: SimUser) -> None:
        self.original = original
        self.human = HumanUser()
        self.taken = False
        self.name = original.name

    def take(self) -> None:
        self.taken = True
        self.name = "human"

    def wants_turn(self, tick: int) -> bool:
        if self.taken:
            return self.human.wants_turn(tick)
        wants = getattr(self.original, "wants_turn", None)
        return bool(wants(tick)) if wants is not None else False

    def turn(self, view: UserView) -> UserTurn:
        return self.human.turn(view) if self.taken else self.original.turn(view)

    def state(self) -> dict[str, Any]:
        return {"original": self.original.state(), "human": self.human.state(),
                "taken": self.taken}  # fmt: skip

    def restore(self, state: dict[str, Any]) -> None:
        if "original" not in state:  # a snapshot of an episode without a seat
            self.original.restore(state)
            return
        self.original.restore(state["original"])
        self.human.restore(state["human"])
        if state.get("taken"):
            self.take()
