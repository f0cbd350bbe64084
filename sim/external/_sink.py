"""A runner sink that tells an external agent how the episode ended: the engine tells no agent."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from sim.episode import ActionEntry, AnomalyEntry, EpisodeResult, EpisodeRunner, TickEntry


class _Ends(Protocol):
    def end(self, status: str, tick: int | None = None) -> None: ...


class EndSink:
    """Sends ``end`` with the episode's status when the runner finishes (or is cancelled)."""

    def __init__(self, agent: _Ends) -> None:
        self.agent = agent

    def start(self, runner: EpisodeRunner) -> None:
        pass

    def record(
        self,
        runner: EpisodeRunner,
        tick: TickEntry,
        actions: Sequence[ActionEntry],
        anomalies: Sequence[AnomalyEntry],
        snapshot: dict[str, Any] | None,
    ) -> None:
        pass

    def finish(self, runner: EpisodeRunner, result: EpisodeResult) -> None:
        self.agent.end(result.status, runner.tick)
