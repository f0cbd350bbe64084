"""Personas of the simulated user: four axes, three levels each (IVG spec §3.2).

A persona is a frozen record. Two of its axes are the user's announced preferences (execution
speed, interruption) and may be told to the assistant; the other two (skill, trust in AI) are
private: the assistant must infer them, so :meth:`Persona.announced` is the only view of a
persona that may cross to the assistant side. Each level becomes

- a behavioural instruction for an LLM user (:meth:`Persona.instructions`), and
- numbers a rule-based user acts on (:meth:`Persona.behaviour`): how fast it works, how often it
  asks for the next step, how much corroboration it needs before it follows disputed advice, and
  whether unrequested commentary is welcome. Each axis moves exactly its own numbers, in the
  direction its name says, so the effect of a persona on an episode can be measured.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from annotation import UserError


class Level(IntEnum):
    """The three levels of every axis (low, middle, high), whatever the axis calls them."""

    LOW = 0
    MEDIUM = 1
    HIGH = 2


# The axes' own names for their levels, low to high, as the spec writes them.
LEVEL_NAMES: dict[str, tuple[str, str, str]] = {
    "skill": ("low", "medium", "high"),
    "trust": ("low", "medium", "high"),
    "speed": ("cautious", "balanced", "quick"),
    "interruption": ("step-by-step", "moderate", "necessary-only"),
}
ANNOUNCED_AXES = ("speed", "interruption")
PRIVATE_AXES = ("skill", "trust")

_INSTRUCTIONS: dict[str, tuple[str, str, str]] = {
    "skill": (
        "You find it hard to turn a broad goal into a reliable sequence of steps, and you often "
        "ask the assistant what to do next.",
        "You can plan the obvious steps yourself but sometimes lose track of what comes next.",
        "You keep the workflow going and plan on your own. You naturally think ahead about "
        "timing, dependencies, tools, and likely failure points.",
    ),
    "trust": (
        "Before you change course on the assistant's word, you check its claim against your "
        "memory and what you can see; for a claimed mistake you want to see the problem yourself.",
        "You follow advice that fits what you see, and ask for a reason when it does not.",
        "You take plausible guidance that fits the situation seriously, but you notice clear "
        "contradictions; a first correct warning about a mistake convinces you.",
    ),
    "speed": (
        "You work methodically and cautiously, one step at a time.",
        "You work at a steady pace.",
        "You value momentum: you overlap work and avoid unnecessary delay.",
    ),
    "interruption": (
        "You welcome close, step-by-step guidance while you work.",
        "Guidance is welcome when it is useful; you do not need a running commentary.",
        "Extra commentary during active work can feel intrusive, especially if it is not urgent "
        "or directly useful. You keep your replies short while working.",
    ),
}


class PersonaError(UserError, ValueError):
    """A persona that cannot be used; the message names the field."""


@dataclass(frozen=True)
class Behaviour:
    """What a rule-based user does with a persona (every figure per the axis it comes from).

    Attributes:
        pace: multiplier on the ticks the user takes between its own actions (speed axis:
            cautious is slower, quick faster).
        ask_next_step: chance per finished step that the user asks the assistant what to do
            next (skill axis).
        evidence_needed: corroborations (assistant repeats, or the user's own state view) needed
            before following advice that contradicts the user's plan (trust axis; 0 = the first
            plausible statement).
        welcomes_commentary: whether unrequested, non-urgent guidance is welcome (interruption).
        max_reply_words: length of the user's replies while it works (interruption axis).
        plans_ahead: whether the user anticipates dependencies (starts long steps early) instead
            of following the recipe order (skill axis).
    """

    pace: float
    ask_next_step: float
    evidence_needed: int
    welcomes_commentary: bool
    max_reply_words: int
    plans_ahead: bool


_PACE = (1.5, 1.0, 0.7)
_ASK = (0.6, 0.25, 0.05)
_EVIDENCE = (2, 1, 0)
_WELCOME = (True, True, False)
_REPLY_WORDS = (40, 20, 8)
_PLANS_AHEAD = (False, False, True)


class Persona(BaseModel):
    """One combination of levels on the four axes (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "custom"
    skill: Level = Level.MEDIUM
    trust: Level = Level.MEDIUM
    speed: Level = Level.MEDIUM
    interruption: Level = Level.MEDIUM

    @field_validator("skill", "trust", "speed", "interruption", mode="before")
    @classmethod
    def _level(cls, value: Any, info: Any) -> Any:
        """Levels by the axis's own words ("quick", "necessary-only"), low/medium/high or 0-2."""
        if isinstance(value, str):
            names = LEVEL_NAMES[info.field_name]
            word = value.strip().lower().replace("_", "-")
            if word in names:
                return Level(names.index(word))
            if word in ("low", "medium", "high"):
                return Level(("low", "medium", "high").index(word))
            raise ValueError(f"expected one of {', '.join(names)}")
        return value

    def level_name(self, axis: str) -> str:
        return LEVEL_NAMES[axis][int(getattr(self, axis))]

    def announced(self) -> dict[str, str]:
        """The user's stated preferences: the only part of a persona the assistant may see."""
        return {axis: self.level_name(axis) for axis in ANNOUNCED_AXES}

    def instructions(self) -> list[str]:
        """One behavioural instruction per axis, for the user's own (private) prompt."""
        return [_INSTRUCTIONS[axis][int(getattr(self, axis))] for axis in LEVEL_NAMES]

    def behaviour(self) -> Behaviour:
        s, t, v, i = (int(self.skill), int(self.trust), int(self.speed), int(self.interruption))
        return Behaviour(
            pace=_PACE[v],
            ask_next_step=_ASK[s],
            evidence_needed=_EVIDENCE[t],
            welcomes_commentary=_WELCOME[i],
            max_reply_words=_REPLY_WORDS[i],
            plans_ahead=_PLANS_AHEAD[s],
        )

    def describe(self) -> str:
        return f"{self.name}: " + ", ".join(f"{a} {self.level_name(a)}" for a in LEVEL_NAMES)


def parse_persona(data: Mapping[str, Any], *, where: str = "persona") -> Persona:
    """A persona from a scenario or manifest entry; a bad one is refused naming the field."""
    try:
        return Persona.model_validate(dict(data))
    except ValidationError as e:
        err = e.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "(persona)"
        raise PersonaError(f"{where}.{field}: {err['msg']}") from None


# Named profiles (spec §3.2); the benchmark's three personas per case are drawn from these.
PROFILES: dict[str, Persona] = {
    p.name: p
    for p in (
        Persona(name="novice", skill=Level.LOW, trust=Level.HIGH, speed=Level.LOW,
                interruption=Level.LOW),
        Persona(name="expert", skill=Level.HIGH, trust=Level.LOW, speed=Level.HIGH,
                interruption=Level.HIGH),
        Persona(name="balanced"),
        Persona(name="fast-sceptic", skill=Level.MEDIUM, trust=Level.LOW, speed=Level.HIGH,
                interruption=Level.HIGH),
    )
}  # fmt: skip


def persona(name: str) -> Persona:
    """A named profile."""
    try:
        return PROFILES[name]
    except KeyError:
        raise PersonaError(f"no persona {name!r}; named personas: {', '.join(PROFILES)}") from None
