"""Symbolic fast mode: the scene graph and action rules without physics."""

from sim.symbolic._world import SymbolicWorld, initial_graph

__all__ = ["SymbolicWorld", "initial_graph"]
