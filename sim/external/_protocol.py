"""The messages of protocol ``workbench-agent/1`` (docs/external-agent-protocol.md).

Builders turn engine values into the JSON objects the workbench sends; parsers check what an
agent sends and raise :class:`MessageError` naming the field, which the agent wraps with the
message number and who sent it. Messages are strict: an unknown field is an error, so a typo in
an agent ("action" for "actions") fails loudly instead of being ignored.

What an agent sends is stored with the episode, so it is bounded like any file from elsewhere
(:mod:`storage.guard`): a message is at most ``LIMITS.agent_message_bytes`` (the transport stops
reading past it), nested at most ``LIMITS.json_depth`` deep, every text (a ``say``, a ``claim``,
a command) at most ``LIMITS.text_chars`` characters and every integer within SQLite's range.
A message over a limit is refused, naming the field, like any other broken message: nothing of
it is cut and kept, so an agent learns at once instead of having its words shortened quietly.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from annotation import UserError
from sim.scenario import BoundScenario
from sim.world import Action, ActionFormatError, Outcome, SceneGraph, Verb, Verdict, parse_command
from storage.guard import LIMITS, LimitError, check_int

PROTOCOL = "workbench-agent/1"
FRAME_SIZES = range(16, 2049)  # pixels per side a frame may have

#: the verbs and their fields, as ``hello`` announces them
VOCABULARY: dict[str, dict[str, str]] = {
    Verb.PICK: {"obj": "object reference (id or words: 'brick_red', 'the red brick')"},
    Verb.PLACE: {"obj": "object reference", "target": "object reference", "relation": "on | in"},
    Verb.OPEN: {"obj": "object reference"},
    Verb.CLOSE: {"obj": "object reference"},
    Verb.TURN_ON: {"obj": "object reference"},
    Verb.TURN_OFF: {"obj": "object reference"},
    Verb.PUSH: {
        "obj": "object reference",
        "direction": "left | right | forward | back",
        "distance": "metres, default 0.1",
    },
    Verb.WAIT: {"ticks": "whole ticks"},
}
COMMAND_EXAMPLES = ("pick up the red brick", "put the patty in the pan", "open the drawer",
                    "turn on the burner", "push the box left 10 cm", "wait 20")  # fmt: skip


class ExternalAgentError(UserError, RuntimeError):
    """An external agent broke the protocol, could not be started, exited or did not answer."""


class MessageError(Exception):
    """One problem in one received message: the field (dotted path, may be empty) and why."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}" if field else problem)
        self.field = field
        self.problem = problem


@dataclass(frozen=True)
class Ready:
    name: str
    version: str
    cameras: tuple[str, ...]  # the frames asked for (empty: none)
    width: int
    height: int
    every_tick: bool


@dataclass(frozen=True)
class Reply:
    """An agent's answer to an observation: ``act``, ``wait`` or ``done``."""

    kind: str
    actions: tuple[Action, ...] = ()
    say: str | None = None
    ticks: int = 1  # wait: ask again no earlier than this many ticks later
    claim: str | None = None  # done: stored with the episode, never scored


# -- workbench → agent -------------------------------------------------------------------------
def hello(bound: BoundScenario, mode: str, delta: float, cameras: Sequence[str]) -> dict[str, Any]:
    s = bound.scenario
    frames: dict[str, Any] = (
        {"available": True, "format": "png", "encoding": "base64"}
        if cameras
        else {"available": False, "reason": f"the {mode} world has no cameras"}
    )
    return {
        "type": "hello",
        "protocol": PROTOCOL,
        "scenario": {"name": s.name, "title": s.title, "family": s.family},
        "instruction": s.instruction,
        "mode": mode,
        "tick_seconds": delta,
        "budgets": s.budgets.model_dump(),
        "cameras": list(cameras),
        "frames": frames,
        "actions": {
            "verbs": {str(v): dict(fields) for v, fields in VOCABULARY.items()},
            "commands": "a plain command string is accepted wherever an action object is",
            "examples": list(COMMAND_EXAMPLES),
        },
    }


