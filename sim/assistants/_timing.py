"""When the assistant is asked, and when its reply arrives (IVG spec §2.1, §2.3).

The assistant is queried every ``cadence`` ticks, and only when its previous reply has been
delivered: at most one request in flight. A reply generated from tick t arrives at t + d, and
the world keeps running in between. The delay d is either fixed (the main comparison: d = 2 in
the kitchen and household worlds, 0 in action–response worlds) or converted from the measured
latency ℓ of the call: d = min(⌈ℓ / Δ⌉, cap) ticks.

The conversion rounds ℓ to whole milliseconds and divides in integers (d = ⌈ms / Δ_ms⌉): Δ such
as 1.2 s is not exact in binary, so a float ⌈ℓ/Δ⌉ gives 8 ticks for 8.4 s instead of 7 (and the
same at 10.8, 16.8, 21.6 … s). One rule, stated, instead of an epsilon.

:class:`AssistantClock` is plain data with a JSON-able state, so an episode holding one can be
snapshotted, forked and replayed; replay feeds it the recorded latencies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from annotation import UserError

Timing = Literal["fixed", "measured"]


class TimingError(UserError, ValueError):
    """Timing settings that cannot be used; the message names the setting."""


def delay_ticks(latency_s: float, tick_s: float, cap: int | None = None) -> int:
    """Ticks until a reply that took ``latency_s`` arrives: ⌈ms / Δ_ms⌉, at most ``cap``.

    Both times are rounded to whole milliseconds first, and the division is done in integers.
    A latency of 0 gives 0 ticks (delivered in the tick it was asked).
    """
    if not latency_s >= 0:
        raise TimingError(f"latency must be ≥ 0 seconds, not {latency_s!r}")
    tick_ms = round(tick_s * 1000)
    if tick_ms <= 0:
        raise TimingError(f"tick length must be at least 1 ms, not {tick_s!r} s")
    ms = round(latency_s * 1000)
    ticks = -(-ms // tick_ms)  # ceiling division of non-negative integers
    return ticks if cap is None else min(ticks, cap)


@dataclass(frozen=True)
class TimingConfig:
    """How an episode times its assistant.

    Attributes:
        mode: ``fixed`` (every reply takes ``fixed_delay`` ticks) or ``measured`` (the call's
            latency, converted by :func:`delay_ticks`).
        cadence: ask every this many ticks (spec: 2; action–response worlds ask every tick).
        fixed_delay: the delay in fixed mode (spec: 2, or 0 for action–response).
        cap: the longest measured delay in ticks (spec: 30 kitchen, 15 household).
        tick_s: the world's tick length Δ in seconds.
    """

    mode: Timing = "fixed"
    cadence: int = 2
    fixed_delay: int = 2
    cap: int = 30
    tick_s: float = 0.1

    def __post_init__(self) -> None:
        if self.mode not in ("fixed", "measured"):
            raise TimingError(f"timing mode must be 'fixed' or 'measured', not {self.mode!r}")
        for name in ("cadence", "fixed_delay", "cap"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < (1 if name == "cadence" else 0):
                raise TimingError(f"timing {name} must be a whole number of ticks, not {value!r}")

    def delay(self, latency_s: float) -> int:
        if self.mode == "fixed":
            return self.fixed_delay
        return delay_ticks(latency_s, self.tick_s, self.cap)


@dataclass
class Pending:
    """A request in flight: generated from ``asked`` (its observations end there), due at
    ``due``; ``reply`` is whatever the assistant returned, opaque to the clock."""

    asked: int
    due: int
    reply: Any


class AssistantClock:
    """The query cadence, the one request in flight, and the delivery ticks (see module doc)."""

    def __init__(self, config: TimingConfig) -> None:
        self.config = config
        self.pending: Pending | None = None
        self._last_asked: int | None = None

    def should_ask(self, tick: int) -> bool:
        """Whether to query the assistant at ``tick``: on the cadence, nothing in flight."""
        if self.pending is not None:
            return False
        if self._last_asked is None:
            return True
        return tick - self._last_asked >= self.config.cadence

    def asked(self, tick: int, reply: Any, latency_s: float) -> int:
        """Record a query made at ``tick`` that took ``latency_s``; returns its delivery tick.

        Raises:
            TimingError: a request is still in flight (the engine must not ask twice).
        """
        if self.pending is not None:
            raise TimingError(
                f"tick {tick}: the assistant was asked again while its reply from tick "
                f"{self.pending.asked} is still due at {self.pending.due}"
            )
        due = tick + self.config.delay(latency_s)
        self.pending = Pending(tick, due, reply)
        self._last_asked = tick
        return due

    def deliver(self, tick: int) -> Pending | None:
        """The reply due at (or before) ``tick``, once; None if nothing arrives now."""
        if self.pending is None or self.pending.due > tick:
            return None
        arrived, self.pending = self.pending, None
        return arrived

    def state(self) -> dict[str, Any]:
        p = self.pending
        return {
            "last_asked": self._last_asked,
            "pending": None if p is None else {"asked": p.asked, "due": p.due, "reply": p.reply},
        }

    def restore(self, state: dict[str, Any]) -> None:
        self._last_asked = state["last_asked"]
        p = state["pending"]
        self.pending = None if p is None else Pending(p["asked"], p["due"], p["reply"])
