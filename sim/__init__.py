"""Simulation: worlds, episodes and the synthetic demo content generator."""

__all__: list[str] = []
