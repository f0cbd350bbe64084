"""Interaction quality: the rubric as data and the aggregation of judge verdicts (spec §4.3).

A round is one spoken assistant response and what the user said and did up to the next one;
silence is no round. Each judge j marks the 10 items pass (P), fail (F) or not applicable (NA).
For judge j, round r, category c with applicable items I_rjc:

    q_rjc = Π_{i ∈ I_rjc} 1[i passes]           (categories with I_rjc = ∅ are omitted)
    g_rj  = 0 if T1 or T2 fails, else 1          (NA does not fail)
    Q_rj  = g_rj · (1/|C_rj|) Σ_{c ∈ C_rj} q_rjc  (C_rj = applicable categories; None if ∅)
    Q_r   = (1/|J_r|) Σ_{j ∈ J_r} Q_rj           (J_r = judges with a Q_rj; round dropped if ∅)

Overall per run = the mean of Q_r over all rounds of the run, pooled across its episodes (gap
§9.10). Per-category score: within a round the mean of q_rjc over the judges for whom c is
applicable, then the mean over the rounds where c is applicable; **no gate**. Neither score
bounds the other, because each category has its own applicability denominator.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from sim.metrics._aggregate import RunValue, pooled_mean
from sim.metrics._errors import MetricsError

Verdict = Literal["P", "F", "NA"]
_VERDICTS: dict[str, Verdict] = {
    "p": "P", "pass": "P", "f": "F", "fail": "F", "na": "NA", "n/a": "NA", "n-a": "NA",
}  # fmt: skip


@dataclass(frozen=True)
class RubricItem:
    """One binary rubric item: its id, its category code and when it passes."""

    item_id: str
    category: str
    passes_when: str


CATEGORIES: dict[str, str] = {
    "FG": "Factual grounding",
    "SR": "Situational relevance",
    "AG": "Actionable guidance",
    "UI": "User intent uptake",
    "GC": "Guidance conciseness",
}
_PASSES_WHEN = {
    "T1": "claims about the current state and the user's completed actions are true",
    "T2": "referenced entities, places, controls, rules and task requirements exist",
    "S1": "the response addresses the current action, sub-goal, live concern, pending request or "
    "announced intent",
    "S2": "a pending question/request/objection is answered, accepted, rejected with a reason, or "
    "deferred for a stated urgent reason",
    "H1": "the first advised action can start now, or its prerequisite is supplied",
    "H2": "the advice advances the current plan, answers the request or repairs the error",
    "H3": 'a claim of a mistake comes with a remedy ("stop" is enough when stopping is the remedy)',
    "L1": "a reply to push-back supplies evidence, a new reason, a correction or an alternative, "
    "not just the same claim again",
    "L2": "valid announced intentions and requests for fewer interruptions are respected, unless "
    "a current task-critical reason is stated",
    "E1": "contains what is needed now, without unnecessary explanation, praise or distant future "
    "steps, given the interruption preference",
}
_ITEM_CATEGORY = {"T": "FG", "S": "SR", "H": "AG", "L": "UI", "E": "GC"}
RUBRIC: tuple[RubricItem, ...] = tuple(
    RubricItem(item, _ITEM_CATEGORY[item[0]], text) for item, text in _PASSES_WHEN.items()
)
ITEM_IDS: tuple[str, ...] = tuple(i.item_id for i in RUBRIC)
GATE_ITEMS = ("T1", "T2")
KITCHEN_RULES = (
    "any false factual claim fails T1",
    "H1 looks only at the first advised action",
    "L2 applies only while a valid user intention or fewer-interruptions request is active",
)
_CATEGORY_OF = {i.item_id: i.category for i in RUBRIC}


@dataclass(frozen=True)
class JudgeVerdicts:
    """One judge's verdicts on one round; items left out are NA.

    ``items`` maps item id → ``P``/``F``/``NA`` (``pass``, ``fail``, ``n/a`` and lower case are
    read too); it is normalised and copied on construction.
    """

    judge: str
    items: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        clean: dict[str, Verdict] = {}
        for item, raw in self.items.items():
            if item not in _CATEGORY_OF:
                raise MetricsError(
                    f"judge {self.judge!r}: item id {item!r} is not in the rubric "
                    f"({', '.join(ITEM_IDS)})"
                )
            verdict = _VERDICTS.get(str(raw).strip().lower())
            if verdict is None:
                raise MetricsError(
                    f"judge {self.judge!r}: item {item} must be P, F or NA, not {raw!r}"
                )
            clean[item] = verdict
        object.__setattr__(self, "items", clean)

    @classmethod
    def from_row(cls, judge: str, row: str) -> JudgeVerdicts:
        """Verdicts written in rubric order, e.g. ``"P P P NA P F NA NA NA P"``."""
        cells = row.split()
        if len(cells) != len(ITEM_IDS):
            raise MetricsError(
                f"judge {judge!r}: a verdict row needs {len(ITEM_IDS)} cells, not {len(cells)}"
            )
        return cls(judge, dict(zip(ITEM_IDS, cells, strict=True)))

    def verdict(self, item: str) -> Verdict:
        """The item's verdict; NA when the judge left it out."""
        return _VERDICTS[self.items.get(item, "NA").lower()]


