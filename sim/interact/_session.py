"""One interactive episode as an engine agent: user, harness and assistant on one tick loop.

:class:`InteractiveAgent` is an :class:`sim.episode.Agent`, so the engine runs it like any other
(pause, step, snapshot, fork, sinks). Each tick, in this order (IVG spec §2):

1. execution feedback from the world reaches the user's side (rejections, finished actions);
2. the harness fires due events and advances the one holding the queue (§3.3);
3. a reply due now is delivered (generated at t − d; spec §2.3) — only its text reaches the user;
4. the user is invoked if something happened (a message, feedback, an event, an empty queue);
   its utterance joins the conversation, its queue change applies unless the harness holds it;
5. on the cadence, with nothing in flight, the assistant is queried on a sliding window of
   observations, the conversation and its own previous reply; a 0-tick reply is delivered now;
6. while the world is idle, the head of whichever queue is in control goes to the engine.

User and assistant calls cost no simulated time. Everything each side was given and returned is
kept in :attr:`exchanges` (the audit), the conversation in :attr:`turns`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sim.assistants import AssistantClock, TimingConfig
from sim.episode import Observation
from sim.interact._harness import Harness
from sim.interact._scene import SceneCamera
from sim.interact._schedule import Schedule, ScheduledEvent
from sim.interact._types import (
    Assistant,
    AssistantReply,
    AssistantView,
    Frame,
    Line,
    SimUser,
    UserTurn,
    UserView,
)
from sim.users import Persona
from sim.world import Action, ActionFormatError, SceneGraph, parse_command

WINDOW = 8  # observations in the assistant's sliding window (spec §2.5)


@dataclass
class Tables:
    """The interaction trace as rows, appended as they happen (sinks drain them).

    An exchange row is kept with the immutable view it audits and gets the view's stored form
    (``sent``) the first time :attr:`exchanges` is read: every view repeats the conversation
    so far, and converting each one as it was sent cost about a fifth of the CPU of a symbolic
    episode that nobody stores (a benchmark, an RL rollout). Read or stored, the rows are the
    same: a view is immutable (its dicts are built for it and nobody changes them).
    """

    turns: list[dict[str, Any]] = field(default_factory=list)
    _exchanges: list[dict[str, Any]] = field(default_factory=list)
    _converted: int = 0  # rows before this index already hold their ``sent`` dict

    @property
    def exchanges(self) -> list[dict[str, Any]]:
        rows = self._exchanges
        for row in rows[self._converted :]:
            if isinstance(sent := row["sent"], AssistantView | UserView):
                row["sent"] = sent.to_json()
        self._converted = len(rows)
        return rows

    @property
    def exchange_count(self) -> int:
        return len(self._exchanges)

    def audit(self, row: dict[str, Any], view: AssistantView | UserView) -> None:
        """Append an exchange row whose ``sent`` is ``view`` (converted when read)."""
        row["sent"] = view
        self._exchanges.append(row)


class InteractiveAgent:
    """See the module docstring. ``steps`` are the recipe's commands (public task rules)."""

    name = "interactive"

    def __init__(
        self,
        *,
        instruction: str,
        steps: Sequence[str],
        persona: Persona,
        user: SimUser,
        assistant: Assistant,
        schedule: Schedule,
        timing: TimingConfig,
        window: int = WINDOW,
        frame: Callable[[SceneGraph], Frame] | None = None,
    ) -> None:
        self.instruction = instruction
        self.steps = tuple(steps)
        self.persona = persona
        self.user = user
        self.assistant = assistant
        self.harness = Harness(schedule)
        self.clock = AssistantClock(timing)
        self.timing = timing
        self.window = window
        camera = SceneCamera()
        self._frame = frame or (lambda g: Frame(g.tick, camera(g)))
        # a persona is frozen: its announced axes and instructions are the same in every view
        self._announced = persona.announced()
        self._instructions = tuple(persona.instructions())
        self.tables = Tables()
        self.conversation: list[Line] = []
        self.frames: list[Frame] = []
        self.memory: dict[str, Any] | None = None
        self.user_queue: list[str] = []
        self.harness_queue: list[str] = []
        self.feedback: list[str] = []
        self.done_steps = 0
        self.user_done = False
        self._user_wake: int | None = None  # see UserTurn.wake
        self._harness_accepted = 0
        self._in_flight: str | None = None  # "user" | "harness": who submitted the running action
        self._current: str | None = None  # the command being carried out
        self._error_calls: dict[int, list[tuple[int, bool]]] = {}

    # -- Agent protocol ----------------------------------------------------------------------
    @property
    def source(self) -> str:
        """Who the action returned by the last :meth:`decide` came from (the engine records
        it with the action): the user, or the harness carrying out a scheduled mistake."""
        return self._in_flight or "user"

    @property
    def done(self) -> bool:
        # A reply still in flight does not keep the episode going: the user has left.
        return self.user_done and self.harness.holding is None and not self.user_queue

    def decide(self, obs: Observation) -> list[Action]:
        t, graph = obs.tick, obs.graph
        reasons = self._world_feedback(obs)
        if t == 0:
            reasons.append("start")
        fired = self.harness.step(t, graph, obs.events)
        for i in fired:
            reasons.append("event")
            if self.harness.events[i].spec.category == "error":
                self.harness_queue = list(self.harness.events[i].spec.actions)
                self._harness_accepted = 0
        drained = not self.harness_queue and not obs.busy and self._in_flight != "harness"
        if self.harness.progress(
            t, graph, obs.events, drained=drained, accepted=self._harness_accepted
        ):
            self.harness_queue = []
        if self._deliver(t):
            reasons.append("message")
        idle = not obs.busy and obs.queued == 0 and self._in_flight is None
        if idle and not self.user_queue and not self.harness.seizing() and not self.user_done:
            reasons.append("idle")
        if reasons == ["idle"] and self._user_wake is not None and t < self._user_wake:
            reasons = []  # an idle user who said when it will next act: nothing changed since
        wants = getattr(self.user, "wants_turn", None)
        if wants is not None and wants(t):
            reasons.append("input")  # a person in the user's seat typed something
        if reasons:
            self._user_turn(obs, reasons, fired)
        if self._sample_due(t):
            self.frames.append(self._frame(graph))
            self.frames = self.frames[-self.window :]
        if self.clock.should_ask(t):
            self._ask(obs)
            if self._deliver(t):  # a 0-tick reply: the user hears it in the same tick
                self._user_turn(obs, ["message"], [])
        return self._feed(obs)

    # -- the steps ---------------------------------------------------------------------------
    def _world_feedback(self, obs: Observation) -> list[str]:
        reasons: list[str] = []
        for v in obs.verdicts:
            if v.accepted:
                if self._in_flight == "harness":
                    self._harness_accepted += 1
                continue
            self._in_flight = self._current = None
            self.feedback.append(f"{v.action.describe()}: rejected ({v.reason})")
            reasons.append("feedback")
        for o in obs.finished:
            g = o.verdict.grounded
            self.harness.history.finished(
                o.finished,
                o.verdict.action.verb.value,
                g.obj if g else None,
                g.target if g else None,
            )
            if self._in_flight == "user":
                self.done_steps += 1
            self._in_flight = self._current = None
            if o.result != "ok":
                self.feedback.append(f"{o.verdict.action.describe()}: {o.result}")
                reasons.append("feedback")
        self.harness.history.observe(obs.graph)
        return reasons

    def _deliver(self, t: int) -> bool:
        arrived = self.clock.deliver(t)
        if arrived is None:
            return False
        self.memory = arrived.reply  # its structured reply, verbatim: the Plan–Act memory
        reply = AssistantReply.from_json(arrived.reply)
        if reply.text or reply.flag:
            self._turn(t, "assistant", reply.text, flag=reply.flag, target=reply.flag_target,
                       meta={"asked": arrived.asked})  # fmt: skip
        if reply.text:
            self.conversation.append(Line(t, "assistant", reply.text))
            return True
        return False

    def _user_turn(self, obs: Observation, reasons: list[str], fired: list[int]) -> None:
        holding = self.harness.seizing()
        active = self.harness.holding
        view = UserView(
            tick=obs.tick,
            reason=",".join(dict.fromkeys(reasons)),
            instruction=self.instruction,
            persona=self._instructions,
            preferences=dict(self._announced),
            holding=obs.graph.held(),
            current=self._current,
            queue=tuple(self.harness_queue if holding else self.user_queue),
            controlled_by="harness" if holding else "user",
            feedback=tuple(self.feedback),
            done_steps=self.done_steps,
            conversation=tuple(self.conversation),
            system_task=self._system_task(fired),
            event=self._event_card(fired, active),
            graph=obs.graph,
        )
        self.feedback = []
        with self._failed_call(obs.tick, "user", view):
            turn = self.user.turn(view)
        self.tables.audit({"tick": obs.tick, "party": "user", "received": turn.to_json(),
                           **view.account.fields()}, view)  # fmt: skip
        self._apply(obs.tick, turn)

    def _system_task(self, fired: list[int]) -> str | None:
        """The private instruction for the event that needs the user now (spec §3.3)."""
        for i in fired:  # (an error that only makes the user forget may end as it fires)
            return _instruction(self.harness.events[i], self.harness.states[i].data)
        holding = self.harness.active_error()
        return None if holding is None else _instruction(holding, {})

    def _event_card(self, fired: list[int], active: int | None) -> dict[str, Any] | None:
        """The private, structured side of the event that concerns the user now."""
        for i in [*fired, *([] if active is None else [active])]:
            ev, st = self.harness.events[i], self.harness.states[i]
            return {
                "id": ev.id,
                "category": ev.spec.category,
                "type": ev.spec.type,
                "targets": list(ev.spec.targets),
                "skip": ev.spec.skip,
                "say": st.data.get("question") or ev.spec.say,
                "plan": list(ev.spec.plan),
                "new": i in fired,
                "committed": st.commit_tick is not None,
            }
        return None

    def _apply(self, t: int, turn: UserTurn) -> None:
        self._user_wake = turn.wake
        if turn.utterance:
            self.conversation.append(Line(t, "user", turn.utterance))
        if turn.utterance or turn.move != "continue":
            self._turn(t, "user", turn.utterance, move=turn.move)
        holding = self.harness.holding
        if holding is not None and turn.error_call is not None:
            calls = self.harness.states[holding].data.setdefault("error_calls", [])
            calls.append([t, bool(turn.error_call)])
        if turn.move == "accept" and holding is not None:
            self.harness.accept(t)
            self.harness_queue = []
        if self.harness.seizing():
            return  # the body is committed: plan updates are ignored while the harness holds
        if turn.plan == "replace":
            self.user_queue = list(turn.commands)
        elif turn.plan == "append":
            self.user_queue.extend(turn.commands)
        self.user_done = turn.done

    def _sample_due(self, t: int) -> bool:
        return not self.frames or t - self.frames[-1].tick >= self.timing.cadence

    def _ask(self, obs: Observation) -> None:
        t = obs.tick
        view = AssistantView(
            tick=t,
            seconds=round(t * self.timing.tick_s, 3),
            instruction=self.instruction,
            steps=self.steps,
            preferences=dict(self._announced),
            conversation=tuple(self.conversation),
            frames=tuple(self.frames),
            memory=self.memory,
        )
        with self._failed_call(t, "assistant", view):
            reply, latency = self.assistant.respond(view)
        received = reply.to_json()
        due = self.clock.asked(t, received, latency)
        self.tables.audit(
            {"tick": t, "party": "assistant", "received": received, "latency_s": latency,
             "due_tick": due, **view.account.fields()}, view
        )  # fmt: skip

    @contextmanager
    def _failed_call(self, t: int, party: str, view: AssistantView | UserView) -> Iterator[None]:
        """A participant call that raises is audited too (what it sent, the error, what it
        cost) before the error ends the episode: a failed run keeps every exchange it made."""
        try:
            yield
        except BaseException as err:
            account = view.account.fields()
            if account:
                account["outcome"] = "failed"
            said = str(err) or type(err).__name__
            self.tables.audit({"tick": t, "party": party, "received": {"error": said},
                               **account}, view)  # fmt: skip
            raise

    def _feed(self, obs: Observation) -> list[Action]:
        if obs.busy or obs.queued or self._in_flight is not None:
            return []
        queue, who = (
            (self.harness_queue, "harness") if self.harness.seizing() else (self.user_queue, "user")
        )
        while queue:
            text = queue.pop(0)
            try:
                action = parse_command(text)
            except ActionFormatError as err:
                self.feedback.append(f"{text}: not a command ({err})")
                continue
            self._in_flight, self._current = who, text
            return [action]
        return []

    def _turn(self, t: int, speaker: str, text: str, *, move: str = "", flag: str | None = None,
              target: str | None = None, meta: dict[str, Any] | None = None) -> None:  # fmt: skip
        self.tables.turns.append(
            {"tick": t, "speaker": speaker, "text": text, "move": move, "flag": flag,
             "flag_target": target, "meta": meta or {}}
        )  # fmt: skip

    # -- end, snapshot -----------------------------------------------------------------------
    def finish(self, tick: int) -> None:
        self.harness.finish(tick)

    def state(self) -> dict[str, Any]:
        return {
            "harness": self.harness.state(),
            "clock": self.clock.state(),
            "user": self.user.state(),
            "assistant": self.assistant.state(),
            "conversation": [x.to_json() for x in self.conversation],
            "frames": [f.to_json() for f in self.frames],
            "memory": self.memory,
            "user_queue": list(self.user_queue),
            "user_wake": self._user_wake,
            "harness_queue": list(self.harness_queue),
            "feedback": list(self.feedback),
            "done_steps": self.done_steps,
            "user_done": self.user_done,
            "harness_accepted": self._harness_accepted,
            "in_flight": self._in_flight,
            "current": self._current,
            "rows": {"turns": len(self.tables.turns), "exchanges": self.tables.exchange_count},
        }

    def restore(self, s: dict[str, Any]) -> None:
        self.harness.restore(s["harness"])
        self.clock.restore(s["clock"])
        self.user.restore(s["user"])
        self.assistant.restore(s["assistant"])
        self.conversation = [Line(x["tick"], x["speaker"], x["text"]) for x in s["conversation"]]
        self.frames = [Frame(f["tick"], f["scene"], f.get("image")) for f in s["frames"]]
        self.memory = s["memory"]
        self.user_queue = list(s["user_queue"])
        self._user_wake = s.get("user_wake")
        self.harness_queue = list(s["harness_queue"])
        self.feedback = list(s["feedback"])
        self.done_steps = int(s["done_steps"])
        self.user_done = bool(s["user_done"])
        self._harness_accepted = int(s["harness_accepted"])
        self._in_flight = s["in_flight"]
        self._current = s.get("current")


