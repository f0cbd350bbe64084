"""Helpers of the interaction-quality judge tests: a stored episode, judge profiles on a loopback
server, and a responder that plays scripted verdicts per judge and round."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge import ModelProfile, save_profile
from judge.models.loopback import Action, BadArgs, FakeServer, Reply
from judge.quality._prompt import DATA_CLOSE, DATA_OPEN, TOOL_NAME
from sim.episode import open_scenario
from sim.interact import run_interactive
from sim.metrics import ITEM_IDS
from sim.users import PROFILES
from storage import Project

ALL_PASS = "P P P NA P P NA NA NA P"
PRICE_IN, PRICE_OUT = 1.0, 2.0  # US$ per million tokens: every loopback call costs $0.00014


def make_episode(project: Project, scenario: str = "cook-patty", persona: str = "novice") -> str:
    """A stored interactive episode: the rule-based user and the oracle assistant, offline."""
    ep = run_interactive(bound=open_scenario(scenario), persona=PROFILES[persona], project=project)
    assert ep.episode_id is not None
    return ep.episode_id


def spoken_turns(project: Project, episode_id: str) -> int:
    return sum(1 for t in project.episodes.turns(episode_id) if t.speaker == "assistant" and t.text)


def add_judges(project: Project, srv: FakeServer, *names: str, **kw: Any) -> None:
    """Profiles named ``names`` on ``srv``, each asking for a model of its own name."""
    for name in names:
        save_profile(
            project.profiles,
            ModelProfile(name=name, base_url=srv.base_url, model=name, api_key_env="",
                         max_retries=0, price_in_per_mtok=PRICE_IN,
                         price_out_per_mtok=PRICE_OUT, **kw),
        )  # fmt: skip


def verdict_args(row: str = ALL_PASS, **over: Any) -> dict[str, Any]:
    """Consistent arguments of ``submit_quality_verdicts`` for a row in rubric order."""
    cells = row.split()
    items = {
        i: {"verdict": v, "reason": f"{i} is {v}"} for i, v in zip(ITEM_IDS, cells, strict=True)
    }
    t1 = items["T1"]["verdict"]
    claims = (
        []
        if t1 == "NA"
        else [{"claim": "the patty is raw", "status": "false" if t1 == "F" else "true"}]
    )
    advised = [] if items["H1"]["verdict"] == "NA" else ["put the patty in the pan"]
    return {"claims": claims, "advised_actions": advised, "purpose": "guide", "items": items} | over


def judge_data(body: Mapping[str, Any]) -> dict[str, Any]:
    """The DATA block of a quality-judge request: the round's material as the judge got it."""
    text = next(m["content"] for m in body["messages"] if m["role"] == "user")
    start = text.rindex(DATA_OPEN + "\n") + len(DATA_OPEN)  # the header names the markers too
    return dict(json.loads(text[start : text.rindex(DATA_CLOSE)]))


Plan = Mapping[tuple[str, int], Sequence[Action] | str]


class Verdicts:
    """A FakeServer responder: per (model, round), scripted actions (one per call, the last
    repeated) or a verdict row; every other round of a known model gets ``default``."""

    def __init__(self, plan: Plan | None = None, default: str = ALL_PASS) -> None:
        self.plan = dict(plan or {})
        self.default = default
        self.calls: list[tuple[str, int]] = []
        self._seen: dict[tuple[str, int], int] = {}
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any], _n: int) -> Action:
        key = (str(body["model"]), int(judge_data(body)["round"]))
        with self._lock:
            self.calls.append(key)
            k = self._seen[key] = self._seen.get(key, -1) + 1
        step = self.plan.get(key, self.default)
        if isinstance(step, str):
            return Reply(TOOL_NAME, verdict_args(step))
        return step[min(k, len(step) - 1)]


def bad_verdict(item: str = "T1", value: str = "maybe") -> BadArgs:
    """A tool call whose verdict for ``item`` is off the schema."""
    args = verdict_args()
    args["items"][item]["verdict"] = value
    return BadArgs(TOOL_NAME, json.dumps(args))


def rows_by_round(project: Project, episode_id: str) -> dict[tuple[str, int], str]:
    """The stored verdicts as rows in rubric order, per (judge, round)."""
    from storage import QualityVerdicts

    got: dict[tuple[str, int], dict[str, str]] = {}
    for v in QualityVerdicts(project.db).list(episode_id):
        got.setdefault((v.judge_profile, v.round), {})[v.item] = v.verdict
    return {k: " ".join(items[i] for i in ITEM_IDS) for k, items in got.items()}


Responder = Callable[[dict[str, Any], int], Action]


@dataclass
class Ctx:
    """A JobContext as the worker hands it over (never cancelled)."""

    job_id: int
    payload: Mapping[str, Any]
    project_root: Path

    def progress(self, fraction: float, note: str = "", cost_usd: float | None = None) -> None:
        pass

    def cancelled(self) -> bool:
        return False

    def log(self, event: str, **fields: Any) -> None:
        pass