def graph_view(graph: SceneGraph) -> dict[str, Any]:
    """Objects and relations the agent may see: hidden objects (in a closed container) and
    every relation naming one are left out, as a camera would not show them."""
    shown = {k for k, n in graph.nodes.items() if n.visible}
    objects = [
        {
            "id": n.id,
            "type": n.type,
            "color": n.color,
            "pos": [round(v, 4) for v in n.pos],
            "tags": sorted(n.tags),
            "attrs": {k: round(v, 4) if isinstance(v, float) else v for k, v in n.attrs.items()},
        }
        for n in (graph.nodes[k] for k in sorted(shown))
    ]
    relations = sorted(
        [kind, a, b]
        for kind, a, b in graph.relations
        if a in shown and (b in shown or b in ("", "gripper"))
    )
    return {"objects": objects, "relations": relations}


def observation(
    tick: int,
    busy: bool,
    queued: int,
    graph: SceneGraph,
    verdicts: Sequence[Verdict],
    finished: Sequence[Outcome],
    frames: Mapping[str, str] | None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "observation",
        "tick": tick,
        "busy": busy,
        "queued": queued,
        "graph": graph_view(graph),
        "verdicts": [v.to_json() for v in verdicts],
        "finished": [
            {
                "action": o.verdict.action.to_json(),
                "result": o.result,
                "started": o.started,
                "finished": o.finished,
            }
            for o in finished
        ],
    }
    if frames:
        out["frames"] = dict(frames)
    return out


