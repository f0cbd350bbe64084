"""Proactive requests: "tell me when X is ready" (spec §4.5, App. E.3).

With t_q the request tick, t_c the tick the item finished cooking and H the end of the eligible
notification interval:

    L    = max(t_q, t_c)
    A(q) = 1[a readiness claim delivered in [L, H)] · 1[no premature claim]

A premature claim is one delivered at t < t_c − 2 (:data:`PREMATURE_MARGIN_TICKS`); it scores 0
even if a correct alert follows. A claim in [t_c − 2, t_c) is neither premature nor valid (gap
§9.3 kept as the spec's table has it). Late (≥ H) and missing alerts score 0; an
acknowledgement ("I'll watch it") is not a readiness claim and never counts.

Choices where the spec is silent:

- Ticks are **delivery** ticks (what the user experiences); only messages delivered at or after
  t_q answer the request.
- H is the first of ``end_tick`` (the item turned overcooked or burning) and ``removed_tick``
  (the user took it off the heat); with neither, the window stays open to the end of the trace.
- Excluded (``None``): no valid cooking window (the item never finished, or L ≥ H), or the user
  removed the item within two ticks of completion (``removed_tick ≤ t_c + 2``) before a valid
  alert was delivered. A premature claim still scores 0 then: that fault did not depend on
  the time the user left the assistant.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sim.metrics._errors import MetricsError, check_order, check_tick

PREMATURE_MARGIN_TICKS = 2
REMOVAL_GRACE_TICKS = 2

_READY_WORDS = {"done", "ready", "cooked", "finished"}
_PRONOUNS = {"it", "it's", "its", "they", "they're", "that", "that's", "this", "everything"}
# Words that may stand next to a readiness word in an elliptical alert ("Done!", "ready now").
_FILLER = {"is", "are", "now", "all", "and", "just", "fully", "already", "right", "totally"}
# Anywhere before the readiness word, these make it a negation, a forecast or a condition.
_NOT_A_CLAIM = {
    "not", "never", "soon", "will", "when", "once", "until", "till", "if", "gonna", "going",
    "yet", "before", "after", "should", "might", "may",
}  # fmt: skip
# These hedge only when next to it ("almost done", "nearly fully cooked"), so "good news about
# the potato: it's done" stays a claim.
_HEDGES = {"almost", "nearly", "about", "practically", "mostly"}
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def _claims_in(sentence: str, names: Sequence[str]) -> bool:
    if sentence.rstrip().endswith("?"):
        return False
    words = _WORD.findall(sentence)
    ready = [i for i, w in enumerate(words) if w in _READY_WORDS]
    if not ready:
        return False
    before = words[: ready[0]]
    if any(w in _NOT_A_CLAIM or w.endswith("n't") or w.endswith("'ll") for w in before):
        return False
    if any(w in _HEDGES for w in before[-2:]):
        return False
    if ready[0] + 1 < len(words) and words[ready[0] + 1] == "yet":
        return False
    named = any(re.search(rf"\b{re.escape(n.lower())}\b", sentence) for n in names if n.strip())
    elliptical = all(w in _READY_WORDS or w in _FILLER or w in _PRONOUNS for w in words)
    return named or elliptical or any(w in _PRONOUNS for w in words)


def is_readiness_claim(text: str, item_names: Sequence[str] = ()) -> bool:
    """Whether ``text`` tells the user the item is ready now.

    A sentence claims readiness when it has a readiness word (done, ready, cooked, finished),
    refers to the item (names one of ``item_names``, says "it"/"they"/"that", or is an
    elliptical "Done!"), and nothing before the word negates, forecasts or conditions it
    ("not done yet", "isn't ready", "will be done", "I'll tell you when it's done"). Questions
    are not claims. "I'll watch it" has no readiness word and is an acknowledgement.
    """
    lowered = text.lower().replace("’", "'")
    return any(_claims_in(s, item_names) for s in re.split(r"(?<=[.!?;\n])", lowered))


@dataclass(frozen=True)
class Message:
    """An assistant message as the user got it.

    Attributes:
        tick: its delivery tick.
        text: what it said.
        readiness: a caller's own classification (e.g. an LLM's); ``None`` = classify with
            :func:`is_readiness_claim`.
        generated_tick: the tick it was generated from, recorded for audit; not scored.
    """

    tick: int
    text: str
    readiness: bool | None = None
    generated_tick: int | None = None

    def __post_init__(self) -> None:
        check_tick("Message", "tick", self.tick)
        check_tick("Message", "generated_tick", self.generated_tick, optional=True)
        check_order("Message", "generated_tick", self.generated_tick, "tick", self.tick)


@dataclass(frozen=True)
class ProactiveRequest:
    """One "tell me when X is ready" request and the assistant messages after it.

    Attributes:
        request_id: unique within the episode.
        item_names: names the item goes by ("potato", "fries"), for the readiness classifier.
        request_tick: t_q.
        complete_tick: t_c, the tick it finished cooking; ``None`` = it never did (excluded).
        end_tick: the tick it turned overcooked or burning, if it did.
        removed_tick: the tick the user took it off the heat, if they did.
        messages: the assistant's messages, any order.
    """

    request_id: str
    item_names: tuple[str, ...]
    request_tick: int
    complete_tick: int | None
    end_tick: int | None = None
    removed_tick: int | None = None
    messages: tuple[Message, ...] = ()

    def __post_init__(self) -> None:
        name = f"ProactiveRequest {self.request_id!r}"
        check_tick(name, "request_tick", self.request_tick)
        for field in ("complete_tick", "end_tick", "removed_tick"):
            check_tick(name, field, getattr(self, field), optional=True)
        check_order(name, "complete_tick", self.complete_tick, "end_tick", self.end_tick)
        if not isinstance(self.item_names, tuple):
            raise MetricsError(f"{name}.item_names must be a tuple of names")

    @property
    def window(self) -> tuple[int, int | None] | None:
        """[L, H) with H ``None`` = open-ended; ``None`` when there is no valid window."""
        if self.complete_tick is None:
            return None
        low = max(self.request_tick, self.complete_tick)
        ends = [t for t in (self.end_tick, self.removed_tick) if t is not None]
        high = min(ends) if ends else None
        return None if high is not None and low >= high else (low, high)


def _is_claim(message: Message, names: Sequence[str]) -> bool:
    if message.readiness is not None:
        return message.readiness
    return is_readiness_claim(message.text, names)


def proactive_score(request: ProactiveRequest) -> int | None:
    """A(q) ∈ {0, 1}, or ``None`` when the request is excluded (see the module doc)."""
    t_c = request.complete_tick
    claims = [
        m.tick
        for m in request.messages
        if m.tick >= request.request_tick and _is_claim(m, request.item_names)
    ]
    premature = t_c is not None and any(t < t_c - PREMATURE_MARGIN_TICKS for t in claims)
    window = request.window
    valid = window is not None and any(
        window[0] <= t and (window[1] is None or t < window[1]) for t in claims
    )
    if premature:
        return 0
    if window is None:
        return None
    removed = request.removed_tick
    if (
        t_c is not None
        and removed is not None
        and removed <= t_c + REMOVAL_GRACE_TICKS
        and not valid
    ):
        return None
    return int(valid)
