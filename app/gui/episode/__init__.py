"""The episode workspace of the window: a recorded episode on one playhead."""

from __future__ import annotations

from app.gui.episode._browser import EpisodeBrowser
from app.gui.episode._workspace import EpisodeWorkspace
from app.gui.episode._world_view import WorldView

__all__ = ["EpisodeBrowser", "EpisodeWorkspace", "WorldView"]
