"""The interaction-quality judge's prompt, its one tool, and the checks on its verdicts.

One call grades one round (``resources/prompts/iq-judge-v1``): the system message holds the
procedure and the rubric of spec §4.3, rendered from ``sim.metrics.RUBRIC`` so the judge and the
aggregation read one definition; the user message holds the round's material as JSON in a DATA
block that supplied text cannot close (:func:`judge._prompts.data_block`).

The reply is one ``submit_quality_verdicts`` call: the claims the judge extracted (each true,
false or unverifiable), the advised actions, the response's purpose, and a verdict with a reason
for each of the 10 items. The JSON schema makes the client re-ask a malformed reply; on top of
it, :func:`parse_verdicts` enforces the consistency rules that a schema cannot state (a false
claim fails T1; a response that advises an action is graded on H1), and a reply breaking one is
re-asked with the reason by the job.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from judge._prompts import DATA_CLOSE, DATA_OPEN, Templates, data_block
from judge.models import Message, Tool, ToolCall
from judge.quality._rounds import QualityRound
from sim.metrics import CATEGORIES, ITEM_IDS, KITCHEN_RULES, RUBRIC, Verdict

PROMPT_VERSION = "iq-judge@1"
"""Part of the verdicts' cache key: bump it (and copy the templates) when the meaning changes."""
TEMPLATES = Templates("iq-judge-v1")
STAGE = "quality_round"
TOOL_NAME = "submit_quality_verdicts"
REASON_CHARS = 400

_RULES = (
    *KITCHEN_RULES,
    "a claim you mark false means T1 is F; T1 is F only for a claim you list as false",
    "when the response advises an action, H1 is P or F (it judges the first one)",
)

_ITEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["P", "F", "NA"]},
        "reason": {"type": "string", "minLength": 1, "maxLength": REASON_CHARS},
    },
    "required": ["verdict", "reason"],
    "additionalProperties": False,
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "claims": {
            "type": "array",
            "maxItems": 20,
            "items": {
                "type": "object",
                "properties": {
                    "claim": {"type": "string", "minLength": 1, "maxLength": 300},
                    "status": {"type": "string", "enum": ["true", "false", "unverifiable"]},
                },
                "required": ["claim", "status"],
                "additionalProperties": False,
            },
        },
        "advised_actions": {
            "type": "array",
            "maxItems": 10,
            "items": {"type": "string", "minLength": 1, "maxLength": 200},
        },
        "purpose": {"type": "string", "maxLength": 300},
        "items": {
            "type": "object",
            "properties": {item: _ITEM_SCHEMA for item in ITEM_IDS},
            "required": list(ITEM_IDS),
            "additionalProperties": False,
        },
    },
    "required": ["claims", "advised_actions", "purpose", "items"],
    "additionalProperties": False,
}
TOOL = Tool(
    TOOL_NAME,
    "Submit the verdicts on one round: the extracted claims, the advised actions, the "
    "response's purpose, and P / F / NA with a short reason for each of the 10 rubric items.",
    SCHEMA,
)


class ReplyProblem(ValueError):  # noqa: N818 - reads as what it is: "except ReplyProblem"
    """A schema-valid reply that breaks a consistency rule; the message is told to the model."""


@dataclass(frozen=True)
class ItemVerdict:
    verdict: Verdict
    reason: str


_render = TEMPLATES.render
prompt_digest = TEMPLATES.digest


@cache
def system_message() -> Message:
    rubric = "\n".join(f"- {i.item_id} ({CATEGORIES[i.category]}): {i.passes_when}" for i in RUBRIC)
    rules = "\n".join(f"- {r}" for r in _RULES)
    return Message("system", _render("system.md", rubric=rubric, rules=rules))


def round_messages(round_: QualityRound) -> list[Message]:
    """The messages of the one call that grades ``round_``."""
    head = _render(
        "round.md", round=round_.data["round"], rounds=round_.data["rounds"],
        open=DATA_OPEN, close=DATA_CLOSE,
    )  # fmt: skip
    return [system_message(), Message("user", data_block(round_.data, head))]


def rejected_messages(call: ToolCall, problem: str) -> list[Message]:
    """The re-ask after a reply that broke a rule: the reply as given, then the reason."""
    reply = json.dumps({"name": call.name, "arguments": call.arguments}, default=str)
    return [Message("assistant", reply), Message("user", _render("rejected.md", problem=problem))]


def parse_verdicts(call: ToolCall) -> dict[str, ItemVerdict]:
    """The 10 item verdicts of a reply, checked against the consistency rules.

    Raises:
        ReplyProblem: the wrong tool, or a rule broken (the message says which, for the re-ask).
        KeyError, TypeError, ValueError: arguments off the schema (a provider that skipped it).
    """
    if call.name != TOOL_NAME:
        raise ReplyProblem(f"call {TOOL_NAME}, not {call.name}")
    args = call.arguments
    items = args["items"]
    out: dict[str, ItemVerdict] = {}
    for item in ITEM_IDS:
        verdict, reason = items[item]["verdict"], str(items[item]["reason"]).strip()
        if verdict not in ("P", "F", "NA"):
            raise ReplyProblem(f"items.{item}.verdict must be P, F or NA, not {verdict!r}")
        if not reason:
            raise ReplyProblem(f"items.{item}.reason is empty: give the evidence")
        out[item] = ItemVerdict(verdict, reason[:REASON_CHARS])
    false = [str(c["claim"]) for c in args["claims"] if c["status"] == "false"]
    if false and out["T1"].verdict != "F":
        raise ReplyProblem(
            f"the claim {false[0]!r} is marked false, so T1 must be F (any false factual "
            "claim fails T1)"
        )
    if out["T1"].verdict == "F" and not false:
        raise ReplyProblem("T1 is F but no claim is marked false: list the false claim")
    if args["advised_actions"] and out["H1"].verdict == "NA":
        raise ReplyProblem(
            "the response advises an action, so H1 applies: P or F for the first advised action"
        )
    return out
