"""Assistants under test: their timing (cadence, one request in flight, latency as ticks), and,
to come, the LLM assistant over rendered frames and the rule-based oracle."""

from sim.assistants._timing import (
    AssistantClock,
    Pending,
    Timing,
    TimingConfig,
    TimingError,
    delay_ticks,
)

__all__ = ["AssistantClock", "Pending", "Timing", "TimingConfig", "TimingError", "delay_ticks"]
