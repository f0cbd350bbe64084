"""Simulation: worlds, episodes, and the synthetic demo content generator.

Subpackages: ``sim.world`` (scene graph, actions, rules), ``sim.symbolic`` (fast mode),
``sim.mujoco`` (physics worlds, arms, controller), ``sim.contracts`` (task contracts and
metrics), ``sim.scenario`` (scenario files), ``sim.episode`` (the engine), ``sim.synthetic``
(2-D demo videos). Nothing heavy is imported until used.
"""

from __future__ import annotations

from typing import Any

__all__ = ["build_demo_project"]


def __getattr__(name: str) -> Any:
    if name == "build_demo_project":
        from sim._demo import build_demo_project

        return build_demo_project
    raise AttributeError(name)