def _instruction(ev: ScheduledEvent, data: dict[str, Any]) -> str:
    """The SYSTEM TASK text for an event (spec §3.3, J.5), private to the user."""
    s = ev.spec
    if s.category == "error":
        return (
            "SYSTEM TASK (overrides everything else). This tests whether the assistant can "
            "identify a mistake and convince you. Your body is committed: the queue is what "
            "you are doing and you cannot change it; you control only your voice. Never "
            "promise an action that is not in the queue, never deny one that is. The mistake: "
            f"{s.mistake} Never announce, name or hint at it: the assistant has to SEE it. "
            "Report in error_call whether the assistant has correctly identified it. Until "
            "then behave as your persona would; once it has, come round as your trust level "
            "says, say so in your own words and set move to accept. A promise to deal with it "
            "later is NOT acceptance. Until you accept, take no corrective action."
        )
    if s.category == "question":
        return (
            f"SYSTEM TASK: ask the assistant this in your own words now: {data['question']} "
            "Wait for the answer, react as your persona would, then carry on. This is not a "
            "mistake."
        )
    if s.category == "request":
        return (
            f"SYSTEM TASK: ask the assistant to tell you when this happens: {data['question']} "
            "Keep working instead of waiting; you are not asking whether it holds now."
        )
    return (
        f"SYSTEM TASK: you change your plan: announce it explicitly before acting on it: "
        f"{s.say} It is your own decision, not an error: do not accept the assistant calling "
        "it a mistake."
    )
