"""Semantic actions — the commands a person would say — and the executor's verdicts.

An :class:`Action` holds *references* as the speaker gave them ("the red brick", "mug_1");
the grounder turns them into ids. A :class:`Verdict` is what ``World.submit`` returns: accepted,
or rejected with every failed check. Rejection is an ordinary result, never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from annotation import UserError


class Verb(StrEnum):
    PICK = "pick"
    PLACE = "place"
    OPEN = "open"
    CLOSE = "close"
    TURN_ON = "turn_on"
    TURN_OFF = "turn_off"
    PUSH = "push"
    WAIT = "wait"


DIRECTIONS = ("left", "right", "forward", "back")


@dataclass(frozen=True)
class Action:
    """One semantic action. ``obj``/``target`` are references (text or ids)."""

    verb: Verb
    obj: str | None = None
    target: str | None = None
    relation: str | None = None  # "on" | "in" for place
    direction: str | None = None  # push
    distance: float = 0.1  # push, metres
    ticks: int = 0  # wait
    text: str = ""  # the utterance it came from, if any

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verb": self.verb.value}
        for key in ("obj", "target", "relation", "direction", "text"):
            value = getattr(self, key)
            if value:
                out[key] = value
        if self.verb is Verb.PUSH:
            out["distance"] = self.distance
        if self.verb is Verb.WAIT:
            out["ticks"] = self.ticks
        return out

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> Action:
        """Structured form; unknown keys or verbs raise :class:`ActionFormatError`."""
        allowed = {"verb", "obj", "target", "relation", "direction", "distance", "ticks", "text"}
        unknown = sorted(set(d) - allowed)
        if unknown:
            raise ActionFormatError(f"unknown field(s) {', '.join(unknown)}")
        try:
            verb = Verb(d["verb"])
        except (KeyError, ValueError):
            raise ActionFormatError(
                f"verb must be one of {', '.join(v.value for v in Verb)}, got {d.get('verb')!r}"
            ) from None
        return Action(
            verb=verb,
            obj=d.get("obj"),
            target=d.get("target"),
            relation=d.get("relation"),
            direction=d.get("direction"),
            distance=float(d.get("distance", 0.1)),
            ticks=int(d.get("ticks", 0)),
            text=str(d.get("text", "")),
        )

    def describe(self) -> str:
        if self.text:
            return self.text
        v = self.verb
        if v is Verb.PLACE:
            return f"place {self.obj} {self.relation or 'on'} {self.target}"
        if v is Verb.PUSH:
            return f"push {self.obj} {self.direction} {self.distance:g} m"
        if v is Verb.WAIT:
            return f"wait {self.ticks} ticks"
        return f"{v.value.replace('_', ' ')} {self.obj}"


class ActionFormatError(UserError, ValueError):
    """A command or structured action that is not an action at all (parse level)."""


@dataclass(frozen=True)
class Grounded:
    """An action whose references resolved to object ids."""

    action: Action
    obj: str | None = None
    target: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"obj": self.obj, "target": self.target}


@dataclass(frozen=True)
class Check:
    """A failed precondition or grounding problem: a machine name and a sentence."""

    name: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "message": self.message}


@dataclass(frozen=True)
class Verdict:
    """The executor's answer to one submitted action."""

    action: Action
    accepted: bool
    grounded: Grounded | None = None
    failed: tuple[Check, ...] = field(default_factory=tuple)

    @property
    def reason(self) -> str:
        return "; ".join(c.message for c in self.failed)

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action.to_json(),
            "accepted": self.accepted,
            "grounded": self.grounded.to_json() if self.grounded else None,
            "failed": [c.to_json() for c in self.failed],
        }

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> Verdict:
        action = Action.from_json(d["action"])
        g = d.get("grounded")
        grounded = Grounded(action, g.get("obj"), g.get("target")) if g else None
        failed = tuple(Check(c["name"], c["message"]) for c in d.get("failed", ()))
        return Verdict(action, bool(d["accepted"]), grounded, failed)


# -- the spoken grammar ------------------------------------------------------------------------

_REF = r"(?P<{}>.+?)"
_PATTERNS: list[tuple[Verb, re.Pattern[str]]] = [
    (Verb.WAIT, re.compile(r"^wait(?: for)?(?: (?P<n>\d+)(?: ticks?)?)?$")),
    (
        Verb.PLACE,
        re.compile(
            r"^(?:place|put|set|stack|drop)(?: down)? "
            + _REF.format("obj")
            + r" (?P<rel>on top of|onto|on|into|inside|in) "
            + _REF.format("target")
            + "$"
        ),
    ),
    (
        Verb.PICK,
        re.compile(r"^(?:pick up|pick|grab|take|lift|grasp) " + _REF.format("obj") + r"(?: up)?$"),
    ),
    (Verb.OPEN, re.compile(r"^open " + _REF.format("obj") + "$")),
    (Verb.CLOSE, re.compile(r"^(?:close|shut) " + _REF.format("obj") + "$")),
    (
        Verb.TURN_ON,
        re.compile(r"^(?:turn|switch) on " + _REF.format("obj") + "$"),
    ),
    (
        Verb.TURN_ON,
        re.compile(r"^(?:turn|switch) " + _REF.format("obj") + " on$"),
    ),
    (
        Verb.TURN_OFF,
        re.compile(r"^(?:turn|switch) off " + _REF.format("obj") + "$"),
    ),
    (
        Verb.TURN_OFF,
        re.compile(r"^(?:turn|switch) " + _REF.format("obj") + " off$"),
    ),
    (
        Verb.PUSH,
        re.compile(
            r"^(?:push|slide|nudge) "
            + _REF.format("obj")
            + r" (?:to the )?(?P<dir>left|right|forward|back|backward|away|closer)"
            + r"(?: (?:by )?(?P<cm>\d+(?:\.\d+)?) ?cm)?$"
        ),
    ),
]
_REL = {"on": "on", "onto": "on", "on top of": "on", "in": "in", "into": "in", "inside": "in"}
_DIR = {"backward": "back", "away": "forward", "closer": "back"}


def parse_command(text: str) -> Action:
    """Parse one spoken command ("put the patty in the pan") into an :class:`Action`.

    Raises :class:`ActionFormatError` with the accepted forms when it is not a command.
    """
    said = " ".join(text.strip().lower().rstrip(".!").split())
    said = re.sub(r"^(?:please|now|then|and)\s+", "", said)
    for verb, pattern in _PATTERNS:
        m = pattern.match(said)
        if not m:
            continue
        groups = m.groupdict()
        if verb is Verb.WAIT:
            return Action(Verb.WAIT, ticks=int(groups["n"] or 10), text=text.strip())
        if verb is Verb.PLACE:
            return Action(
                verb,
                obj=groups["obj"],
                target=groups["target"],
                relation=_REL[groups["rel"]],
                text=text.strip(),
            )
        if verb is Verb.PUSH:
            direction = _DIR.get(groups["dir"], groups["dir"])
            cm = float(groups["cm"]) if groups.get("cm") else 10.0
            return Action(
                verb, obj=groups["obj"], direction=direction, distance=cm / 100, text=text.strip()
            )
        return Action(verb, obj=groups["obj"], text=text.strip())
    raise ActionFormatError(
        f"not a command I know: {text!r} (say e.g. 'pick up the red brick', "
        "'put the patty in the pan', 'open the drawer', 'turn on the burner', "
        "'push the box left 10 cm', 'wait 20')"
    )
