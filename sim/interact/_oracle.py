"""The rule-based oracle assistant: the baseline and the test fixture (IVG spec §2.5, §3.3).

It sees exactly what any assistant sees — the recipe's steps, the conversation and a window of
observations (here, the frames' scene descriptions) — and keeps its own Plan–Act memory: where
in the recipe the user is, what it saw happen (picks, placements, switches, cooking starts),
which notifications it owes. From that it

- answers temporal questions from its own log ("How long has the patty been cooking?");
- notifies on proactive requests once the item shows cooked;
- warns, with a flag and a remedy, when the user holds or places the wrong thing, skips a step,
  serves something raw, or stalls; repeats a standing warning every :data:`REPEAT` ticks (low
  trust users need corroboration);
- answers "what next?" with the next step; otherwise stays silent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from sim.interact._types import AssistantReply, AssistantView, Frame

REPEAT = 6  # ticks before a standing warning is said again
ACK_QUIET = 60  # ticks a warning the user has just agreed to is not repeated
STALL = 40  # ticks without visible change before the user is prompted
_VERB_OF = {
    "picked up": "pick", "put down": "place", "opened": "open", "closed": "close",
    "turned on": "turn_on", "turned off": "turn_off", "pushed": "push",
}  # fmt: skip
_PAST = "|".join(_VERB_OF)
_Q_DURATION = re.compile(r"how long has the (.+?) been cooking", re.I)
_Q_COUNT = re.compile(rf"how many times have i ({_PAST}) the (.+?)\?", re.I)
_Q_RECALL = re.compile(rf"did i already ({_PAST}) the (.+?)\?", re.I)
_Q_ORDER = re.compile(rf"did i ({_PAST}) the (.+?) before i ({_PAST}) the (.+?)\?", re.I)
_REQUEST = re.compile(r"tell me when the (.+?) is (?:done|ready|cooked)", re.I)
_NEXT = re.compile(r"what should i (?:do next|start with)|what am i doing wrong|what now", re.I)
_CHANGE = re.compile(r"change of plan|actually,? i(?:'d| would)? (?:like|want)|i'm adding", re.I)
_AGREED = re.compile(r"you're right|doing that|fixing it|on it|got it|oh, right", re.I)
_QUIET = re.compile(r"only speak up|fewer interruptions|stop interrupting", re.I)
_STEP = re.compile(
    r"^(?P<verb>pick up|put|turn on|turn off|open|close)\s+(?:the\s+)?(?P<obj>[a-z_ ]+?)"
    r"(?:\s+(?P<rel>on|in)(?:to)?\s+(?:the\s+)?(?P<target>[a-z_ ]+))?$"
)


_COLOURS = {"red", "blue", "green", "yellow", "white", "black", "orange", "purple"}
FORGOT_GRACE = 30  # ticks a finished item may sit on the heat before "you forgot" is said


# The oracle re-reads the same few step texts and object names on every query (every other
# tick); these are pure functions of a short string, so each is parsed once.
@lru_cache(maxsize=4096)
def _id(name: str) -> str:
    """An object id from how it is said: "red brick" → ``brick_red``, "cutting board" →
    ``cutting_board`` (ids are type first, colour last)."""
    words = name.strip().lower().replace("the ", "").split()
    if len(words) == 2 and words[0] in _COLOURS:
        words = [words[1], words[0]]
    return "_".join(words)


def _name(obj: str) -> str:
    """How to say an id: ``brick_red`` → "red brick"."""
    parts = obj.split("_")
    if len(parts) == 2 and parts[1] in _COLOURS:
        parts = [parts[1], parts[0]]
    return " ".join(parts)


@lru_cache(maxsize=4096)
def _parse_step(step: str) -> tuple[str, str, str | None] | None:
    m = _STEP.match(step.strip().lower())
    if m is None:
        return None
    verb = {"pick up": "pick", "put": "place", "turn on": "turn_on", "turn off": "turn_off"}
    return verb.get(m["verb"], m["verb"]), _id(m["obj"]), _id(m["target"]) if m["target"] else None


class OracleAssistant:
    """See the module docstring. ``latency_s`` is what each reply reports taking."""

    name = "oracle"

    def __init__(self, *, latency_s: float = 0.0) -> None:
        self.latency_s = latency_s
        self.m: dict[str, Any] = {
            "pointer": 0, "seen": -1, "heard": -1, "log": [], "cook_start": {}, "requests": [],
            "warned": {}, "plan_changed": False, "quiet": False, "last_change": 0,
            "done_at": {}, "quiet_until": {},
        }  # fmt: skip

    # -- memory from frames ------------------------------------------------------------------
    def _observe(self, frames: Sequence[Frame]) -> dict[str, str]:
        prev: dict[str, str] | None = None
        for f in frames:
            if f.tick <= self.m["seen"]:
                prev = f.scene
                continue
            if prev is not None:
                self._log_changes(f.tick, prev, f.scene)
            prev = f.scene
            self.m["seen"] = f.tick
        return dict(frames[-1].scene) if frames else {}

    def _log_changes(self, tick: int, before: dict[str, str], now: dict[str, str]) -> None:
        for k, after in now.items():
            was = before.get(k, "")
            if after == was:
                continue
            self.m["last_change"] = tick
            a, w = after.split(", "), was.split(", ")
            if a[0] == "held" and w[0] != "held":
                self.m["log"].append([tick, "pick", k])
            if w[0] == "held" and a[0] != "held":
                self.m["log"].append([tick, "place", k])
            if "on" in a and "off" in w:
                self.m["log"].append([tick, "turn_on", k])
            if "off" in a and "on" in w:
                self.m["log"].append([tick, "turn_off", k])
            if _level(after) > _level(was) and k not in self.m["cook_start"]:
                self.m["cook_start"][k] = tick
            if _level(after) >= 1.0 > _level(was):
                self.m["done_at"][k] = tick

    # -- the reply ---------------------------------------------------------------------------
    def respond(self, view: AssistantView) -> tuple[AssistantReply, float]:
        scene = self._observe(view.frames)
        steps = view.steps
        self._advance(steps, scene)
        said: list[str] = []
        heard = [x for x in view.conversation if x.speaker == "user" and x.tick > self.m["heard"]]
        if view.conversation:
            self.m["heard"] = max(self.m["heard"], view.conversation[-1].tick)
        for line in heard:
            answer = self._hear(
                line.text, view.tick, steps, view.seconds / max(view.tick, 1), scene
            )
            if answer:
                said.append(answer)
        for item in list(self.m["requests"]):
            if _level(scene.get(item, "")) >= 1.0:
                said.append(f"The {_name(item)} is done now.")
                self.m["requests"].remove(item)
        flag = target = None
        if not self.m["plan_changed"]:
            warning = self._check(view.tick, steps, scene)
            if warning is not None:
                flag, target, text = warning
                said.insert(0, text)
        progress = {"pointer": self.m["pointer"], "next": _at(steps, self.m["pointer"])}
        reply = AssistantReply(" ".join(said), flag, target, progress)
        return reply, self.latency_s

    def _hear(
        self, text: str, tick: int, steps: Sequence[str], tick_s: float, scene: dict[str, str]
    ) -> str | None:
        if _AGREED.search(text):
            # let the user act on what it agreed to: the warnings it just heard go quiet (an
            # "ok" to other advice must not keep silencing an old warning forever)
            quiet = self.m.setdefault("quiet_until", {})
            for key, at in self.m["warned"].items():
                if tick - at <= 2 * REPEAT:
                    quiet[key] = max(quiet.get(key, 0), tick + ACK_QUIET)
            return None
        if _QUIET.search(text):
            self.m["quiet"] = True
            return "Understood."
        if _CHANGE.search(text):
            self.m["plan_changed"] = True
            return "Okay, noted."
        if m := _REQUEST.search(text):
            self.m["requests"].append(_id(m[1]))
            return "Okay, I'll tell you."
        if m := _Q_DURATION.search(text):
            since = self.m["cook_start"].get(_id(m[1]))
            if since is None:
                return f"The {m[1]} is not cooking."
            n = tick - since
            return f"About {n} ticks ({n * tick_s:.1f} seconds)."
        if m := _Q_ORDER.search(text):
            t1 = self._first(_VERB_OF[m[1].lower()], _id(m[2]))
            t2 = self._first(_VERB_OF[m[3].lower()], _id(m[4]))
            return "Yes." if t1 is not None and (t2 is None or t1 < t2) else "No."
        if m := _Q_COUNT.search(text):
            n = sum(
                1 for _, v, o in self.m["log"] if v == _VERB_OF[m[1].lower()] and o == _id(m[2])
            )
            return f"{n} times." if n != 1 else "Once, 1 time."
        if m := _Q_RECALL.search(text):
            return "Yes." if self._first(_VERB_OF[m[1].lower()], _id(m[2])) is not None else "No."
        if _NEXT.search(text):
            nxt = _at(steps, self.m["pointer"])
            return f"Next, {self._doable(nxt, scene)}." if nxt else "You're done."
        return None

    @staticmethod
    def _doable(step: str, scene: dict[str, str]) -> str:
        """A step as something the user can do now: a placement of what is not in hand
        starts with picking it up."""
        q = _parse_step(step)
        if q is not None and q[0] == "place" and not scene.get(q[1], "").startswith("held"):
            return f"pick up the {_name(q[1])}, then {step}"
        return step

    def _first(self, verb: str, obj: str) -> int | None:
        return next((t for t, v, o in self.m["log"] if v == verb and o == obj), None)

    def _advance(self, steps: Sequence[str], scene: dict[str, str]) -> None:
        p = self.m["pointer"]
        while p < len(steps):
            if _holds(steps[p], scene, steps[p + 1 :]):
                p += 1
            elif (
                p + 1 < len(steps)
                and _holds(steps[p + 1], scene, steps[p + 2 :])
                and ((here := _parse_step(steps[p])) is None or here[0] == "pick")
            ):
                p += 2  # a pick and its place seen at once
            else:
                break
        self.m["pointer"] = p

    def _check(
        self, tick: int, steps: Sequence[str], scene: dict[str, str]
    ) -> tuple[str, str, str] | None:
        p = self.m["pointer"]
        nxt = _parse_step(_at(steps, p) or "")
        held = next((k for k, v in scene.items() if v.startswith("held")), None)
        found: tuple[str, str, str] | None = None

        def free(k: str) -> str:  # a remedy starts by putting down whatever else is held
            return "" if held in (None, k) else f"Put the {_name(held)} on the table, then "

        for k, v in scene.items():  # raw food served
            where = v.split(", ")[0]
            if (
                "raw" in v.split(", ")
                and where.startswith("on ")
                and where != "on table"
                and ("pan" not in where)
            ):
                found = ("raw_serving", k, f"The {_name(k)} is still raw: {free(k)}pick up the "
                         f"{_name(k)}, put the {_name(k)} in the pan.")  # fmt: skip
        if found is None and nxt is not None and nxt[0] == "turn_off" and held is None:
            on = "on" in scene.get(nxt[1], "").split(", ")
            done = [t for k, t in self.m["done_at"].items() if _level(scene.get(k, "")) >= 1.0]
            if on and done and tick - min(done) > FORGOT_GRACE:
                found = ("forgotten_step", nxt[1], f"You forgot a step: the {_name(nxt[1])} is "
                         f"still on. Turn off the {_name(nxt[1])}.")  # fmt: skip
        # holding what its own last remedy told the user to pick up is following it, not a slip
        picked = max((t for t, v, o in self.m["log"] if v == "pick" and o == held), default=-1)
        following = held in self.m.get("advised", ()) and picked >= self.m.get("advised_at", 0)
        if (
            found is None
            and held is not None
            and nxt is not None
            and nxt[1] != held
            and not following
        ):
            if nxt[0] == "turn_off" and "on" in scene.get(nxt[1], "").split(", "):
                found = ("forgotten_step", nxt[1], f"Wait, you forgot a step: the {_name(nxt[1])}"
                         f" is still on. Put the {_name(held)} on the table, then turn off the "
                         f"{_name(nxt[1])}.")  # fmt: skip
            elif nxt[0] in ("pick", "place"):
                found = ("wrong_order", held, f"Careful, that's the {_name(held)}, not the "
                         f"{_name(nxt[1])}: it comes later. Put the {_name(held)} on the table, "
                         f"then pick up the {_name(nxt[1])}.")  # fmt: skip
        if found is None:
            for k, v in scene.items():
                where = v.split(", ")[0]
                if k == held or where in ("on table", "held") or where.startswith("in "):
                    continue
                target = where[3:]
                placements = _placements(tuple(steps))
                placed = placements.get(k)
                if placed and target not in placed:
                    # on a spot the recipe fills later (the cheese on the bun before the patty):
                    # the order is wrong; on a spot the recipe never uses: the preparation is
                    order = any(target in t for t in placements.values())
                    # out of order: off it comes; in the wrong place: to where the recipe puts it
                    dest = "table" if order or placed[0] is None else _name(placed[0])
                    found = ("wrong_order" if order else "incorrect_preparation", k,
                             f"The {_name(k)} is on the {_name(target)}, which is wrong. "
                             f"{free(k)}pick up the {_name(k)}, then put the {_name(k)} on "
                             f"the {dest}.")  # fmt: skip
                    break
        if (
            found is None
            and p < len(steps)
            and tick - self.m["last_change"] > STALL
            and not any(0 < _level(v) < 1.0 for v in scene.values())
        ):
            todo = self._doable(steps[p], scene)
            found = ("stalled_progress", "", f"You seem to have paused. Next, {todo}.")
        if found is None:
            return None
        key = f"{found[0]}:{found[1]}"
        last = self.m["warned"].get(key)
        if last is not None and tick - last < self._repeat_after(found[0], last):
            return None
        if tick < self.m.get("quiet_until", {}).get(key, -1):
            return None
        self.m["warned"][key] = tick
        if found[0] == "stalled_progress":
            nudges = [t for t in self.m.get("stall_nudges", ()) if t > self.m["last_change"]]
            self.m["stall_nudges"] = [*nudges, tick]
        picks = [q[1] for c in found[2].split(", then ") if (q := _parse_step(_clause(c)))
                 and q[0] == "pick"]  # fmt: skip
        self.m["advised"], self.m["advised_at"] = picks, tick
        return found

    def _repeat_after(self, kind: str, last: int) -> int:
        """Ticks before a warning is said again. A mistake stands until fixed and is repeated
        every :data:`REPEAT` ticks; a stall is no mistake (the person may be reading or
        typing), so its nudge waits :data:`STALL` ticks, then twice as long each time, until
        something changes in the scene."""
        if kind != "stalled_progress":
            return REPEAT
        said = sum(1 for t in self.m.get("stall_nudges", ()) if t > self.m["last_change"])
        return int(STALL * 2 ** max(0, said - 1))

    def state(self) -> dict[str, Any]:
        return {**self.m, "log": [list(x) for x in self.m["log"]]}

    def restore(self, state: dict[str, Any]) -> None:
        self.m = {**state, "log": [list(x) for x in state["log"]]}


@lru_cache(maxsize=64)
def _placements(steps: tuple[str, ...]) -> dict[str, tuple[str | None, ...]]:
    """Where the recipe puts each object (``place`` steps' targets), by object id."""
    out: dict[str, tuple[str | None, ...]] = {}
    for s in steps:
        if (q := _parse_step(s)) is not None and q[0] == "place":
            out[q[1]] = (*out.get(q[1], ()), q[2])
    return out


def _clause(text: str) -> str:
    """The command in one clause of a remedy ("… wrong. Put the cheese on the table")."""
    return text.rsplit(". ", 1)[-1].strip().rstrip(".").lower()


def _at(steps: Sequence[str], i: int) -> str | None:
    return steps[i] if i < len(steps) else None


def _level(phrase: str) -> float:
    for part in phrase.split(", "):
        if part == "cooked":
            return 1.0
        if part == "raw":
            return 0.0
        if part.endswith("% cooked"):
            return int(part.split("%")[0]) / 100
    return 0.0


def _holds(step: str, scene: dict[str, str], later: Sequence[str]) -> bool:
    """Whether a step's effect is visible now (a wait holds once its item shows cooked)."""
    if step.startswith("wait until"):
        return any(_level(v) >= 1.0 for v in scene.values())
    parsed = _parse_step(step)
    if parsed is None:
        return False
    verb, obj, target = parsed
    state = scene.get(obj, "").split(", ")
    if verb == "pick":
        return state[0] == "held" or any(
            (q := _parse_step(s)) is not None
            and q[:2] == ("place", obj)
            and state[0] in (f"on {q[2]}", f"in {q[2]}")
            for s in later[:1]
        )
    if verb == "place":
        return state[0] in (f"on {target}", f"in {target}")
    if verb == "turn_on":
        return "on" in state
    if verb == "turn_off":
        return "off" in state
    if verb == "open":
        return "open" in state
    if verb == "close":
        return "open" not in state
    return False
