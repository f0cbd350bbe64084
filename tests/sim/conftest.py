"""Fixtures shared by the simulation tests."""

from __future__ import annotations

import pytest

from sim.world import SceneInfo
from tests.sim.fakescene import fake_scene


@pytest.fixture
def info() -> SceneInfo:
    """A hand-built scene (no MuJoCo): table, bricks, mugs, drawer, kitchen items."""
    return fake_scene()
