"""What crosses between the simulated user, the harness and the assistant (IVG spec §2–§3).

Two views and two replies, all plain frozen records with a JSON form, because every one of them
is stored (the audit of what each side was actually given) and replayed:

- :class:`AssistantView` is everything the assistant may see: the task, the user's *announced*
  preferences, the public conversation, a sliding window of observations and its own previous
  structured reply. It has no field for the user's plan, queue, hidden persona axes or events,
  so the boundary is a matter of types as well as of tests.
- :class:`UserView` is the user's private side: persona instructions, its state map, its queue,
  execution feedback and, while an event is active, the harness's SYSTEM TASK.
- Only :attr:`AssistantReply.text` reaches the user and only :attr:`UserTurn.utterance` reaches
  the assistant (both through the conversation); flags, progress records and moves stay behind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from sim.world import SceneGraph
from storage import CallOutcome

Speaker = Literal["user", "assistant"]
PlanMode = Literal["retain", "append", "replace"]

#: The user's conversational moves (spec §3.1); ``continue`` is silence or small talk.
MOVES = (
    "continue",
    "request_explanation",
    "question_guidance",
    "request_guidance",
    "fewer_interruptions",
    "accept",
    "reject",
    "answer",
    "ask",
    "request",
    "announce",
)


@dataclass(frozen=True)
class Line:
    """One utterance of the public conversation, at the tick it was said or delivered."""

    tick: int
    speaker: Speaker
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"tick": self.tick, "speaker": self.speaker, "text": self.text}


@dataclass(frozen=True)
class Frame:
    """One sampled observation: what a camera shows at ``tick``.

    ``scene`` lists the visible objects (not shut inside a closed container) with where they are
    and what state they show, e.g. ``{"patty": "in pan, cooking 40%"}``: the symbolic stand-in for
    an image, and what the oracle reads. ``image`` is a PNG's sha256 when the world renders.
    """

    tick: int
    scene: dict[str, str]
    image: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tick": self.tick, "scene": dict(self.scene)}
        if self.image is not None:
            out["image"] = self.image
        return out


@dataclass
class CallAccount:
    """What a model-backed participant's call for one view cost and how its reply came out.

    The participant fills it in during the call (offline participants leave it empty) and the
    loop stores it with the exchange: ``outcome`` is ``valid``, ``repaired`` (valid only after a
    re-ask), ``silenced`` (still invalid when the repair budget ran out: the participant said
    nothing) or ``failed`` (the call raised); tokens and cost are summed over every request.
    """

    outcome: CallOutcome | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0

    def fields(self) -> dict[str, Any]:
        """The exchange row's fields: none when no model was called."""
        if self.outcome is None:
            return {}
        return {"outcome": self.outcome, "tokens_in": self.tokens_in,
                "tokens_out": self.tokens_out, "cost_usd": self.cost_usd}  # fmt: skip


