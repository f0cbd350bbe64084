"""VLM judges and model clients; importing it registers the ``judge.video`` and
``judge.quality`` job kinds.

The queue, the job-kind registry and the worker runtime are ``storage``'s (neutral ground that
``sim`` shares); ``judge`` only registers its kind."""

from judge._client import ModelCallFailed, OpenAIModel
from judge._llm_assistant import ASSISTANT_PROMPT_VERSION, LLMAssistant
from judge._llm_common import ModelParticipantError
from judge._llm_user import USER_PROMPT_VERSION, LLMUser
from judge._pipeline import (
    MAX_CONTINUITY_WINDOWS,
    MODES,
    PROMPT_VERSION,
    JudgeCancelled,
    JudgeConfig,
    JudgeResult,
    PipelineError,
    judge_video,
    rule_scores,
)
from judge._profiles import (
    ModelProfile,
    load_profile,
    resolve_api_key,
    save_profile,
    store_api_key,
)
from judge._quality_items import quality_items
from judge._quality_judge import QUALITY_KIND, run_judge_quality
from judge._quality_judge_prompt import PROMPT_VERSION as QUALITY_PROMPT_VERSION
from judge._quality_judge_rounds import QualityRound, QualityRoundsError, episode_rounds
from judge._quality_judge_scores import (
    QualityScores,
    quality_scores,
    queue_quality,
    stored_verdicts,
)
from judge._queue import JUDGE_KIND, QueueError, queue_judge
from judge._scripted import ScriptedModel, perfect_judge, scripted_judge
from judge._tool_agent import TOOL_AGENT_PROMPT_VERSION, ToolAgent
from judge._tool_agent_run import tool_agent_factory
from judge._tool_agent_session import ToolAgentConfig
from judge._tool_agent_tools import CATEGORIES, TOOLS, ToolSpec, action_counts, tool_usage
from judge._video_job import run_judge_video
from sim.interact import register_assistant, register_user

# The participant registry is sim's; importing judge adds the model-backed participants.
register_assistant("llm", LLMAssistant.from_setup)
register_user("llm", LLMUser.from_setup)

__all__: list[str] = [
    "ASSISTANT_PROMPT_VERSION",
    "CATEGORIES",
    "JUDGE_KIND",
    "MAX_CONTINUITY_WINDOWS",
    "MODES",
    "PROMPT_VERSION",
    "QUALITY_KIND",
    "QUALITY_PROMPT_VERSION",
    "TOOLS",
    "TOOL_AGENT_PROMPT_VERSION",
    "USER_PROMPT_VERSION",
    "JudgeCancelled",
    "JudgeConfig",
    "JudgeResult",
    "LLMAssistant",
    "LLMUser",
    "ModelCallFailed",
    "ModelParticipantError",
    "ModelProfile",
    "OpenAIModel",
    "PipelineError",
    "QualityRound",
    "QualityRoundsError",
    "QualityScores",
    "QueueError",
    "ScriptedModel",
    "ToolAgent",
    "ToolAgentConfig",
    "ToolSpec",
    "action_counts",
    "episode_rounds",
    "judge_video",
    "load_profile",
    "perfect_judge",
    "quality_items",
    "quality_scores",
    "queue_judge",
    "queue_quality",
    "resolve_api_key",
    "rule_scores",
    "run_judge_quality",
    "run_judge_video",
    "save_profile",
    "scripted_judge",
    "store_api_key",
    "stored_verdicts",
    "tool_agent_factory",
    "tool_usage",
]
