"""Symbolic fast mode: the scene graph and action rules without physics."""

from sim.symbolic._world import SymbolicWorld, initial_graph, verdict_from_json

__all__ = ["SymbolicWorld", "initial_graph", "verdict_from_json"]
