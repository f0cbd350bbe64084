"""Personas (IVG spec §3.2): four axes × three levels; two announced, two private; each axis
moves its own behaviour, monotonically."""

from __future__ import annotations

import dataclasses
import json

import pytest

from annotation import UserError
from sim.users import (
    ANNOUNCED_AXES,
    LEVEL_NAMES,
    PRIVATE_AXES,
    Level,
    Persona,
    PersonaError,
    parse_persona,
    persona,
)

# Which behaviour fields each axis may move, and in which direction as its level rises.
MOVES = {
    "skill": {"ask_next_step": "down", "plans_ahead": "up"},
    "trust": {"evidence_needed": "down"},
    "speed": {"pace": "down"},
    "interruption": {"welcomes_commentary": "down", "max_reply_words": "down"},
}


@pytest.mark.parametrize("axis", list(LEVEL_NAMES))
def test_each_axis_moves_its_own_behaviour_and_nothing_else(axis: str) -> None:
    rows = [dataclasses.asdict(Persona(**{axis: level}).behaviour()) for level in Level]
    for field in rows[0]:
        values = [float(r[field]) for r in rows]
        direction = MOVES[axis].get(field)
        if direction is None:
            assert len(set(values)) == 1, f"{axis} changed {field}: {values}"
        else:
            assert values == sorted(values, reverse=direction == "down"), (field, values)
            assert values[0] != values[-1], f"{axis} does not change {field}"


def test_only_announced_axes_reach_the_assistant() -> None:
    p = Persona(skill="high", trust="low", speed="quick", interruption="necessary-only")
    shown = p.announced()
    assert set(shown) == set(ANNOUNCED_AXES) == {"speed", "interruption"}
    assert shown == {"speed": "quick", "interruption": "necessary-only"}
    text = json.dumps(shown)
    for axis in PRIVATE_AXES:
        assert axis not in text


def test_levels_by_the_axis_words_or_numbers() -> None:
    p = parse_persona({"speed": "Cautious", "interruption": "step_by_step", "skill": 2})
    assert (p.speed, p.interruption, p.skill, p.trust) == (0, 0, 2, 1)
    assert p.level_name("interruption") == "step-by-step"
    assert parse_persona({"speed": "high"}).speed is Level.HIGH


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"speed": "fast"}, "cases[2].persona.speed: Value error, expected one of cautious, bal"),
        ({"skill": 7}, "cases[2].persona.skill: Input should be 0, 1 or 2"),
        ({"mood": "grumpy"}, "cases[2].persona.mood: Extra inputs are not permitted"),
    ],
)
def test_a_bad_persona_names_the_field(data: dict[str, object], message: str) -> None:
    with pytest.raises(PersonaError) as err:
        parse_persona(data, where="cases[2].persona")
    assert str(err.value).startswith(message) and isinstance(err.value, UserError)


def test_named_profiles_and_instructions() -> None:
    novice, expert = persona("novice"), persona("expert")
    assert (novice.skill, novice.trust) == (Level.LOW, Level.HIGH)
    assert (expert.skill, expert.trust) == (Level.HIGH, Level.LOW)
    lines = expert.instructions()
    assert len(lines) == 4
    assert "think ahead about timing, dependencies, tools, and likely failure points" in lines[0]
    assert "can feel intrusive" in lines[3]
    with pytest.raises(PersonaError, match="named personas: novice, expert"):
        persona("wizard")
