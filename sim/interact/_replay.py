"""Participants that replay what was recorded: the user's turns and the assistant's replies.

Replaying an LLM episode needs no model: the stored exchanges are fed back in order, each at the
tick it was first given, with its recorded latency (so measured-timing delays come out the
same). A participant asked at a different tick than recorded means the replay has diverged;
that is reported, not papered over.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sim.interact._types import AssistantReply, AssistantView, UserTurn, UserView


class ReplayDivergedError(RuntimeError):
    """The replayed episode asked a participant at a tick the recording did not."""


class ReplayAssistant:
    name = "replay"

    def __init__(self, replies: Sequence[tuple[int, dict[str, Any], float]]) -> None:
        self.replies = list(replies)
        self._next = 0

    def respond(self, view: AssistantView) -> tuple[AssistantReply, float]:
        if self._next >= len(self.replies):
            raise ReplayDivergedError(f"tick {view.tick}: the assistant was asked once more "
                                      "than recorded")  # fmt: skip
        tick, reply, latency = self.replies[self._next]
        if tick != view.tick:
            raise ReplayDivergedError(f"the assistant was asked at tick {view.tick}; the "
                                      f"recording asked it at {tick}")  # fmt: skip
        self._next += 1
        return AssistantReply.from_json(reply), latency

    def state(self) -> dict[str, Any]:
        return {"next": self._next}

    def restore(self, state: dict[str, Any]) -> None:
        self._next = int(state.get("next", 0))


class ReplayUser:
    name = "replay"

    def __init__(
        self, turns: Sequence[tuple[int, dict[str, Any]]], asked_for: Sequence[int] = ()
    ) -> None:
        self.turns = list(turns)
        self._next = 0
        # ticks at which the recorded user was asked because a person had typed something: the
        # replay asks at the same ticks, with nobody typing
        self.asked_for = set(asked_for)

    def wants_turn(self, tick: int) -> bool:
        return tick in self.asked_for

    def turn(self, view: UserView) -> UserTurn:
        if self._next >= len(self.turns):
            raise ReplayDivergedError(f"tick {view.tick}: the user was invoked once more than "
                                      "recorded")  # fmt: skip
        tick, turn = self.turns[self._next]
        if tick != view.tick:
            raise ReplayDivergedError(f"the user was invoked at tick {view.tick}; the "
                                      f"recording invoked it at {tick}")  # fmt: skip
        self._next += 1
        return UserTurn.from_json(turn)

    def state(self) -> dict[str, Any]:
        return {"next": self._next}

    def restore(self, state: dict[str, Any]) -> None:
        self._next = int(state.get("next", 0))
