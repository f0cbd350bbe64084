"""The W2W tool agent as an episode's agent factory (``sim run --agent llm --profile NAME``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from judge.agents._llm_common import outcome_of
from judge.agents._tool_agent import ToolAgent
from judge.agents._tool_agent_session import ToolAgentConfig
from judge.models import ModelProfile, OpenAIModel, load_profile
from sim.batch import AGENT_KINDS
from sim.episode import Agent, AgentFactory, ExchangeLog, Sink
from sim.scenario import BoundScenario
from sim.world import World
from storage import CallOutcome, ProfileNotFoundError, Profiles, Project, RunCall


def tool_agent_factory(
    project: Project, profile: str, *, config: ToolAgentConfig | None = None
) -> AgentFactory:
    """A :class:`ToolAgent` on the project's model ``profile``; every model call it makes is
    stored with the episode as an exchange (request as sent, images by evidence id, reply)."""
    return profile_agent_factory(load_profile(Profiles(project.db), profile), config=config)


def profile_agent_factory(
    settings: ModelProfile, *, config: ToolAgentConfig | None = None
) -> AgentFactory:
    """:func:`tool_agent_factory` on a profile already read (no project: a batch job run on
    a cluster gets the profile's config with its payload; the key is read where it runs)."""

    def make(bound: BoundScenario, world: World, log: ExchangeLog) -> tuple[Agent, list[Sink]]:
        pending: list[RunCall] = []  # the requests of the model call in progress

        def record(call: RunCall) -> None:
            reply = {"reply": call.reply, "ok": call.ok, "error": call.error,
                     "tokens_in": call.tokens_in, "tokens_out": call.tokens_out,
                     "cost_usd": call.cost_usd}  # fmt: skip
            pending.append(call)
            log.add(world.tick_index, dict(call.request), reply, latency_s=call.latency_s,
                    tokens=(call.tokens_in, call.tokens_out, call.cost_usd))  # fmt: skip

        def ended(how: str) -> None:
            # each request is its own exchange; the call's last one says how the call came out
            outcome = outcome_of(pending, True) if how == "replied" else how
            log.end_call(cast(CallOutcome, outcome))
            pending.clear()

        model = OpenAIModel(settings, recorder=record)
        agent = ToolAgent.for_scenario(model, bound, config=config)
        agent.on_call = ended
        return agent, []

    return make


def _llm_agent(
    profiles: Mapping[str, Mapping[str, Any]], options: Mapping[str, Any]
) -> AgentFactory | None:
    """Batch agents of kind ``llm``: option ``profile`` (a model profile of the project, its
    stored config among ``profiles``)."""
    profile = options.get("profile")
    if not isinstance(profile, str) or not profile:
        raise ProfileNotFoundError("agent option profile: name a model profile of the project")
    if profile not in profiles:
        raise ProfileNotFoundError(f"no model profile {profile!r} in this project")
    return profile_agent_factory(ModelProfile.from_config(profile, profiles[profile]))


AGENT_KINDS["llm"] = _llm_agent
