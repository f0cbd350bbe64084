"""Simulated users: personas (and, to come, the rule-based, LLM and human users)."""

from sim.users._persona import (
    ANNOUNCED_AXES,
    LEVEL_NAMES,
    PRIVATE_AXES,
    PROFILES,
    Behaviour,
    Level,
    Persona,
    PersonaError,
    parse_persona,
    persona,
)

__all__ = [
    "ANNOUNCED_AXES",
    "LEVEL_NAMES",
    "PRIVATE_AXES",
    "PROFILES",
    "Behaviour",
    "Level",
    "Persona",
    "PersonaError",
    "parse_persona",
    "persona",
]
