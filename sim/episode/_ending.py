"""How a run that did not run its course ends: every run ends in a state that says what happened.

The engine catches whatever leaves its tick loop, ends the episode — with the ticks recorded so
far, and every sink told, so the trace, the conversation and every model exchange made so far
are stored — and raises it again:

- an error (a model endpoint that failed for good, a dead external agent, a refused row, a
  bug) ends it ``failed``, with the error's text as its end reason;
- ``KeyboardInterrupt`` (Ctrl+C; the CLI turns SIGTERM into one) or ``SystemExit`` ends it
  ``cancelled``, "interrupted (…)", as :meth:`EpisodeRunner.cancel` does between ticks.

An agent that gives up ends its episode ``aborted`` the ordinary way (see
:class:`sim.episode.AgentStop`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from annotation import UserError

if TYPE_CHECKING:
    from sim.episode._trace import EpisodeResult

#: the longest end reason kept (a traceback-sized message is cut, its start is what says why)
REASON_KEEP = 2000


def describe(err: BaseException) -> str:
    """An error in words: a user error's own message, anything else with its type."""
    text = str(err).strip()
    if not isinstance(err, UserError):
        text = f"{type(err).__name__}: {text}" if text else type(err).__name__
    return text[:REASON_KEEP]


def abnormal_end(err: BaseException) -> tuple[str, str]:
    """The status and end reason of a run that ``err`` left the tick loop with."""
    if isinstance(err, Exception):
        return "failed", describe(err)
    what = str(err).strip() if isinstance(err, KeyboardInterrupt) else type(err).__name__
    return "cancelled", f"interrupted ({what or 'Ctrl+C'})"


def note_stored(err: BaseException, episode_id: str | None, result: EpisodeResult | None) -> None:
    """Add to ``err`` where the run it ended was stored (the CLI prints it under the error)."""
    if episode_id is not None and result is not None:
        err.add_note(
            f"episode {episode_id[:8]} was stored as {result.status} after {result.ticks} ticks"
        )
