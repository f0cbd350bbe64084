"""Recorded episodes for review: the scene graph at any tick and the trace as timeline items.

The episode workspace (``app/gui/episode``) draws these; nothing here imports Qt.
"""

from sim.episode import GraphCursor, apply_diff, changed
from sim.review._belief import Mismatch, mismatches
from sim.review._bundle import FORMAT as BUNDLE_FORMAT
from sim.review._bundle import BundleFormatError, read_bundle
from sim.review._bundle_export import export_bundle
from sim.review._bundle_import import BundleImport, import_bundle, import_episode_bundle
from sim.review._camera import FreeCamera
from sim.review._fork import first_divergence, fork_build, fork_world
from sim.review._live import Build, LiveRun
from sim.review._live_frames import LiveFrames
from sim.review._rerun import INSTALL_HINT as RERUN_INSTALL_HINT
from sim.review._rerun import RerunExport, RerunMissingError, export_rerun
from sim.review._timeline import TRACKS, EpisodeTimeline, Item, diverges_at, load_timeline
from sim.review._videos import VideoFrames
from sim.review._worlds import Frame, FrameThread, WorldCursor

__all__ = [
    "BUNDLE_FORMAT",
    "RERUN_INSTALL_HINT",
    "TRACKS",
    "Build",
    "BundleFormatError",
    "BundleImport",
    "EpisodeTimeline",
    "Frame",
    "FrameThread",
    "FreeCamera",
    "GraphCursor",
    "Item",
    "LiveFrames",
    "LiveRun",
    "Mismatch",
    "RerunExport",
    "RerunMissingError",
    "VideoFrames",
    "WorldCursor",
    "apply_diff",
    "changed",
    "diverges_at",
    "export_bundle",
    "export_rerun",
    "first_divergence",
    "fork_build",
    "fork_world",
    "import_bundle",
    "import_episode_bundle",
    "load_timeline",
    "mismatches",
    "read_bundle",
]
