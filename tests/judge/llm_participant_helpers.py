"""Shared by the LLM-participant tests: a project with profiles for loopback servers, and
scripted models that read the participants' prompts (the DATA blocks) and answer sensibly."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from judge import ModelProfile, save_profile
from judge.models.loopback import FakeServer, Reply
from storage import Profiles, Project

_DATA = re.compile(r"<<<DATA\n(.*?)\nDATA>>>", re.S)


def project_with(root: Path, **servers: FakeServer) -> Project:
    """A new project holding one profile per server (named by the keyword), no key needed."""
    project = Project.create(root)
    for name, srv in servers.items():
        save_profile(Profiles(project.db), ModelProfile(
            name=name, base_url=srv.base_url, model="fake-model", api_key_env="",
            max_retries=2))  # fmt: skip
    return project


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
    return str(content)


def data_of(message: dict[str, Any]) -> Any:
    """The JSON of the DATA block in one request message."""
    m = _DATA.search(text_of(message))
    assert m is not None, "no DATA block"
    return json.loads(m.group(1))


def bodies(srv: FakeServer) -> list[dict[str, Any]]:
    return [r.body for r in srv.chat_requests]


# ---- a scripted assistant --------------------------------------------------------------------
def assistant_script(*, marks: dict[str, str] | None = None) -> Any:
    """A responder for the assistant's requests: greets on its first turn, warns (flag
    ``forgotten_step``) while the patty shows cooked and the burner on, else stays silent.
    ``marks`` are planted in the fields that must never reach the user (note, progress,
    goal_change, flag_target)."""
    m = marks or {}

    def respond(body: dict[str, Any], _n: int) -> Reply:
        now = data_of(body["messages"][2])
        frames = now["frames"]
        scene = frames[-1].get("scene", {}) if frames else {}
        first = now["memory"]["previous_reply"] is None
        cooked = "cooked" in scene.get("patty", "").split(", ")
        on = "on" in scene.get("burner", "").split(", ")
        args: dict[str, Any] = {
            "text": "",
            "flag": None,
            "progress": {"current": m.get("progress", "cooking"), "completed": []},
            "goal_change": m.get("goal", ""),
            "note": f"{m.get('note', 'seen')} at {now['now']['tick']}",
        }
        if first:
            args["text"] = "Hi, I'm watching. Ask me anything."
        elif cooked and on:
            args.update(text="You forgot a step: the burner is still on. Turn off the burner.",
                        flag="forgotten_step", flag_target=m.get("target", "burner"))  # fmt: skip
        return Reply("respond", args)

    return respond


# ---- a scripted simulated user ----------------------------------------------------------------
START = ("pick up the patty", "put the patty in the pan", "turn on the burner")
ERROR_TASK = "SYSTEM TASK (overrides everything else)"


def user_script(*, extra: tuple[str, ...] = (), echo: bool = True) -> Any:
    """A responder for the user's requests that cooks the patty: plans the start, asks what its
    SYSTEM TASK says to ask (in its own words unless ``echo``), follows a plan change, keeps
    the burner on while its mistake is active, and accepts a warning that names the burner."""

    def respond(body: dict[str, Any], _n: int) -> Reply:
        msgs = body["messages"]
        now = data_of(msgs[2])
        task = msgs[3]["content"] if len(msgs) > 3 else ""
        conv = now["conversation"]
        last = conv[-1] if conv else None
        said = {"utterance": "", "move": "continue", "plan": "retain"}
        if "start" in now["asked_because"]:
            return Reply("user_turn", {**said, "plan": "replace", "commands": [*START, *extra]})
        if task.startswith("SYSTEM TASK: ask the assistant this"):
            q = task.split("in your own words now: ", 1)[1].split(" Wait for", 1)[0]
            words = q if echo else "How many times have I picked up the patty?"
            return Reply("user_turn", {**said, "utterance": words, "move": "ask"})
        if task.startswith("SYSTEM TASK: ask the assistant to tell you"):
            q = task.split("when this happens: ", 1)[1].split(" Keep working", 1)[0]
            words = q if echo else "Tell me when the patty is done."
            return Reply("user_turn", {**said, "utterance": words, "move": "request"})
        if task.startswith("SYSTEM TASK: you change your plan"):
            plan = task.split("Commands of your new plan, in order: ", 1)[1].split("; ")
            return Reply(
                "user_turn",
                {
                    "utterance": "Change of plan, I'm adding a step.",
                    "move": "announce",
                    "plan": "append",
                    "commands": plan,
                },
            )
        in_error = task.startswith(ERROR_TASK) or any(
            t[1].startswith(ERROR_TASK) for t in now["earlier_private_tasks"]
        )
        accepted = any(x["speaker"] == "user" and "you're right" in x["text"] for x in conv)
        heard = last["text"] if last and last["speaker"] == "assistant" else ""
        if last and last["tick"] != now["tick"]:
            heard = ""  # an older line: nothing was just delivered
        if not accepted and "burner" in heard and "forgot" in heard:
            return Reply("user_turn", {"utterance": "Oh, you're right, turning it off.",
                                       "move": "accept", "plan": "replace",
                                       "commands": ["turn off the burner"],
                                       "error_call": True})  # fmt: skip
        if in_error and not accepted:
            return Reply(
                "user_turn",
                {
                    **said,
                    "error_call": False,
                    **({} if now["queue"] else {"plan": "append", "commands": ["wait 5"]}),
                },
            )
        if now["queue"] or now["doing"] or "idle" not in now["asked_because"]:
            return Reply("user_turn", said)
        state = now["state_map"]
        cooked = "cooked" in state.get("patty", "").split(", ")
        on = "on" in state.get("burner", "").split(", ")
        if cooked and not on:
            return Reply("user_turn", {**said, "utterance": "Done.", "done": True})
        if cooked and on:
            return Reply(
                "user_turn", {**said, "plan": "append", "commands": ["turn off the burner"]}
            )
        return Reply("user_turn", {**said, "plan": "append", "commands": ["wait 5"]})

    return respond
