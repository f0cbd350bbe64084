"""The LLM simulated user: a model role-playing a person with a persona (IVG spec §3.1–§3.4).

Each :meth:`LLMUser.turn` makes one model call built from the :class:`sim.interact.UserView`
alone, in the order of the spec's J.5 prompt:

1. system: the role-play, the persona's behavioural instructions on all four axes (hidden ones
   included: this is the user's own prompt) and its stated preferences, the command vocabulary
   and the structured output;
2. user: the task, as JSON in a DATA block;
3. user: its private state: why it is asked, its state map (the privileged scene graph as text,
   hidden objects included), what it holds and is doing, its queue and who controls it,
   feedback since its last turn (and a little of earlier feedback), the conversation;
4. user, only while an event concerns it: the harness's SYSTEM TASK, verbatim (and the new
   plan's commands for a plan change) — outside any DATA block, so that the assistant, which is
   only ever quoted inside one, cannot forge a task.

The reply is a forced ``user_turn`` tool call {utterance, move, plan, commands, error_call,
done}; an invalid one is re-asked once with the validation error, and if it is still invalid the
user waits silently (continue, queue retained) — never an error mid-episode (spec §8 item 14).
Nothing the assistant returned but its words can reach this prompt: the view has no field for
its flags, notes or progress record.
"""

from __future__ import annotations

from typing import Any

from judge._prompts import DATA_CLOSE, DATA_OPEN, Templates, data_block
from judge.agents._llm_common import AuditedModel, read_options
from judge.models import Message, ModelProfile, Tool
from sim.interact import MOVES, Setup, UserTurn, UserView, describe_scene
from sim.world import SceneGraph

USER_PROMPT_VERSION = "ivg-user@1"
TEMPLATES = Templates("ivg-user-v1")
STAGE = "ivg_user"
TOOL_NAME = "user_turn"
DIALOGUE = 40  # most recent conversation lines sent
FEEDBACK = 10  # earlier feedback lines it remembers
TASKS = 3  # earlier private tasks it remembers (a question asked, a plan announced)
STATE_VERSION = 1

TURN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "utterance": {"type": "string", "description": "what you say aloud; '' = silence"},
        "move": {"type": "string", "enum": list(MOVES)},
        "plan": {"type": "string", "enum": ["retain", "append", "replace"]},
        "commands": {"type": "array", "items": {"type": "string"}},
        "error_call": {"type": ["boolean", "null"]},
        "done": {"type": "boolean"},
    },
    "required": ["utterance", "move", "plan"],
    "additionalProperties": False,
}


def turn_tool() -> Tool:
    return Tool(TOOL_NAME, "Your turn: words, a move, a queue change.", TURN_SCHEMA)


def state_map(graph: SceneGraph | None) -> dict[str, str]:
    """The user's privileged map: what the camera shows, plus what is shut away and where."""
    if graph is None:
        return {}
    out = describe_scene(graph)
    for k in sorted(graph.nodes):
        if k in out or graph.nodes[k].type == "table":
            continue
        inside = [c for c in graph.inside(k) if c != "table"]
        out[k] = f"in {inside[0]} (closed, not visible)" if inside else "not visible"
    return out


class LLMUser:
    """A simulated user backed by a model profile; see the module docstring.

    Raises:
        ModelParticipantError: no API key for the profile.
    """

    name = "llm"

    def __init__(self, profile: ModelProfile, *, api_key: str | None = None) -> None:
        self.model = AuditedModel(profile, role="simulated user", api_key=api_key)
        self.feedback: list[list[Any]] = []  # [tick, line] it was told earlier
        self.tasks: list[list[Any]] = []  # [tick, SYSTEM TASK] it was given earlier
        self._tool = turn_tool()

    @classmethod
    def from_setup(cls, setup: Setup) -> LLMUser:
        """The registry's factory: options ``profile`` (required), ``repairs`` and the profile
        overrides of :data:`judge.agents._llm_common.PROFILE_OPTIONS`."""
        return cls(read_options(setup, "simulated user", {}).profile)

    # ---- the request ------------------------------------------------------------------------
    def messages(self, view: UserView) -> list[Message]:
        persona = "\n".join(f"- {x}" for x in view.persona)
        prefs = ", ".join(f"{k} {v}" for k, v in sorted(view.preferences.items()))
        system = TEMPLATES.render(
            "system.md",
            persona=persona, preferences=prefs or "none", moves=", ".join(MOVES),
            open=DATA_OPEN, close=DATA_CLOSE,
        )  # fmt: skip
        lines = view.conversation[-DIALOGUE:]
        now: dict[str, Any] = {
            "tick": view.tick,
            "asked_because": view.reason.split(","),
            "state_map": state_map(view.graph),
            "holding": view.holding,
            "doing": view.current,
            "queue": list(view.queue),
            "queue_controlled_by": "you" if view.controlled_by == "user" else "SYSTEM TASK",
            "feedback": list(view.feedback),
            "earlier_feedback": self.feedback[-FEEDBACK:],
            "earlier_private_tasks": self.tasks[-TASKS:],
            "steps_done": view.done_steps,
            "conversation": [x.to_json() for x in lines],
        }
        if len(view.conversation) > len(lines):
            now["earlier_lines_not_shown"] = len(view.conversation) - len(lines)
        task_data = {"instruction": view.instruction}
        out = [
            Message("system", system),
            Message("user", data_block(task_data, TEMPLATES.text("task.md"), sort_keys=True)),
            Message("user", data_block(now, TEMPLATES.text("turn.md"), sort_keys=True)),
        ]
        if view.system_task:
            task = view.system_task
            plan = (view.event or {}).get("plan") or []
            if plan:
                extra = TEMPLATES.render("event.md", plan="; ".join(plan))
                task = f"{task}\n{extra}"
            out.append(Message("user", task))
        return out

    # ---- SimUser protocol -------------------------------------------------------------------
    def turn(self, view: UserView) -> UserTurn:
        # the audit and the call's account go into the view, stored with the exchange
        answer = self.model.ask(stage=STAGE, prompt_version=USER_PROMPT_VERSION,
                                messages=self.messages(view), tool=self._tool, images={},
                                view=view)  # fmt: skip
        self.feedback.extend([view.tick, f] for f in view.feedback)
        del self.feedback[: max(0, len(self.feedback) - FEEDBACK)]
        if view.system_task and (not self.tasks or self.tasks[-1][1] != view.system_task):
            self.tasks.append([view.tick, view.system_task])
            del self.tasks[: max(0, len(self.tasks) - TASKS)]
        if answer.call is None:
            return UserTurn()  # a silent wait, the queue retained
        return UserTurn.from_json(dict(answer.call.arguments))

    def state(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "feedback": [list(x) for x in self.feedback],
            "tasks": [list(x) for x in self.tasks],
        }

    def restore(self, state: dict[str, Any]) -> None:
        if state.get("version") != STATE_VERSION:
            raise ValueError("not an LLM user state (or another version): cannot restore")
        self.feedback = [list(x) for x in state["feedback"]]
        self.tasks = [list(x) for x in state["tasks"]]

    def close(self) -> None:
        self.model.close()
