"""bench/gui_episode's person-at-the-window figures: fork seeks, idle CPU, memory over a session.

Each takes the open window (``w``) and a ``pump_until(cond, timeout)`` that runs the event loop;
they act through the widgets a person uses (timeline clicks, the Fork button, the workspace
switch) and report numbers only: nothing here asserts a time.
"""

from __future__ import annotations

import random
import resource
import time
from pathlib import Path
from typing import Any


def rss_mb() -> float:
    """This process's resident memory now (from /proc: ru_maxrss is only the peak)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _click_tick(ws: Any, tick: int) -> None:
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtTest import QTest

    vb = ws.view.getPlotItem().vb
    row = ws.view.row_y(ws.view.tracks[-1]) + 0.45  # the edge of the lowest row: no item there
    pt = ws.view.mapFromScene(vb.mapViewToScene(QPointF(tick, row)))
    QTest.mouseClick(ws.view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(pt.x(), pt.y()))


def fork_seeks(app: Any, w: Any, eid: str, pump_until: Any, rng: random.Random,
               n: int) -> list[float]:  # fmt: skip
    """Fork ``eid`` at its middle (paused there), then click random ticks up to the fork's
    head: seconds from each click to the frame of the clicked tick painted."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    ws = w.episode
    ws.open(eid)
    pump_until(lambda: not ws.loading and ws.timeline is not None
               and ws.timeline.episode.id == eid)  # fmt: skip
    middle = ws.timeline.ticks // 2
    ws.seek(middle)
    QTest.mouseClick(ws.fork_button, Qt.MouseButton.LeftButton)
    panel = ws.live
    pump_until(lambda: panel.live is not None and panel.live.tick == middle
               and ws.tick == middle and ws.world.frame is not None, timeout=120)  # fmt: skip
    out = []
    for _ in range(n):
        tick = rng.randrange(1, middle)
        start = time.perf_counter()
        _click_tick(ws, tick)
        target = ws.tick
        pump_until(lambda t=target: ws.world.frame is not None and ws.world.frame.tick == t)
        out.append(time.perf_counter() - start)
    panel.stop(quiet=True)
    return out


def idle_cpu(app: Any, w: Any, seconds: float) -> dict[str, float]:
    """CPU seconds per wall second of this process with each workspace shown, nothing moving."""
    out = {}
    for name in ("annotate", "judge", "results", "episode", "teleop"):
        w.set_workspace(name)
        settle = time.perf_counter() + 1.5  # the workspace's own start-up work is not idling
        while time.perf_counter() < settle:
            app.processEvents()
            time.sleep(0.005)
        c0, t0 = time.process_time(), time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            app.processEvents()
            time.sleep(0.01)
        out[name] = round((time.process_time() - c0) / (time.perf_counter() - t0), 3)
    w.set_workspace("episode")
    return out


def session_memory(app: Any, w: Any, eid: str, pump_until: Any, rng: random.Random,
                   minutes: float) -> dict[str, Any]:  # fmt: skip
    """Scripted use for ``minutes``: seek, live-run, fork, compare, switch workspaces; the
    resident memory after the first minute and at the end."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    ws, panel = w.episode, w.episode.live
    start = time.perf_counter()
    after_first: float | None = None
    rounds = 0
    others: list[str] = []
    while time.perf_counter() - start < minutes * 60:
        w.set_workspace("episode")
        ws.open(eid)
        pump_until(lambda: not ws.loading and ws.timeline is not None
               and ws.timeline.episode.id == eid)  # fmt: skip
        for _ in range(10):
            _click_tick(ws, rng.randrange(1, ws.timeline.ticks))
            target = ws.tick
            pump_until(lambda t=target: ws.world.frame is not None and ws.world.frame.tick == t)
        # a short live run, stopped and stored (it opens as a recorded episode)
        panel.mode.setCurrentText("physics")
        QTest.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
        pump_until(lambda: panel.live is not None and panel.step_button.isEnabled())
        panel.live.step(30)
        pump_until(lambda: panel.live is not None and panel.live.tick >= 30)
        if panel.episode_id:
            others.append(panel.episode_id)
        panel.stop()
        # a fork at tick 40, run to its tick, then dropped
        ws.open(eid)
        pump_until(lambda: not ws.loading and ws.timeline is not None
               and ws.timeline.episode.id == eid)  # fmt: skip
        ws.seek(40)
        QTest.mouseClick(ws.fork_button, Qt.MouseButton.LeftButton)
        pump_until(lambda: panel.live is not None and panel.live.tick == 40, timeout=120)
        panel.stop(quiet=True)
        # compare with a run from before
        ws.open(eid)
        pump_until(lambda: not ws.loading and ws.timeline is not None
               and ws.timeline.episode.id == eid)  # fmt: skip
        if others:
            ws.compare_with(others[-1])
            pump_until(lambda: ws.compared is not None)
        for name in ("annotate", "results", "teleop", "episode"):
            w.set_workspace(name)
            t = time.perf_counter() + 0.5
            while time.perf_counter() < t:
                app.processEvents()
                time.sleep(0.005)
        rounds += 1
        if after_first is None and time.perf_counter() - start >= 60:
            after_first = rss_mb()
    end = rss_mb()
    first = after_first if after_first is not None else end
    return {"minutes": minutes, "rounds": rounds, "rss_after_1_min_mb": round(first, 1),
            "rss_at_end_mb": round(end, 1), "growth_mb": round(end - first, 1)}  # fmt: skip
