"""Recorded episodes for review: the scene graph at any tick and the trace as timeline items.

The episode workspace (``app/gui/episode``) draws these; nothing here imports Qt.
"""

from sim.review._graphs import GraphCursor, apply_diff, changed
from sim.review._live import LiveRun
from sim.review._timeline import TRACKS, EpisodeTimeline, Item, load_timeline
from sim.review._worlds import Frame, FrameThread, WorldCursor

__all__ = [
    "TRACKS",
    "EpisodeTimeline",
    "Frame",
    "FrameThread",
    "GraphCursor",
    "Item",
    "LiveRun",
    "WorldCursor",
    "apply_diff",
    "changed",
    "load_timeline",
]
