"""A scripted assistant: says given words when given cues hold (test episodes and demos).

Each :class:`ScriptCue` is a line the assistant says at the first query at or after tick ``at`` at
which its conditions hold: a user line matching ``heard`` since the cue last spoke, and the
newest observation showing ``seen`` (object → parts its scene phrase must have, e.g.
``{"patty": "on plate, raw"}``). A cue speaks ``times`` times, at least ``every`` ticks apart, and
stops early once a user line matches ``until_heard``. Its reply carries an optional error
``flag`` and reports ``latency_s`` (what measured timing turns into a delay). Cues that speak at
the same query are joined into one reply; with none, the assistant is silent.

It reads only what any assistant is given (:class:`AssistantView`), and its state is a few
counters, so episodes with it snapshot, fork and replay like any other. Registered as the
assistant ``scripted``, its cues given as the option ``cues`` (stored with the episode).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sim.interact._participants import ParticipantError, Setup, register_assistant
from sim.interact._types import AssistantReply, AssistantView, Line


class ScriptCue(BaseModel):
    """One scripted line and when to say it (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    at: int = Field(default=0, ge=0)
    heard: str | None = None
    seen: dict[str, str] = {}
    flag: str | None = None
    flag_target: str | None = None
    latency_s: float = Field(default=0.0, ge=0.0)
    times: int = Field(default=1, ge=1)
    every: int = Field(default=1, ge=1)
    until_heard: str | None = None


class ScriptedAssistant:
    """See the module docstring."""

    name = "scripted"

    def __init__(self, cues: Sequence[ScriptCue]) -> None:
        self.cues = tuple(cues)
        self.s: dict[str, list[Any]] = {
            "said": [0] * len(self.cues),  # times each cue has spoken
            "last": [None] * len(self.cues),  # the query tick it last spoke at
        }

    def respond(self, view: AssistantView) -> tuple[AssistantReply, float]:
        scene = view.frames[-1].scene if view.frames else {}
        heard = [x for x in view.conversation if x.speaker == "user"]
        texts: list[str] = []
        flag = target = None
        latency = 0.0
        for i, cue in enumerate(self.cues):
            if not self._due(i, cue, view.tick, heard, scene):
                continue
            self.s["said"][i] += 1
            self.s["last"][i] = view.tick
            texts.append(cue.text)
            latency = max(latency, cue.latency_s)
            if flag is None and cue.flag:
                flag, target = cue.flag, cue.flag_target
        return AssistantReply(" ".join(texts), flag, target), latency

    def _due(
        self, i: int, cue: ScriptCue, tick: int, heard: list[Line], scene: dict[str, str]
    ) -> bool:
        said, last = self.s["said"][i], self.s["last"][i]
        if said >= cue.times or tick < cue.at or (last is not None and tick - last < cue.every):
            return False
        if said and cue.until_heard is not None:
            pattern = re.compile(cue.until_heard, re.I)
            if any(x.tick >= last and pattern.search(x.text) for x in heard):
                self.s["said"][i] = cue.times  # stopped for good
                return False
        if cue.heard is not None:
            since = cue.at if last is None else last + 1
            pattern = re.compile(cue.heard, re.I)
            if not any(x.tick >= since and pattern.search(x.text) for x in heard):
                return False
        return all(_shows(scene.get(obj, ""), words) for obj, words in cue.seen.items())

    def state(self) -> dict[str, Any]:
        return {"said": list(self.s["said"]), "last": list(self.s["last"])}

    def restore(self, state: dict[str, Any]) -> None:
        self.s = {"said": list(state["said"]), "last": list(state["last"])}


def _shows(phrase: str, words: str) -> bool:
    """Whether a scene phrase ("in pan, 40% cooked") has every part of ``words`` ("in pan",
    "cooked"): whole parts, so "cooked" is not read into "40% cooked"."""
    return set(words.split(", ")) <= set(phrase.split(", "))


def parse_cues(data: Any, *, where: str = "assistant option cues") -> tuple[ScriptCue, ...]:
    """Cues from their JSON form; a bad one is refused naming the cue and field."""
    if not isinstance(data, list):
        raise ParticipantError(f"{where}: expected a list of cues")
    out = []
    for i, d in enumerate(data):
        try:
            cue = ScriptCue.model_validate(d)
            for field in ("heard", "until_heard"):
                if (pattern := getattr(cue, field)) is not None:
                    re.compile(pattern)
        except ValidationError as e:
            err = e.errors()[0]
            loc = ".".join(str(p) for p in err["loc"]) or "(cue)"
            raise ParticipantError(f"{where}[{i}].{loc}: {err['msg']}") from None
        except re.error as e:
            raise ParticipantError(
                f"{where}[{i}].{field}: not a regular expression ({e})"
            ) from None
        out.append(cue)
    return tuple(out)


def _scripted(setup: Setup) -> ScriptedAssistant:
    return ScriptedAssistant(parse_cues(setup.options.get("cues", [])))


register_assistant("scripted", _scripted)
