"""A runner sink that tells an external agent how the episode ended: the engine tells no agent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from sim.episode import BaseSink

if TYPE_CHECKING:
    from sim.episode import EpisodeResult, EpisodeRunner


class _Ends(Protocol):
    def end(self, status: str, tick: int | None = None, message: str | None = None) -> None: ...


class EndSink(BaseSink):
    """Sends ``end`` with the episode's status when the runner finishes (or is cancelled); a
    run that failed ends with ``error`` and the reason (workbench-agent/1 has no ``failed``)."""

    def __init__(self, agent: _Ends) -> None:
        self.agent = agent

    def finish(self, runner: EpisodeRunner, result: EpisodeResult) -> None:
        if result.status == "failed":
            self.agent.end("error", result.ticks, result.end_reason or "the episode failed")
        else:
            self.agent.end(result.status, result.ticks)
