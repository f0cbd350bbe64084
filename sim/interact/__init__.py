"""Interactive episodes: simulated users, scheduled events, assistants under test (IVG)."""

from sim.interact._build import (
    CAP_SECONDS,
    InteractiveEpisode,
    build_interactive,
    default_schedule,
    known_ids,
    recipe_steps,
    replay_interactive,
    run_interactive,
    schedules_dir,
    timing_for,
)
from sim.interact._harness import EventState, Harness, History, question_text, reference_answer
from sim.interact._human import HumanUser, SeatUser
from sim.interact._metrics import (
    EpisodeInputs,
    episode_inputs,
    episode_metrics,
    store_episode_metrics,
)
from sim.interact._oracle import OracleAssistant
from sim.interact._participants import (
    ASSISTANTS,
    USERS,
    ParticipantError,
    Setup,
    make_assistant,
    make_user,
    register_assistant,
    register_user,
)
from sim.interact._replay import ReplayAssistant, ReplayDivergedError, ReplayUser
from sim.interact._rule_user import RuleUser, commands_in
from sim.interact._scene import describe_scene
from sim.interact._schedule import (
    CATEGORIES,
    ERROR_TYPES,
    QUESTION_FAMILIES,
    EventSpec,
    Schedule,
    ScheduledEvent,
    ScheduleError,
    load_schedule,
    parse_schedule,
)
from sim.interact._scripted import ScriptCue, ScriptedAssistant, parse_cues
from sim.interact._session import InteractiveAgent
from sim.interact._sink import InteractionSink
from sim.interact._types import (
    MOVES,
    Assistant,
    AssistantReply,
    AssistantView,
    Frame,
    Line,
    SimUser,
    UserTurn,
    UserView,
)

__all__ = [
    "ASSISTANTS",
    "CAP_SECONDS",
    "CATEGORIES",
    "ERROR_TYPES",
    "MOVES",
    "QUESTION_FAMILIES",
    "USERS",
    "Assistant",
    "AssistantReply",
    "AssistantView",
    "EpisodeInputs",
    "EventSpec",
    "EventState",
    "Frame",
    "Harness",
    "History",
    "HumanUser",
    "InteractionSink",
    "InteractiveAgent",
    "InteractiveEpisode",
    "Line",
    "OracleAssistant",
    "ParticipantError",
    "ReplayAssistant",
    "ReplayDivergedError",
    "ReplayUser",
    "RuleUser",
    "Schedule",
    "ScheduleError",
    "ScheduledEvent",
    "ScriptCue",
    "ScriptedAssistant",
    "SeatUser",
    "Setup",
    "SimUser",
    "UserTurn",
    "UserView",
    "build_interactive",
    "commands_in",
    "default_schedule",
    "describe_scene",
    "episode_inputs",
    "episode_metrics",
    "known_ids",
    "load_schedule",
    "make_assistant",
    "make_user",
    "parse_cues",
    "parse_schedule",
    "question_text",
    "recipe_steps",
    "reference_answer",
    "register_assistant",
    "register_user",
    "replay_interactive",
    "run_interactive",
    "schedules_dir",
    "store_episode_metrics",
    "timing_for",
]
