"""A sink that stores an agent's request/reply exchanges with its episode (``party='agent'``).

Model-backed and external agents talk to something outside the engine; what was actually sent
and received is kept so a run can be audited after the fact. Exchanges are buffered while the
episode runs and written, whole, when it finishes — place this sink *before* the SQLite sink,
which marks the episode finished.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sim.episode._runner import BaseSink
from storage import CallOutcome, ExchangeRecord, Project

if TYPE_CHECKING:
    from sim.episode._runner import EpisodeRunner
    from sim.episode._sinks import SqliteSink
    from sim.episode._trace import EpisodeResult


def _json(payload: Mapping[str, Any] | str) -> str:
    if isinstance(payload, str):
        return json.dumps({"text": payload}, ensure_ascii=False)
    return json.dumps(payload, ensure_ascii=False, sort_keys=True, default=str)


class ExchangeLog(BaseSink):
    """Collects exchanges; also usable as the external agent's ``record`` callback."""

    def __init__(self, db: SqliteSink | None) -> None:
        self.db = db
        self.exchanges: list[ExchangeRecord] = []
        self._sent: tuple[int, str] | None = None
        self._call_start = 0  # the first exchange of the model call in progress

    # -- feeding ---------------------------------------------------------------------------
    def add(
        self,
        tick: int,
        sent: Mapping[str, Any] | str,
        received: Mapping[str, Any] | str | None,
        latency_s: float | None = None,
        *,
        tokens: tuple[int, int, float] | None = None,
    ) -> None:
        """One whole exchange (a model request and its reply); ``tokens``: (in, out, US$)."""
        t_in, t_out, cost = tokens if tokens is not None else (None, None, None)
        self.exchanges.append(
            ExchangeRecord(
                idx=len(self.exchanges), tick=tick, party="agent", sent_json=_json(sent),
                received_json=None if received is None else _json(received), latency_s=latency_s,
                tokens_in=t_in, tokens_out=t_out, cost_usd=cost,
            )
        )  # fmt: skip

    def end_call(self, outcome: CallOutcome) -> None:
        """The model call whose requests were added since the last ``end_call`` is over:
        its last exchange carries ``outcome`` (one count per logical call, however many
        requests its re-asks took)."""
        if len(self.exchanges) > self._call_start:
            last = self.exchanges[-1]
            self.exchanges[-1] = replace(last, outcome=outcome)
        self._call_start = len(self.exchanges)

    def __call__(self, direction: str, tick: int, message: dict[str, Any]) -> None:
        """A protocol message: a ``sent`` one opens an exchange, ``received`` closes it."""
        if direction == "sent":
            if self._sent is not None:  # a message that expects no reply (``end``)
                self.add(self._sent[0], json.loads(self._sent[1]), None)
            self._sent = (tick, _json(message))
            return
        if self._sent is None:
            self.add(tick, {}, message)
        else:
            self.add(self._sent[0], json.loads(self._sent[1]), message)
            self._sent = None

    # -- sink ------------------------------------------------------------------------------

    def finish(self, runner: EpisodeRunner, result: EpisodeResult) -> None:
        if self._sent is not None:
            self.add(self._sent[0], json.loads(self._sent[1]), None)
            self._sent = None
        db = self.db
        if db is not None and not db.defer and db.episode_id is not None and db.project:
            self.write(db.project, db.episode_id)

    def write(self, project: Project, episode_id: str) -> None:
        """Store the exchanges with a running episode (a deferred one: from its commit)."""
        if self.exchanges:
            project.episodes.append(episode_id, exchanges=self.exchanges)
