"""What ``sim run`` and ``episode run`` do when a run is stopped from outside.

SIGTERM is handled as Ctrl+C while the episode runs: either way the engine ends the episode
``cancelled`` ("interrupted (…)") with the ticks and exchanges it has, and the user is told
where it was stored; the command exits 130, as a shell does for an interrupted program.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

import click


def _on_sigterm(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt("SIGTERM")


@contextmanager
def interruptible() -> Iterator[None]:
    """Run the block with SIGTERM raising KeyboardInterrupt; an interrupt exits 130 after
    saying where the episode went (the engine's note on the exception)."""
    main = threading.current_thread() is threading.main_thread()  # only it may set handlers
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if main else None
    try:
        yield
    except KeyboardInterrupt as err:
        why = str(err) or "Ctrl+C"
        notes = getattr(err, "__notes__", [])
        click.secho(f"interrupted ({why})" + "".join(f"; {n}" for n in notes), fg="yellow",
                    err=True)  # fmt: skip
        raise click.exceptions.Exit(130) from None
    finally:
        if main and previous is not None:
            signal.signal(signal.SIGTERM, previous)
