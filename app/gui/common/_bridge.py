"""The one background-work pattern: an app-wide executor, results back on the GUI thread.

``submit(channel, fn, ..., on_done=...)`` runs ``fn`` on a worker thread. Each channel keeps a
generation number; a result whose generation is no longer current (the user has moved on) is
dropped instead of being shown late, and a request still waiting for a thread when a newer one
arrives on its channel is not run at all. ``WB_SYNCHRONOUS=1`` runs everything inline, for tests
that need determinism more than responsiveness.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal

log = logging.getLogger(__name__)


class _Relay(QObject):
    """Lives on the GUI thread; a signal emitted from a worker runs its slot there (queued)."""

    call = Signal(object)


class Bridge:
    """App-wide executor with per-channel generations. Create it on the GUI thread."""

    def __init__(self, workers: int = 2) -> None:
        # One long-lived relay object instead of a QObject per result: creating Qt objects on
        # plain Python threads thousands of times a minute is what crashed earlier versions.
        self._relay = _Relay()
        self._relay.call.connect(lambda fn: fn(), Qt.ConnectionType.QueuedConnection)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="wb-work")
        # Work that takes minutes (importing a folder) gets a thread of its own, so frames and
        # statistics never wait behind it on the short-work threads.
        self._long = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wb-long")
        self._gen: dict[str, int] = {}
        self._queued: dict[str, Future[Any]] = {}  # each channel's newest request
        self.synchronous = os.environ.get("WB_SYNCHRONOUS", "") == "1"
        self.closed = False  # set when its window closes: results still running are dropped

    def submit(
        self,
        channel: str,
        fn: Callable[..., Any],
        *args: Any,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        long: bool = False,
    ) -> Future[Any]:
        """Run ``fn(*args)`` off the GUI thread; ``on_done``/``on_error`` run on it. ``long``
        work (minutes) runs on its own thread, one at a time, in submission order."""
        gen = self._gen.get(channel, 0) + 1
        self._gen[channel] = gen
        if self.synchronous:
            fut: Future[Any] = Future()
            try:
                fut.set_result(fn(*args))
            except BaseException as e:
                fut.set_exception(e)
            self._deliver(channel, gen, fut, on_done, on_error)
            return fut
        previous = self._queued.get(channel)
        if previous is not None:
            # Not started yet and already superseded: never run it. Dropping only its result
            # is not enough: while scrubbing, stale decodes queue up faster than they run,
            # and the newest request waits behind all of them.
            previous.cancel()
        fut = (self._long if long else self._pool).submit(fn, *args)
        self._queued[channel] = fut
        # Runs on the worker thread; the relay hands the result to the GUI thread.
        fut.add_done_callback(
            lambda f: self._relay.call.emit(
                lambda: self._deliver(channel, gen, f, on_done, on_error)
            )
        )
        return fut

    def current(self, channel: str) -> int:
        return self._gen.get(channel, 0)

    def _deliver(
        self,
        channel: str,
        gen: int,
        fut: Future[Any],
        on_done: Callable[[Any], None] | None,
        on_error: Callable[[BaseException], None] | None,
    ) -> None:
        if gen != self._gen.get(channel) or fut.cancelled() or self.closed:
            return  # stale: the user asked for something newer (or closed the window)
        err = fut.exception()
        if err is not None:
            if on_error:
                on_error(err)
            else:
                self.fail(channel, err)
            return
        if on_done:
            on_done(fut.result())

    def fail(self, channel: str, err: BaseException) -> None:
        """The default failure path, also for an ``on_error`` that handles only some errors:
        the GUI's error boundary (sys.excepthook, see app/gui/common/_errors.py) shows it."""
        log.error("background work on %s failed: %s", channel, err)
        sys.excepthook(type(err), err, err.__traceback__)

    def post(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` on the GUI thread soon; callable from any thread (progress reports)."""
        if self.synchronous:
            fn()
        else:
            self._relay.call.emit(fn)

    def close(self) -> None:
        """The window that shows results is closing: work still running finishes, but its
        results (and failures) are no longer delivered to widgets that are gone."""
        self.closed = True
        for fut in self._queued.values():
            fut.cancel()

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._long.shutdown(wait=False, cancel_futures=True)