def category_passes(verdicts: JudgeVerdicts) -> dict[str, int]:
    """q_rjc for each applicable category (all its applicable items pass → 1, else 0)."""
    passes: dict[str, int] = {}
    for item in ITEM_IDS:
        verdict = verdicts.verdict(item)
        if verdict == "NA":
            continue
        category = _CATEGORY_OF[item]
        passes[category] = passes.get(category, 1) * (verdict == "P")
    return {c: passes[c] for c in CATEGORIES if c in passes}


def gate(verdicts: JudgeVerdicts) -> int:
    """g_rj: 0 if T1 or T2 fails, else 1."""
    return 0 if any(verdicts.verdict(i) == "F" for i in GATE_ITEMS) else 1


def judge_score(verdicts: JudgeVerdicts) -> float | None:
    """Q_rj, or ``None`` when no category is applicable."""
    passes = category_passes(verdicts)
    if not passes:
        return None
    return gate(verdicts) * sum(passes.values()) / len(passes)


@dataclass(frozen=True)
class Round:
    """One graded round: its episode, an id for drill-down and the judges' verdicts."""

    episode_id: str
    judges: tuple[JudgeVerdicts, ...]
    round_id: str = ""

    def __post_init__(self) -> None:
        names = [j.judge for j in self.judges]
        if len(set(names)) != len(names):
            raise MetricsError(f"round {self.round_id!r} of {self.episode_id!r}: a judge repeats")


def round_score(round_: Round) -> float | None:
    """Q_r, or ``None`` when no judge scored the round (it is dropped)."""
    scores = [s for s in (judge_score(j) for j in round_.judges) if s is not None]
    return sum(scores) / len(scores) if scores else None


def round_categories(round_: Round) -> dict[str, float]:
    """Per applicable category, the mean of q_rjc over the judges it applies to (no gate)."""
    seen: dict[str, list[int]] = {}
    for judge in round_.judges:
        for category, passed in category_passes(judge).items():
            seen.setdefault(category, []).append(passed)
    return {c: sum(seen[c]) / len(seen[c]) for c in CATEGORIES if c in seen}


def quality_overall(rounds: Iterable[Round]) -> RunValue:
    """The run's overall score: mean Q_r over every scored round, pooled over episodes."""
    return pooled_mean((r.episode_id, round_score(r)) for r in rounds)


def quality_categories(rounds: Iterable[Round]) -> dict[str, RunValue]:
    """The run's per-category scores; a category applicable in no round has value ``None``."""
    rows = [(r.episode_id, round_categories(r)) for r in rounds]
    return {c: pooled_mean((ep, cats.get(c)) for ep, cats in rows) for c in CATEGORIES}
