"""The thread under each of sim's workers: a live run (``sim.review``), the frames of a
recorded episode, of a live one and of an episode's videos, and the teleoperation session
(``sim.teleop``). Here, not in either package: ``sim.review`` uses ``sim.teleop``.

Each worker owns one daemon thread. It sets itself up *on* that thread (an offscreen GL context
and a SQLite connection belong to the thread that made them), says it is ready, then serves
what callers hand over under one condition until it is closed. Callers set what they want and
notify under :attr:`Worker._cv`; the thread takes it under the lock and does the work outside
it, so a slow render or tick never blocks the caller. An error ends the thread: it is kept in
:attr:`Worker.error`, :attr:`Worker.ready` is set (nobody waits for a thread that is gone) and
``on_error`` is told, on the worker's thread (the GUI passes a queued Qt signal).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable

from sim.gl import release_thread


class Worker:
    """Subclasses set their own state, then call :meth:`_start`; :meth:`_serve` is the thread."""

    def __init__(
        self,
        name: str,
        on_error: Callable[[BaseException], None] | None,
        on_ready: Callable[[], None] | None,
    ) -> None:
        self.on_error = on_error
        self.on_ready = on_ready  # called on the worker's thread once it is set up
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self._cv = threading.Condition()
        self._stop = False
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)

    def _start(self) -> None:
        self._thread.start()

    def close(self, timeout: float = 10.0) -> None:
        """End the thread at its next wait and join it (for at most ``timeout`` seconds)."""
        with self._cv:
            self._stop = True
            self._cv.notify()
        self._thread.join(timeout)

    # ---- on the worker's thread ---------------------------------------------------------------
    def _serve(self) -> None:
        """Set up, call :meth:`_started`, then serve until closed (most loop on :meth:`_wait`)."""
        raise NotImplementedError

    def _finish(self) -> None:
        """Free what :meth:`_serve` made, after an error is reported (a no-op unless needed)."""

    def _started(self) -> None:
        self.ready.set()
        if self.on_ready is not None:
            self.on_ready()

    def _wait(
        self,
        pending: Callable[[], bool],
        *,
        timeout: float | None = None,
        idle: Callable[[], bool] | None = None,
    ) -> bool:
        """With :attr:`_cv` held: wait until ``pending()`` or :meth:`close`; False once closed.

        ``timeout`` bounds each wait (the predicate is checked again after it). ``idle``, while
        nothing is pending, does background work with the lock released, a piece at a time,
        until it returns False (nothing more to do); from then on this waits.
        """
        while not (self._stop or pending()):
            if idle is not None:
                self._cv.release()
                try:
                    more = idle()
                finally:
                    self._cv.acquire()
                if not more:
                    idle = None
            else:
                self._cv.wait(timeout)
        return not self._stop

    def _main(self) -> None:
        try:
            self._serve()
        except BaseException as err:  # reported on the caller's side; the thread ends
            self.error = err
            self.ready.set()
            if self.on_error is not None:
                self.on_error(err)
        finally:
            self._finish()
            release_thread()  # the thread's EGL state, if it rendered (sim.gl)
            _trim()


def _trim() -> None:
    """Hand the heap a finished worker freed back to the system (glibc keeps it otherwise).

    A frame thread's world, renderer and replay memory are freed when it ends, but glibc keeps
    freed pages in the thread's arena: measured in the GUI, each episode opened and closed left
    8–20 MB of resident memory that ``malloc_trim`` gives back entirely (a long session grew by
    hundreds of MB without it). Not glibc (another libc, macOS): nothing to do."""
    try:
        libc = ctypes.CDLL(None)
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)
