"""The LLM assistant under test: frames, conversation and its own memory in, one reply out.

Each :meth:`LLMAssistant.respond` makes one model call (IVG spec §2.4–§2.6) built from the
:class:`sim.interact.AssistantView` alone — nothing else of the episode is within its reach:

1. system: its role, the error taxonomy, the intervention policy and the output (static text);
2. user: the task, the recipe steps and the *announced* preferences, as JSON in a DATA block;
3. user: now (tick, seconds), its Plan–Act memory (the previous structured reply, verbatim, and
   short notes of up to ``memory`` earlier replies), the conversation (the last
   :data:`DIALOGUE` lines) and the last ``window`` observations, oldest first: a frame's
   rendered image when it has one the image source can give, else its scene description.

The reply is a forced ``respond`` tool call {text, flag, flag_target, progress, goal_change,
note}, checked against its schema by the client; an invalid one is re-asked once with the
validation error (``repairs``), and if it is still invalid the assistant stays silent for that
turn, keeping its progress record. The schema lets a model name a ``flag_target`` with a null
``flag``; the reply keeps no target then (:class:`sim.interact.AssistantReply`: a target
belongs to a flag, the rule storage enforces). The latency returned is the whole call's
wall-clock time.
"""

from __future__ import annotations

from typing import Any

from judge._prompts import DATA_CLOSE, DATA_OPEN, Templates, data_block
from judge.agents._llm_common import (
    Answer,
    AuditedModel,
    ImageSource,
    project_images,
    read_options,
)
from judge.models import FrameImage, Message, ModelProfile, Tool
from sim.interact import ERROR_TYPES, AssistantReply, AssistantView, Setup

ASSISTANT_PROMPT_VERSION = "ivg-assistant@1"
TEMPLATES = Templates("ivg-assistant-v1")
STAGE = "ivg_assistant"
TOOL_NAME = "respond"
WINDOW = 8  # observations sent (spec §2.5: the 8 most recent)
MEMORY = 8  # earlier replies whose notes it keeps, besides the previous one
DIALOGUE = 40  # most recent conversation lines sent
STATE_VERSION = 1

_TEXTS = {"type": "array", "items": {"type": "string"}}
REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "what you say to the person; '' = silence"},
        "flag": {"type": ["string", "null"], "enum": [*ERROR_TYPES, None],
                 "description": "the mistake you detected now, or null"},
        "flag_target": {"type": ["string", "null"], "description": "the object it concerns"},
        "progress": {
            "type": "object",
            "properties": {"completed": _TEXTS, "current": {"type": "string"}, "future": _TEXTS,
                           "pending_requests": _TEXTS},
            "description": "your progress record of the recipe",
        },
        "goal_change": {"type": "string", "description": "an announced change of goal, or ''"},
        "note": {"type": "string", "description": "what to remember next turn"},
    },
    "required": ["text", "flag"],
    "additionalProperties": False,
}  # fmt: skip


def reply_tool() -> Tool:
    return Tool(TOOL_NAME, "Your reply this turn (only text reaches the person).", REPLY_SCHEMA)


