"""Teleoperation: Cartesian control of any arm, recording demonstrations, storing and
replaying them. No Qt: devices (keys, gamepads) are wired to :class:`Teleop` elsewhere."""

from sim.teleop._control import Command, StepReport, Teleop, default_workspace
from sim.teleop._demo import ACTION_NAMES, Demonstration, Span
from sim.teleop._demo_io import DemoFileError
from sim.teleop._export_lerobot import export_lerobot
from sim.teleop._export_robomimic import export_robomimic
from sim.teleop._import_lerobot import import_lerobot
from sim.teleop._import_robomimic import import_robomimic
from sim.teleop._project_export import FORMATS as DEMO_FORMATS
from sim.teleop._project_export import export_demonstrations, project_demonstrations
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

__all__ = [
    "ACTION_NAMES",
    "DEMO_FORMATS",
    "TELEOP_DELTA",
    "Command",
    "DemoFileError",
    "DemoReplay",
    "Demonstration",
    "Recorder",
    "SessionStatus",
    "Span",
    "StepReport",
    "Teleop",
    "TeleopSession",
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
]
