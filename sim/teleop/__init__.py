"""Teleoperation: Cartesian control of any arm, recording demonstrations, storing and
replaying them. No Qt: devices (keys, gamepads) are wired to :class:`Teleop` elsewhere; they
give screen-frame commands, which :func:`to_world` turns into world ones (``_view``)."""

from sim.teleop._control import SCREEN, WORLD, Command, StepReport, Teleop, default_workspace
from sim.teleop._demo import ACTION_NAMES, Demonstration, Span
from sim.teleop._demo_io import DemoFileError
from sim.teleop._demo_video import DEFAULT_CAMERAS as DEMO_CAMERAS
from sim.teleop._demo_video import RecordedVideos, StateVideos, VideoSource
from sim.teleop._export_lerobot import export_lerobot
from sim.teleop._export_robomimic import export_robomimic
from sim.teleop._import_lerobot import import_lerobot
from sim.teleop._import_robomimic import import_robomimic
from sim.teleop._project_export import FORMATS as DEMO_FORMATS
from sim.teleop._project_export import Exported, export_demonstrations, project_demonstrations
from sim.teleop._project_import import import_demonstrations, perceived_graphs
from sim.teleop._rate import rate_demonstrations
from sim.teleop._record import TELEOP_DELTA, Recorder, model_xml
from sim.teleop._replay import DemoReplay, replay_demonstration
from sim.teleop._session import SessionStatus, TeleopSession
from sim.teleop._store import (
    list_demonstrations,
    load_demonstration,
    state_hash,
    store_demonstration,
)
from sim.teleop._view import ALIGNED, ScreenAxes, camera_axes, camera_id, to_world, world_command

__all__ = [
    "ACTION_NAMES",
    "ALIGNED",
    "DEMO_CAMERAS",
    "DEMO_FORMATS",
    "SCREEN",
    "TELEOP_DELTA",
    "WORLD",
    "Command",
    "DemoFileError",
    "DemoReplay",
    "Demonstration",
    "Exported",
    "RecordedVideos",
    "Recorder",
    "ScreenAxes",
    "SessionStatus",
    "Span",
    "StateVideos",
    "StepReport",
    "Teleop",
    "TeleopSession",
    "VideoSource",
    "camera_axes",
    "camera_id",
    "default_workspace",
    "export_demonstrations",
    "export_lerobot",
    "export_robomimic",
    "import_demonstrations",
    "import_lerobot",
    "import_robomimic",
    "list_demonstrations",
    "load_demonstration",
    "model_xml",
    "perceived_graphs",
    "project_demonstrations",
    "rate_demonstrations",
    "replay_demonstration",
    "state_hash",
    "store_demonstration",
    "to_world",
    "world_command",
]
