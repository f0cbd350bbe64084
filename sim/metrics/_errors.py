"""The metrics error and the checks every input record runs on its fields."""

from __future__ import annotations

from annotation import UserError


class MetricsError(UserError, ValueError):
    """A trace record that cannot be scored; the message names the record and the field."""


def check_tick(record: str, field: str, value: object, *, optional: bool = False) -> None:
    """Raise unless ``value`` is a whole tick ≥ 0 (or ``None`` when ``optional``).

    ``bool`` is refused although it is an ``int``: ``True`` as a tick is always a slip.
    """
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        kind = "a tick ≥ 0 or None" if optional else "a tick ≥ 0"
        raise MetricsError(f"{record}.{field} must be {kind}, not {value!r}")


def check_order(record: str, early: str, a: int | None, late: str, b: int | None) -> None:
    """Raise if both ticks are known and ``late`` comes before ``early``."""
    if a is not None and b is not None and b < a:
        raise MetricsError(f"{record}.{late} ({b}) is before {record}.{early} ({a})")


def check_count(record: str, field: str, value: object) -> None:
    """Raise unless ``value`` is a whole number ≥ 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MetricsError(f"{record}.{field} must be a whole number ≥ 0, not {value!r}")
