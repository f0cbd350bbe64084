"""The rule-based simulated user: deterministic, offline, shaped by its persona (IVG spec §3).

It plans from the task (the recipe's steps, in order), acts through the semantic actions one
step at a time, speaks from templates, and takes or refuses guidance the way its persona says:

- **speed** sets the pause between its own steps (:attr:`Behaviour.pace`);
- **skill** how often it asks what to do next (:attr:`Behaviour.ask_next_step`);
- **trust** how many corroborations a warning needs before it changes course
  (:attr:`Behaviour.evidence_needed`; seeing the mistake in its own state map counts as one);
- **interruption** whether it asks for fewer interruptions after unrequested commentary, and
  how long its replies are.

It reads only its own view: the assistant's words (commands in them are parsed, as a person would
follow "put the cheese on the table"), its state map, its feedback and its private event card.
Chance draws come from a generator seeded per (seed, draw number), so its state is two integers.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from typing import Any

from sim.contracts import Truth
from sim.interact._types import Line, UserTurn, UserView
from sim.scenario import ReferenceStep
from sim.users import Persona
from sim.world import ActionFormatError, SceneGraph, parse_command

BASE_GAP = 3  # ticks between a finished step and the next, at pace 1.0
ANSWER_WAIT = 8  # ticks a user who asked waits for an answer before going on
RETRIES = 2  # times a rejected step of its own plan is tried again
RETRY_AFTER = 12  # ticks before it is
LINGER = 20  # ticks the user stays (and listens) after its last step before it calls it done
_CUES = re.compile(
    r"\b(wrong|mistake|instead|forgot|forget|should(?:n't| not)|raw|undo|stop|careful|"
    r"left the|still on|before|first|not the|back)\b",
    re.I,
)
_SPLIT = re.compile(r"[.;:!?\n]|,\s*(?:then\s+)?|\bthen\b|\band then\b|\band\b")
_LEAD = re.compile(r"^(?:please|now|first|next|so|just|ok(?:ay)?|right|you should|go ahead and)\s+")


def commands_in(text: str) -> list[str]:
    """The commands a person would pick out of an utterance, in order."""
    out: list[str] = []
    for part in _SPLIT.split(text):
        said = part.strip().lower()
        while (m := _LEAD.match(said)) is not None:
            said = said[m.end() :]
        if not said:
            continue
        try:
            parse_command(said)
        except ActionFormatError:
            continue
        out.append(said)
    return out


def _key(command: str) -> tuple[str, ...]:
    a = parse_command(command)
    return tuple(str(x or "").lower().removeprefix("the ") for x in
                 (a.verb.value, a.obj, a.relation, a.target))  # fmt: skip


def _text(step: str | ReferenceStep) -> str:
    """A plan step's command (an action step; waits have none)."""
    if isinstance(step, str):
        return step
    assert step.action is not None
    return step.action.text or step.action.describe()


def _names(obj: str) -> set[str]:
    """How a person may refer to an object id: "cutting board", "board", "red brick"."""
    parts = obj.split("_")
    return {" ".join(parts), " ".join(reversed(parts)), parts[-1], parts[0]} - {"brick"}