class LLMAssistant:
    """An assistant backed by a model profile; see the module docstring.

    Args:
        profile: the endpoint (its ``schema_retries`` is the number of repairs).
        window: observations sent per query (1..32; spec: 8).
        memory: earlier replies whose notes are kept (besides the previous reply).
        images: a frame's image by its sha256, as JPEG bytes (None: send its scene text).
        api_key: overrides the profile's key lookup (tests, loopback servers).

    Raises:
        ModelParticipantError: no API key for the profile.
    """

    name = "llm"

    def __init__(
        self,
        profile: ModelProfile,
        *,
        window: int = WINDOW,
        memory: int = MEMORY,
        images: ImageSource | None = None,
        api_key: str | None = None,
    ) -> None:
        self.model = AuditedModel(profile, role="assistant", api_key=api_key)
        self.window = window
        self.memory = memory
        self.images: ImageSource = images or (lambda _sha: None)
        self.history: list[dict[str, Any]] = []  # its own replies: tick, text, flag, note
        self._tool = reply_tool()

    @classmethod
    def from_setup(cls, setup: Setup) -> LLMAssistant:
        """The registry's factory: options ``profile`` (required), ``window``, ``memory``,
        ``repairs`` and the profile overrides of
        :data:`judge.agents._llm_common.PROFILE_OPTIONS`."""
        o = read_options(setup, "assistant", {"window": (WINDOW, 1, 32), "memory": (MEMORY, 0, 64)})
        return cls(o.profile, window=o.numbers["window"], memory=o.numbers["memory"],
                   images=project_images(setup.project_root))  # fmt: skip

    # ---- the request ------------------------------------------------------------------------
    def messages(self, view: AssistantView) -> tuple[list[Message], dict[str, str]]:
        """What one query sends, and the sha256 of each image by its evidence id."""
        system = TEMPLATES.render(
            "system.md", error_types=", ".join(ERROR_TYPES), open=DATA_OPEN, close=DATA_CLOSE
        )
        task = {
            "instruction": view.instruction,
            "recipe": list(view.steps),
            "preferences": dict(view.preferences),
        }
        tick_s = view.seconds / view.tick if view.tick > 0 else None
        frames: list[dict[str, Any]] = []
        images: list[FrameImage] = []
        shas: dict[str, str] = {}
        for f in view.frames[-self.window :]:
            entry: dict[str, Any] = {"tick": f.tick}
            if tick_s is not None:
                entry["seconds"] = round(f.tick * tick_s, 3)
            jpeg = self.images(f.image) if f.image is not None else None
            if f.image is not None and jpeg is not None:
                eid = f"F{len(images) + 1}"
                images.append(FrameImage(eid, f.tick, entry.get("seconds", 0.0), jpeg,
                                         origin="frame"))  # fmt: skip
                shas[eid] = f.image
                entry["image"] = eid
            else:
                entry["scene"] = dict(f.scene)
            frames.append(entry)
        lines = view.conversation[-DIALOGUE:]
        now: dict[str, Any] = {
            "now": {"tick": view.tick, "seconds": view.seconds},
            "memory": {
                "previous_reply": view.memory,
                "earlier_notes": self.history[:-1][-self.memory :] if self.memory else [],
            },
            "conversation": [x.to_json() for x in lines],
            "frames": frames,
        }
        if len(view.conversation) > len(lines):
            now["earlier_lines_not_shown"] = len(view.conversation) - len(lines)
        return [
            Message("system", system),
            Message("user", data_block(task, TEMPLATES.text("task.md"), sort_keys=True)),
            Message(
                "user", data_block(now, TEMPLATES.text("turn.md"), sort_keys=True), tuple(images)
            ),
        ], shas

    # ---- Assistant protocol -----------------------------------------------------------------
    def respond(self, view: AssistantView) -> tuple[AssistantReply, float]:
        messages, shas = self.messages(view)
        # the audit of every request and the call's account go into the view: stored with
        # the exchange, whether the call succeeds or not
        answer = self.model.ask(stage=STAGE, prompt_version=ASSISTANT_PROMPT_VERSION,
                                messages=messages, tool=self._tool, images=shas,
                                view=view)  # fmt: skip
        reply = self._reply(answer, view)
        self.history.append(
            {"tick": view.tick, "text": reply.text, "flag": reply.flag, "note": reply.note}
        )
        del self.history[: max(0, len(self.history) - self.memory - 1)]
        return reply, answer.latency_s

    @staticmethod
    def _reply(answer: Answer, view: AssistantView) -> AssistantReply:
        if answer.call is None:
            # Silence, but the progress record survives a bad turn: memory is never reset by
            # a malformed reply (the audit holds what the model said and why it was refused).
            prev = view.memory or {}
            return AssistantReply(
                progress=dict(prev.get("progress") or {}),
                goal_change=str(prev.get("goal_change") or ""),
                note="(no valid reply last turn; stayed silent)",
            )
        args = dict(answer.call.arguments)
        args["text"] = str(args.get("text") or "").strip()
        return AssistantReply.from_json(args)

    def state(self) -> dict[str, Any]:
        return {"version": STATE_VERSION, "history": [dict(h) for h in self.history]}

    def restore(self, state: dict[str, Any]) -> None:
        if state.get("version") != STATE_VERSION:
            raise ValueError("not an LLM assistant state (or another version): cannot restore")
        self.history = [dict(h) for h in state["history"]]

    def close(self) -> None:
        self.model.close()
