"""One line for what an episode's model calls cost and how their replies came out."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from storage import CallTotals


def calls_line(c: CallTotals) -> str:
    """``24 replies: 1 valid, 0 repaired, 23 silenced, 0 failed · 2400 tokens in, 480 out ·
    US$0.0000`` (silenced: still invalid after the repair budget; repaired: valid after a
    re-ask)."""
    return (
        f"{c.replies} replies: {c.valid} valid, {c.repaired} repaired, {c.silenced} silenced, "
        f"{c.failed} failed · {c.tokens_in} tokens in, {c.tokens_out} out · US${c.cost_usd:.4f}"
    )
