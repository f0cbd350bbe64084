"""The episode engine: runner, agents, trace and sinks."""

from sim.episode._admission import admit_scenario
from sim.episode._agents import Agent, Observation, ReplayAgent, ScriptedAgent
from sim.episode._arm_files import ArmFiles, arm_files
from sim.episode._arms import (
    ARMS,
    DEFAULT_ARM,
    AddedArm,
    ArmCheckFailedError,
    ResolvedArm,
    add_arm,
    episode_arm,
    report_json,
    resolve_arm,
    run_arm,
)
from sim.episode._build import (
    AGENTS,
    MODES,
    AgentFactory,
    Episode,
    ReplayReport,
    compare_replay,
    episode_world,
    fork_episode,
    make_world,
    open_scenario,
    perturbed_at,
    recorded,
    refuse_perturbed,
    replay_episode,
    run_episode,
)
from sim.episode._demo import write_sim_cases
from sim.episode._exchange_log import ExchangeLog
from sim.episode._graphs import GraphCursor, accepted_events, apply_diff, changed
from sim.episode._runner import BaseSink, EpisodeRunner, RunState, Sink
from sim.episode._sinks import SqliteSink, VideoSink
from sim.episode._trace import (
    RUN_STATUSES,
    ActionEntry,
    AnomalyEntry,
    EpisodeResult,
    TickEntry,
)

__all__ = [
    "AGENTS",
    "ARMS",
    "DEFAULT_ARM",
    "MODES",
    "RUN_STATUSES",
    "ActionEntry",
    "AddedArm",
    "Agent",
    "AgentFactory",
    "AnomalyEntry",
    "ArmCheckFailedError",
    "ArmFiles",
    "BaseSink",
    "Episode",
    "EpisodeResult",
    "EpisodeRunner",
    "ExchangeLog",
    "GraphCursor",
    "Observation",
    "ReplayAgent",
    "ReplayReport",
    "ResolvedArm",
    "RunState",
    "ScriptedAgent",
    "Sink",
    "SqliteSink",
    "TickEntry",
    "VideoSink",
    "accepted_events",
    "add_arm",
    "admit_scenario",
    "apply_diff",
    "arm_files",
    "changed",
    "compare_replay",
    "episode_arm",
    "episode_world",
    "fork_episode",
    "make_world",
    "open_scenario",
    "perturbed_at",
    "recorded",
    "refuse_perturbed",
    "replay_episode",
    "report_json",
    "resolve_arm",
    "run_arm",
    "run_episode",
    "write_sim_cases",
]
