"""The episode engine: runner, agents, trace and sinks."""

from sim.episode._admission import admit_scenario
from sim.episode._agents import Agent, Observation, ReplayAgent, ScriptedAgent
from sim.episode._build import (
    AGENTS,
    ARMS,
    MODES,
    AgentFactory,
    Episode,
    ReplayReport,
    compare_replay,
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
    "MODES",
    "RUN_STATUSES",
    "ActionEntry",
    "Agent",
    "AgentFactory",
    "AnomalyEntry",
    "BaseSink",
    "Episode",
    "EpisodeResult",
    "EpisodeRunner",
    "ExchangeLog",
    "GraphCursor",
    "Observation",
    "ReplayAgent",
    "ReplayReport",
    "RunState",
    "ScriptedAgent",
    "Sink",
    "SqliteSink",
    "TickEntry",
    "VideoSink",
    "accepted_events",
    "admit_scenario",
    "apply_diff",
    "changed",
    "compare_replay",
    "fork_episode",
    "make_world",
    "open_scenario",
    "perturbed_at",
    "recorded",
    "refuse_perturbed",
    "replay_episode",
    "run_episode",
    "write_sim_cases",
]
