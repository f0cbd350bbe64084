"""Simulation: worlds, episodes, and the synthetic demo content generator."""

from sim._demo import build_demo_project

__all__ = ["build_demo_project"]
