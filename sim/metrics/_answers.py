"""Reading numbers, durations and yes/no out of a free-text answer (the rule grader's parser).

Deliberately small and predictable: it reads the phrasings a scripted or LLM assistant commonly
uses and leaves everything else to a semantic judge (``None`` = could not read).

- Numbers: digits (``3``, ``2.5``) and number words ``zero`` … ``twenty``, ``once``, ``twice``,
  ``thrice``; ``never``, ``none``, ``not once`` and ``no times`` read as 0.
- A range is ``N-M``, ``N–M``, ``N to M`` or ``N or M`` (``about 3–4``, ``three or four``).
- Time units: ``tick(s)``; ``s``, ``sec(s)``, ``second(s)``; ``min(s)``, ``minute(s)`` (60 s).
  ``1 minute 10 seconds`` adds up; otherwise the first quantity with a unit is the answer, and a
  bare number is read as ticks (the unit the assistant's observations count in).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUMBER_NAMES = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty",
)  # fmt: skip
NUMBER_WORDS = {w: i for i, w in enumerate(_NUMBER_NAMES)}
NUMBER_WORDS.update(once=1, twice=2, thrice=3, never=0, none=0)
_ZERO_PHRASES = re.compile(r"\b(?:not once|no times|not at all|zero times)\b")
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[a-z]+(?:'[a-z]+)?|-")
_RANGE_WORDS = {"-", "to", "or"}
_UNITS = {
    "tick": "tick",
    "ticks": "tick",
    "s": "second",
    "sec": "second",
    "secs": "second",
    "second": "second",
    "seconds": "second",
    "min": "minute",
    "mins": "minute",
    "minute": "minute",
    "minutes": "minute",
}
_COUNT_NOUNS = {"time", "times", "visit", "visits"}


@dataclass(frozen=True)
class Quantity:
    """A number or range read from text, with the unit word after it (``None`` if bare)."""

    low: float
    high: float
    unit: str | None
    next_word: str | None


def _tokens(text: str) -> list[str]:
    text = text.lower().replace("–", "-").replace("—", "-").replace("’", "'")
    return _TOKEN.findall(_ZERO_PHRASES.sub(" zero ", text))


def _number(token: str) -> float | None:
    if token[0].isdigit():
        return float(token)
    value = NUMBER_WORDS.get(token)
    return None if value is None else float(value)


def quantities(text: str) -> list[Quantity]:
    """Every number or range in ``text``, left to right."""
    tokens = _tokens(text)
    found: list[Quantity] = []
    i = 0
    while i < len(tokens):
        low = _number(tokens[i])
        if low is None:
            i += 1
            continue
        high, j = low, i + 1
        if j + 1 < len(tokens) and tokens[j] in _RANGE_WORDS:
            other = _number(tokens[j + 1])
            if other is not None:
                high, j = other, j + 2
        after = tokens[j] if j < len(tokens) else None
        unit = _UNITS.get(after) if after is not None else None
        found.append(Quantity(min(low, high), max(low, high), unit, after))
        i = j + (unit is not None)
    return found


def read_count(text: str) -> tuple[float, float] | None:
    """The answer's count as ``(low, high)``: a number before ``time(s)``/``visit(s)``, or the
    first number."""
    found = quantities(text)
    for q in found:
        if q.next_word in _COUNT_NOUNS:
            return q.low, q.high
    return (found[0].low, found[0].high) if found else None


def read_duration(text: str, tick_s: float) -> tuple[float, float] | None:
    """The answer's duration in ticks as ``(low, high)``; seconds are divided by ``tick_s``."""
    found = quantities(text)
    timed = [q for q in found if q.unit is not None]
    if not timed:
        return (found[0].low, found[0].high) if found else None
    first = timed[0]
    per_unit = {"tick": 1.0, "second": 1.0 / tick_s, "minute": 60.0 / tick_s}
    factor = per_unit[first.unit or "tick"]
    low, high = first.low * factor, first.high * factor
    if first.unit == "minute" and len(timed) > 1 and timed[1].unit == "second":
        low, high = low + timed[1].low / tick_s, high + timed[1].high / tick_s
    return low, high


_EVASIVE = re.compile(
    r"\b(?:not sure|unsure|don't know|do not know|no idea|can't tell|cannot tell|can't say|"
    r"not certain|hard to say)\b"
)
_YES = {"yes", "yeah", "yep", "yup", "correct", "indeed", "affirmative", "sure"}
_NO = {"no", "nope", "not", "never", "negative", "nah"}
_AFFIRMING = {"did", "have", "has", "does", "is", "was", "were", "already", "done"}


def read_yes_no(text: str) -> bool | None:
    """Yes (``True``), no (``False``) or unreadable/evasive (``None``).

    The first explicit yes/no word decides (``No, you haven't`` → no); failing that, any
    negation (``not``, ``never``, a ``n't`` word) means no and an affirming verb (``you did``,
    ``it has``) means yes.
    """
    lowered = text.lower().replace("’", "'")
    if _EVASIVE.search(lowered):
        return None
    tokens = _TOKEN.findall(lowered)  # not _tokens: "not at all" must keep its "not"
    for token in tokens:
        if token in _YES:
            return True
        if token in _NO or token.endswith("n't"):
            return False
    return True if any(t in _AFFIRMING for t in tokens) else None