class RuleUser:
    """See the module docstring. ``steps`` are the scenario's reference steps."""

    name = "rule"

    def __init__(self, steps: Sequence[ReferenceStep], persona: Persona, *, seed: int) -> None:
        self.steps = tuple(steps)
        self.persona = persona
        self.b = persona.behaviour()
        self.seed = seed
        self.s: dict[str, Any] = {
            "index": 0, "draws": 0, "idle_since": None, "waited": 0, "awaiting": None,
            "warnings": 0, "advice": {}, "chatter": 0, "plan": None, "said_done": False,
            "asked_at": None, "forgotten": [], "finished_at": None, "last_step": None,
            "retries": {},
        }  # fmt: skip

    # -- helpers -----------------------------------------------------------------------------
    def _draw(self) -> float:
        self.s["draws"] += 1
        return random.Random(f"{self.seed}:{self.s['draws']}").random()

    def _gap(self) -> int:
        return max(0, round(BASE_GAP * self.b.pace))

    def _short(self, text: str) -> str:
        words = text.split()
        return " ".join(words[: self.b.max_reply_words])

    def _plan(self) -> list[Any]:
        """Remaining plan: reference steps, or a changed plan's commands."""
        if self.s["plan"] is not None:
            return list(self.s["plan"])
        return list(self.steps)

    # -- the turn ----------------------------------------------------------------------------
    def turn(self, view: UserView) -> UserTurn:
        card = view.event
        if card is not None and card["new"]:
            said = self._on_event(view, card)
            if said is not None:
                return said
        message = self._last_message(view)
        if message is not None:
            return self._on_message(view, message, card)
        if "feedback" in view.reason and view.feedback:
            self._retry(view)
            if self.b.ask_next_step >= 0.5:
                self.s["awaiting"], self.s["asked_at"] = "next", view.tick
                return UserTurn("That didn't work. What am I doing wrong?", "request_guidance")
        if view.controlled_by == "harness" or view.queue or "idle" not in view.reason:
            return UserTurn()
        return self._next_step(view)

    def _last_message(self, view: UserView) -> Line | None:
        if "message" not in view.reason or not view.conversation:
            return None
        last = view.conversation[-1]
        return last if last.speaker == "assistant" and last.tick == view.tick else None

    def _on_event(self, view: UserView, card: dict[str, Any]) -> UserTurn | None:
        cat = card["category"]
        if cat == "error":
            self.s["warnings"] = 0
            if card["skip"]:
                self._forget(card["skip"])
            return None
        if cat == "question":
            self.s["awaiting"], self.s["asked_at"] = "answer", view.tick
            return UserTurn(card["say"], "ask")
        if cat == "request":
            return UserTurn(card["say"], "request")
        self.s["plan"] = list(card["plan"])
        self.s["index"] = 0
        return UserTurn(card["say"], "announce", plan="replace", commands=())

    def _retry(self, view: UserView) -> None:
        """A rejected step of its own plan is tried again after :data:`RETRY_AFTER` ticks, at
        most :data:`RETRIES` times; then the user gives it up."""
        last, cmd = self.s["last_step"], self.s.get("last_cmd")
        if last is None or not any(f.startswith(f"{cmd}: rejected") for f in view.feedback):
            return
        tries = self.s["retries"]
        key = str(last)
        if tries.get(key, 0) < RETRIES:
            tries[key] = tries.get(key, 0) + 1
            self.s["index"] = min(self.s["index"], last)
            self.s["idle_since"] = view.tick + RETRY_AFTER - self._gap()
        self.s["last_step"] = None

    def _covered(self, cmds: list[str], graph: SceneGraph | None) -> None:
        """Steps of its own plan that a followed correction already does are not done twice."""
        self.s["last_step"] = None
        keys = {_key(c) for c in cmds}
        last = {(k := _key(c))[1]: k for c in cmds}  # per object, the correction's last word
        plan = self._plan()
        i = self.s["index"]
        ahead = {_key(_text(s)) for s in plan[i:] if isinstance(s, str) or s.action is not None}
        while i < len(plan):
            step = plan[i]
            if not isinstance(step, str) and step.action is None:
                if graph is None or step.wait_until.evaluate(graph, ()) is not Truth.T:
                    break  # a wait not over yet: later steps belong after it
                i += 1
                continue
            key = _key(_text(step))
            # a pick the correction undoes ("pick up the cheese, put the cheese on the table":
            # off the plan) is still the user's to do; a pick it follows through is done
            undone = key[0] == "pick" and last.get(key[1], key) not in ahead | {key}
            if i not in self.s["forgotten"] and key in keys and not undone:
                self.s["forgotten"].append(i)
            i += 1

    def _forget(self, n: int) -> None:
        """Forget the next ``n`` actions of the plan (waits are not actions)."""
        plan = self._plan()
        i = self.s["index"]
        while n and i < len(plan):
            if isinstance(plan[i], str) or plan[i].action is not None:
                self.s["forgotten"].append(i)
                n -= 1
            i += 1

    def _on_message(self, view: UserView, line: Line, card: dict[str, Any] | None) -> UserTurn:
        text = line.text
        cmds = commands_in(text)
        doing = {_key(c) for c in (*view.queue, *([view.current] if view.current else []))}
        if cmds and all(_key(c) in doing for c in cmds):
            return UserTurn(self._short("I'm on it."))
        cue = bool(_CUES.search(text))
        if card is not None and card["category"] == "error":
            named = any(n in text.lower() for t in card["targets"] for n in _names(t))
            correct = cue and named
            if correct:
                self.s["warnings"] += 1
                seen = 1 if card["committed"] else 0
                if self.s["warnings"] - 1 + seen >= self.b.evidence_needed:
                    self._covered(cmds, view.graph)
                    return UserTurn(self._short("Oh, you're right, my mistake. Fixing it."),
                                    "accept", plan="replace", commands=tuple(cmds),
                                    error_call=True)  # fmt: skip
                return UserTurn(self._short("Are you sure? It looks fine to me."),
                                "question_guidance", error_call=True)  # fmt: skip
            if cue:
                return UserTurn(self._short("I don't think that's right."), "reject",
                                error_call=False)  # fmt: skip
            return UserTurn(error_call=False)
        awaiting = self.s["awaiting"]
        if awaiting == "answer":
            self.s["awaiting"] = None
            return UserTurn(self._short("Thanks.") if self.b.welcomes_commentary else "")
        if awaiting == "next" and cmds:  # it asked: it does what it was told
            self.s["awaiting"] = None
            self._covered(cmds, view.graph)
            return UserTurn(self._short("Got it."), "accept", plan="replace",
                            commands=(*cmds, *view.queue))  # fmt: skip
        changed = {_key(c) for c in self.s["plan"] or ()}
        if cue and any(_key(c) not in changed and _key(c)[1] in {k[1] for k in changed}
                       for c in cmds):  # fmt: skip
            # undoing its own announced change of plan: its decision, not a mistake (§3.3)
            return UserTurn(self._short("No, I changed my plan on purpose."), "reject")
        if cue and cmds:
            key = cmds[0]
            seen = self.s["advice"].get(key, 0) + 1
            self.s["advice"][key] = seen
            if seen - 1 >= self.b.evidence_needed:
                self.s["advice"].pop(key)
                self._covered(cmds, view.graph)
                return UserTurn(self._short("Oh, right. Doing that now."), "accept",
                                plan="replace", commands=(*cmds, *view.queue))  # fmt: skip
            return UserTurn(self._short("Why? I don't see a problem."), "request_explanation")
        if not self.b.welcomes_commentary:
            self.s["chatter"] += 1
            if self.s["chatter"] == 2:
                return UserTurn("Please only speak up when it matters.", "fewer_interruptions")
        return UserTurn()

    def _next_step(self, view: UserView) -> UserTurn:
        t = view.tick
        if self.s["awaiting"] is not None:
            if t - self.s["asked_at"] < ANSWER_WAIT:
                return UserTurn(wake=self.s["asked_at"] + ANSWER_WAIT)
            self.s["awaiting"] = None
        if self.s["idle_since"] is None:
            self.s["idle_since"] = t
        if t - self.s["idle_since"] < self._gap():
            return UserTurn(wake=self.s["idle_since"] + self._gap())
        plan = self._plan()
        while self.s["index"] < len(plan):
            step = plan[self.s["index"]]
            if self.s["index"] in self.s["forgotten"]:
                self.s["index"] += 1
                continue
            if isinstance(step, str) or step.action is not None:
                break
            assert view.graph is not None
            if step.wait_until.evaluate(view.graph, ()) is Truth.T or (
                self.s["waited"] >= step.max_ticks
            ):
                self.s["index"] += 1
                self.s["waited"] = 0
                continue
            self.s["waited"] += 1
            return UserTurn()
        if self.s["index"] >= len(plan):
            if self.s["finished_at"] is None:
                self.s["finished_at"] = t
            if t - self.s["finished_at"] < LINGER:
                return UserTurn(wake=self.s["finished_at"] + LINGER)
            said = "" if self.s["said_done"] else "Done, I think that's everything."
            self.s["said_done"] = True
            return UserTurn(said, "continue", done=True)
        ask = (self.s["index"] > 0 or t == 0) and self.s["asked_at"] != t
        if ask and self._draw() < self.b.ask_next_step:
            self.s["awaiting"], self.s["asked_at"] = "next", t
            first = t == 0 and self.s["index"] == 0
            return UserTurn("What should I start with?" if first else
                            "What should I do next?", "request_guidance")  # fmt: skip
        step = plan[self.s["index"]]
        command = step if isinstance(step, str) else (step.action.text or step.action.describe())
        self.s["last_step"], self.s["last_cmd"] = self.s["index"], command
        self.s["index"] += 1
        self.s["idle_since"] = None
        return UserTurn(plan="append", commands=(command,))

    def state(self) -> dict[str, Any]:
        copy: dict[str, Any] = json.loads(json.dumps(self.s))  # deep, JSON-able by construction
        return copy

    def restore(self, state: dict[str, Any]) -> None:
        self.s = json.loads(json.dumps(state))
