"""VLM judges and model clients; importing it registers the ``judge.video`` and
``judge.quality`` job kinds.

The queue, the job-kind registry and the worker runtime are ``storage``'s (neutral ground that
``sim`` shares); ``judge`` only registers its kind.

By concern: ``judge.models`` calls a model (client, wire format, profiles and keys, spend cap,
scripted model; the loopback server in ``judge.models.loopback``), ``judge._prompts`` is the one
prompt helper, and above them, independent of each other, ``judge.video`` (the staged Ego2Act
judge and its job), ``judge.quality`` (the interaction-quality judge) and ``judge.agents`` (the
LLM user, the LLM assistant and the tool agent).
"""

from judge.agents import (
    ASSISTANT_PROMPT_VERSION,
    CATEGORIES,
    TOOL_AGENT_PROMPT_VERSION,
    TOOLS,
    USER_PROMPT_VERSION,
    LLMAssistant,
    LLMUser,
    ModelParticipantError,
    ToolAgent,
    ToolAgentConfig,
    ToolSpec,
    action_counts,
    tool_agent_factory,
    tool_usage,
)
from judge.models import (
    ASSUMED,
    Capabilities,
    ModelCallFailed,
    ModelProfile,
    OpenAIModel,
    QueueError,
    ScriptedModel,
    load_profile,
    probe_and_save,
    probe_capabilities,
    resolve_api_key,
    save_profile,
    store_api_key,
)
from judge.quality import PROMPT_VERSION as QUALITY_PROMPT_VERSION
from judge.quality import (
    QUALITY_KIND,
    QualityRound,
    QualityRoundsError,
    QualityScores,
    episode_rounds,
    quality_items,
    quality_scores,
    queue_quality,
    run_judge_quality,
    stored_verdicts,
)
from judge.video import (
    JUDGE_KIND,
    MAX_CONTINUITY_WINDOWS,
    MODES,
    PROMPT_VERSION,
    JudgeCancelled,
    JudgeConfig,
    JudgeResult,
    PipelineError,
    judge_video,
    perfect_judge,
    queue_judge,
    rule_scores,
    run_judge_video,
    scripted_judge,
    video_judge_refusal,
)
from sim.interact import register_assistant, register_user

# The participant registry is sim's; importing judge adds the model-backed participants.
register_assistant("llm", LLMAssistant.from_setup)
register_user("llm", LLMUser.from_setup)

__all__: list[str] = [
    "ASSISTANT_PROMPT_VERSION",
    "ASSUMED",
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
    "Capabilities",
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
    "probe_and_save",
    "probe_capabilities",
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
    "video_judge_refusal",
]
