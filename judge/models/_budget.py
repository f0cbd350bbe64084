"""The per-video spend cap: reserve the worst case before a call, settle the real cost after.

Reserving (rather than only checking) keeps the guarantee when several threads share one model
client: two calls that each fit in what is left cannot both be sent if together they do not.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from judge.models._api import SpendCapReached


@dataclass(frozen=True)
class Prices:
    """US$ per million tokens, and the token figure assumed for one image in estimates."""

    in_per_mtok: float = 0.0
    out_per_mtok: float = 0.0
    tokens_per_image: int = 800

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        """US$ for a call that used these tokens."""
        return tokens_in * self.in_per_mtok / 1e6 + tokens_out * self.out_per_mtok / 1e6

    def worst_case(self, text_chars: int, n_images: int, max_output_tokens: int) -> float:
        """Upper estimate of one call: text at 4 characters a token, every image at
        ``tokens_per_image``, and a reply that uses all of ``max_output_tokens``."""
        tokens_in = math.ceil(text_chars / 4) + n_images * self.tokens_per_image
        return self.cost(tokens_in, max_output_tokens)


class Budget:
    """Money spent against a cap, safe to share between threads."""

    def __init__(self, cap_usd: float) -> None:
        self.cap_usd = cap_usd
        self._spent = 0.0
        self._reserved = 0.0
        self._lock = threading.Lock()

    @property
    def spent_usd(self) -> float:
        """Booked cost of all settled calls."""
        with self._lock:
            return self._spent

    def reserve(self, worst_case_usd: float) -> float:
        """Hold ``worst_case_usd`` for a call about to be sent; returns the amount held.

        Raises:
            SpendCapReached: the call could take spending past the cap; nothing is held.
        """
        with self._lock:
            # No tolerance on purpose: a cap that admits rounding slack is no longer a cap.
            if self._spent + self._reserved + worst_case_usd > self.cap_usd:
                left = max(0.0, self.cap_usd - self._spent - self._reserved)
                raise SpendCapReached(
                    f"spend cap reached: the next call could cost up to ${worst_case_usd:.4f} "
                    f"but only ${left:.4f} of the ${self.cap_usd:.2f} cap is left "
                    f"(spent ${self._spent:.4f}); no request was sent"
                )
            self._reserved += worst_case_usd
            return worst_case_usd

    def settle(self, reserved_usd: float, actual_usd: float) -> None:
        """Release a reservation and book what the call really cost."""
        with self._lock:
            self._reserved = max(0.0, self._reserved - reserved_usd)
            self._spent += actual_usd
