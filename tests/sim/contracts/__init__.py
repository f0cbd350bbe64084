"""Tests for sim.contracts."""