# -- agent → workbench -------------------------------------------------------------------------
def decode(raw: bytes) -> dict[str, Any]:
    """One line as a JSON object, within the limits (see the module docstring)."""
    if len(raw) > LIMITS.agent_message_bytes:
        raise MessageError("", too_long(len(raw)))
    try:
        msg = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise MessageError("", f"not UTF-8 ({e.reason} at byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise MessageError("", f"not JSON ({e.msg} at column {e.colno})") from None
    except (RecursionError, ValueError) as e:  # nested past Python's stack; 5,000-digit numbers
        why = "nested too deep" if isinstance(e, RecursionError) else str(e)
        raise MessageError("", f"not JSON the workbench can read ({why})") from None
    if not isinstance(msg, dict):
        raise MessageError("", f"must be a JSON object, got {type(msg).__name__}")
    _check_values(msg)
    if not isinstance(msg.get("type"), str):
        raise MessageError("type", "missing (every message names its type)")
    return msg


def too_long(size: int) -> str:
    """Why a message of ``size`` bytes (or more) is refused."""
    return (f"the message is {size:,} bytes or more; the limit is "
            f"{LIMITS.agent_message_bytes:,} (a say may have {LIMITS.text_chars:,} "
            "characters; send frames and logs elsewhere)")  # fmt: skip


def _check_values(msg: dict[str, Any]) -> None:
    """Depth, text lengths and integer ranges, each refusal naming the field
    (``say``, ``actions[2]``, ``agent.name``)."""
    stack: list[tuple[Any, str, int]] = [(msg, "", 0)]
    while stack:
        value, at, depth = stack.pop()
        if depth > LIMITS.json_depth:
            raise MessageError(at, f"nested deeper than {LIMITS.json_depth} levels")
        if isinstance(value, dict):
            stack.extend((v, f"{at}.{k}" if at else str(k), depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{at}[{i}]", depth + 1) for i, v in enumerate(value))
        elif isinstance(value, str) and len(value) > LIMITS.text_chars:
            raise MessageError(at, f"is {len(value):,} characters; the limit is "
                                   f"{LIMITS.text_chars:,}")  # fmt: skip
        elif isinstance(value, int) and not isinstance(value, bool):
            try:  # ticks and the like end up in SQLite
                check_int(value, source="message", field=at)
            except LimitError:
                raise MessageError(
                    at, f"{value!s:.40} is beyond the integers stored (±2⁶³)"
                ) from None


def parse_ready(msg: Mapping[str, Any], cameras: Sequence[str]) -> Ready:
    _expect(msg, ("ready",))
    protocol = msg.get("protocol")  # first: another version may well have other fields
    if protocol != PROTOCOL:
        raise MessageError("protocol", f"the agent speaks {protocol!r}; this workbench speaks "
                                    f"{PROTOCOL!r}")  # fmt: skip
    _fields(msg, {"type", "protocol", "agent", "frames", "every_tick"})
    agent = msg.get("agent")
    if not isinstance(agent, dict) or not isinstance(agent.get("name"), str):
        raise MessageError("agent", 'must be {"name": "...", "version": "..."}')
    _fields(agent, {"name", "version"}, "agent.")
    version = agent.get("version", "")
    if not isinstance(version, str):
        raise MessageError("agent.version", "must be a string")
    every_tick = msg.get("every_tick", False)
    if not isinstance(every_tick, bool):
        raise MessageError("every_tick", "must be true or false")
    frames = msg.get("frames")
    if frames is None:
        return Ready(agent["name"], version, (), 0, 0, every_tick)
    if not isinstance(frames, dict):
        raise MessageError("frames", 'must be {"cameras": [...], "width": w, "height": h} or null')
    _fields(frames, {"cameras", "width", "height"}, "frames.")
    asked = frames.get("cameras")
    if not isinstance(asked, list) or not all(isinstance(c, str) for c in asked):
        raise MessageError("frames.cameras", "must be a list of camera names")
    if cameras:  # a world without cameras sends none, as hello said
        for i, c in enumerate(asked):
            if c not in cameras:
                known = ", ".join(cameras)
                raise MessageError(f"frames.cameras[{i}]", f"unknown camera {c!r} ({known})")
    width, height = _pixels(frames, "width", 320), _pixels(frames, "height", 240)
    return Ready(agent["name"], version, tuple(asked) if cameras else (), width, height,
                 every_tick)  # fmt: skip


def _pixels(frames: Mapping[str, Any], key: str, default: int) -> int:
    v = frames.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool) or v not in FRAME_SIZES:
        raise MessageError(f"frames.{key}", f"must be whole pixels in 16–2048, got {v!r}")
    return v


def parse_reply(msg: Mapping[str, Any]) -> Reply:
    kind = _expect(msg, ("act", "wait", "done"))
    if kind == "wait":
        _fields(msg, {"type", "ticks"})
        ticks = msg.get("ticks", 1)
        if not isinstance(ticks, int) or isinstance(ticks, bool) or ticks < 1:
            raise MessageError("ticks", f"must be a whole number ≥ 1, got {ticks!r}")
        return Reply("wait", ticks=ticks)
    if kind == "done":
        _fields(msg, {"type", "claim"})
        return Reply("done", claim=_text(msg, "claim"))
    _fields(msg, {"type", "actions", "say"})
    items = msg.get("actions", [])
    if not isinstance(items, list):
        raise MessageError("actions", "must be a list of actions or command strings")
    say = _text(msg, "say")
    if not items and not say:
        raise MessageError("actions", "an act needs at least one action or something to say")
    return Reply("act", tuple(_action(a, f"actions[{i}]") for i, a in enumerate(items)), say)


def _action(item: Any, where: str) -> Action:
    try:
        if isinstance(item, str):
            return parse_command(item)
        if isinstance(item, dict):
            return Action.from_json(item)
    except ActionFormatError as e:
        raise MessageError(where, str(e)) from None
    except (TypeError, ValueError) as e:  # e.g. "distance": "far"
        raise MessageError(where, f"a field has the wrong type ({e})") from None
    raise MessageError(where, f"must be a command string or an action object, got {item!r}")


def _expect(msg: Mapping[str, Any], kinds: tuple[str, ...]) -> str:
    kind = str(msg["type"])
    if kind not in kinds:
        said = kinds[0] if len(kinds) == 1 else ", ".join(kinds[:-1]) + f" or {kinds[-1]}"
        raise MessageError("type", f"expected {said} here, got {kind!r}")
    return kind


def _fields(msg: Mapping[str, Any], allowed: set[str], prefix: str = "") -> None:
    unknown = sorted(set(msg) - allowed)
    if unknown:
        named = ", ".join(prefix + u for u in unknown)
        raise MessageError(prefix.rstrip("."), f"unknown field(s) {named}")


def _text(msg: Mapping[str, Any], key: str) -> str | None:
    value = msg.get(key)
    if value is not None and not isinstance(value, str):
        raise MessageError(key, f"must be a string, got {value!r}")
    return value or None


def png_base64(image: npt.NDArray[np.uint8]) -> str:
    """An RGB image as base64 PNG, the form frames travel in."""
    import cv2  # only agents that ask for frames pay for it

    rgb = np.ascontiguousarray(np.asarray(image)[..., :3], dtype=np.uint8)
    ok, buf = cv2.imencode(".png", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
    if not ok:
        raise RuntimeError("OpenCV could not encode a frame as PNG")
    return base64.b64encode(buf.tobytes()).decode("ascii")
