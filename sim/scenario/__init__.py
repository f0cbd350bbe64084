"""Scenario files: format, validation, binding to a scene, the shipped set."""

from sim.scenario._bind import (
    BoundScenario,
    ReferenceStep,
    ScheduledAnomaly,
    bind,
    schedule_from_json,
    schedule_to_json,
)
from sim.scenario._format import FORMAT, Scenario, ScenarioError, load_scenario, parse_scenario
from sim.scenario._shipped import resolve, scenario_dir, shipped

__all__ = [
    "FORMAT",
    "BoundScenario",
    "ReferenceStep",
    "Scenario",
    "ScenarioError",
    "ScheduledAnomaly",
    "bind",
    "load_scenario",
    "parse_scenario",
    "resolve",
    "scenario_dir",
    "schedule_from_json",
    "schedule_to_json",
    "shipped",
]
