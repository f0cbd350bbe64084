"""Model-backed participants: the LLM simulated user and the LLM assistant of interactive
episodes (one audited call per turn), and the W2W / Ego2World tool agent under test.

``judge`` registers the two participants as ``llm`` in ``sim.interact``'s registries; importing
the tool agent's runner adds the ``llm`` batch agent kind (``sim.batch.AGENT_KINDS``).
"""

from judge.agents._llm_assistant import ASSISTANT_PROMPT_VERSION, LLMAssistant
from judge.agents._llm_common import ModelParticipantError
from judge.agents._llm_user import USER_PROMPT_VERSION, LLMUser
from judge.agents._tool_agent import TOOL_AGENT_PROMPT_VERSION, ToolAgent
from judge.agents._tool_agent_run import tool_agent_factory
from judge.agents._tool_agent_session import ToolAgentConfig
from judge.agents._tool_agent_tools import CATEGORIES, TOOLS, ToolSpec, action_counts, tool_usage

__all__ = [
    "ASSISTANT_PROMPT_VERSION",
    "CATEGORIES",
    "TOOLS",
    "TOOL_AGENT_PROMPT_VERSION",
    "USER_PROMPT_VERSION",
    "LLMAssistant",
    "LLMUser",
    "ModelParticipantError",
    "ToolAgent",
    "ToolAgentConfig",
    "ToolSpec",
    "action_counts",
    "tool_agent_factory",
    "tool_usage",
]
