"""The scenarios that ship with the workbench (``resources/sim/scenarios/*.json``)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from sim.scenario._format import Scenario, ScenarioError, load_scenario


def scenario_dir() -> Path:
    return Path(str(resources.files("resources") / "sim" / "scenarios"))


def shipped() -> dict[str, Path]:
    """Shipped scenario name → file."""
    return {p.stem: p for p in sorted(scenario_dir().glob("*.json"))}


def resolve(ref: str) -> tuple[Scenario, str]:
    """A shipped scenario by name, or a scenario file by path; returns it and its source."""
    known = shipped()
    if ref in known:
        return load_scenario(known[ref]), ref
    path = Path(ref)
    if path.suffix == ".json" or path.exists():
        if not path.exists():
            raise ScenarioError(f"{ref}: no such scenario file")
        return load_scenario(path), str(path.resolve())
    raise ScenarioError(
        f"{ref!r} is neither a shipped scenario nor a file (shipped: {', '.join(known)})"
    )