@dataclass(frozen=True)
class AssistantView:
    """What the assistant is given when it is queried at ``tick`` (spec §2.4–§2.5)."""

    tick: int
    seconds: float
    instruction: str
    steps: tuple[str, ...]  # the recipe as public task rules (commands in order)
    preferences: dict[str, str]  # the announced persona axes only
    conversation: tuple[Line, ...]
    frames: tuple[Frame, ...]
    memory: dict[str, Any] | None  # its own previous structured reply, verbatim
    #: the requests a model-backed assistant actually sent for this view, in audit form
    #: (messages as sent, images as sha256), filled during the call; stored with the exchange
    requests: list[dict[str, Any]] = field(default_factory=list, compare=False, repr=False)
    #: what the call cost and how its reply came out, filled during the call (CallAccount)
    account: CallAccount = field(default_factory=CallAccount, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        out = {
            "tick": self.tick,
            "seconds": self.seconds,
            "instruction": self.instruction,
            "steps": list(self.steps),
            "preferences": dict(self.preferences),
            "conversation": [x.to_json() for x in self.conversation],
            "frames": [f.to_json() for f in self.frames],
            "memory": self.memory,
        }
        if self.requests:  # offline participants send nothing: their rows stay as they were
            out["requests"] = list(self.requests)
        return out


@dataclass(frozen=True)
class AssistantReply:
    """The assistant's structured output; only ``text`` reaches the user (empty = silence).

    ``flag`` is the error type it believes it saw (evaluation only) and ``flag_target`` the
    object it concerns; ``progress``, ``goal_change`` and ``note`` are its Plan–Act memory.

    The one rule for flags, which storage enforces too: **a target belongs to a flag**. A reply
    that names a target without a flag (the LLM assistant's schema lets a model send the pair,
    and small models do) keeps no target.
    """

    text: str = ""
    flag: str | None = None
    flag_target: str | None = None
    progress: dict[str, Any] = field(default_factory=dict)
    goal_change: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        if not self.flag and self.flag_target is not None:
            object.__setattr__(self, "flag_target", None)

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "flag": self.flag,
            "flag_target": self.flag_target,
            "progress": dict(self.progress),
            "goal_change": self.goal_change,
            "note": self.note,
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> AssistantReply:
        return AssistantReply(
            text=str(d.get("text") or ""),
            flag=d.get("flag") or None,
            flag_target=d.get("flag_target") or None,
            progress=dict(d.get("progress") or {}),
            goal_change=str(d.get("goal_change") or ""),
            note=str(d.get("note") or ""),
        )


@dataclass(frozen=True)
class UserView:
    """What the simulated user is given when it is invoked at ``tick`` (spec §3.4)."""

    tick: int
    reason: str  # message | feedback | event | idle | start
    instruction: str
    persona: tuple[str, ...]  # behavioural instructions, private
    preferences: dict[str, str]
    holding: str | None
    current: str | None  # the action being carried out
    queue: tuple[str, ...]
    controlled_by: Literal["user", "harness"]
    feedback: tuple[str, ...]  # execution feedback since the last turn
    done_steps: int  # how many of its own planned steps it has carried out
    conversation: tuple[Line, ...]
    system_task: str | None  # the active event's private instruction
    event: dict[str, Any] | None = None  # the same event, structured (rule-based users)
    graph: SceneGraph | None = None  # the privileged state map
    #: the requests a model-backed user actually sent for this view (see AssistantView)
    requests: list[dict[str, Any]] = field(default_factory=list, compare=False, repr=False)
    account: CallAccount = field(default_factory=CallAccount, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The stored form; the state map is the tick's graph, stored with the ticks."""
        out = {k: v for k, v in self.__dict__.items()
               if k not in ("graph", "requests", "account")}  # fmt: skip
        out["conversation"] = [x.to_json() for x in self.conversation]
        out["state"] = f"graph at tick {self.tick}"
        if self.requests:
            out["requests"] = list(self.requests)
        return out


@dataclass(frozen=True)
class UserTurn:
    """The user's structured reply: words, a move, a queue change, and its error call."""

    utterance: str = ""
    move: str = "continue"
    plan: PlanMode = "retain"
    commands: tuple[str, ...] = ()
    error_call: bool | None = None  # during an error event: did the assistant find it?
    done: bool = False  # the user considers the task finished
    #: nothing to do before this tick unless spoken to, told of a result or given an event:
    #: the loop does not ask an idle user again before it (a paced user, a waiting one)
    wake: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "utterance": self.utterance,
            "move": self.move,
            "plan": self.plan,
            "commands": list(self.commands),
            "error_call": self.error_call,
            "done": self.done,
        }
        if self.wake is not None:
            out["wake"] = self.wake
        return out

    @staticmethod
    def from_json(d: dict[str, Any]) -> UserTurn:
        """A reply from any user back-end; an unknown move or plan mode counts as silence
        with the queue retained (spec §8 item 14), never as an error mid-episode."""
        plan = d.get("plan", "retain")
        move = str(d.get("move") or "continue")
        return UserTurn(
            utterance=str(d.get("utterance") or ""),
            move=move if move in MOVES else "continue",
            plan=plan if plan in ("retain", "append", "replace") else "retain",
            commands=tuple(str(c) for c in d.get("commands") or ()),
            error_call=d.get("error_call"),
            done=bool(d.get("done", False)),
            wake=wake if isinstance(wake := d.get("wake"), int) and not isinstance(wake, bool)
            else None,
        )  # fmt: skip


class Assistant(Protocol):
    """The assistant under test: a rule-based oracle, an LLM, or a replay of recorded replies."""

    name: str

    def respond(self, view: AssistantView) -> tuple[AssistantReply, float]:
        """The reply to one query and the latency it took in seconds (measured timing)."""
        ...

    def state(self) -> dict[str, Any]: ...

    def restore(self, state: dict[str, Any]) -> None: ...


class SimUser(Protocol):
    """The simulated user: rule-based, LLM, a person at the GUI, or a replay.

    A user may also define ``wants_turn(tick) -> bool``: the loop then asks it at that tick
    even when nothing else happened (a person in the seat typed something).
    """

    name: str

    def turn(self, view: UserView) -> UserTurn: ...

    def state(self) -> dict[str, Any]: ...

    def restore(self, state: dict[str, Any]) -> None: ...
