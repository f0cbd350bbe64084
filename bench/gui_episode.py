"""bench/gui_episode: the Episode workspace's seek latency, timeline frame time and live run.

Opens the real window (under the current X server) on a project with a recorded physics
episode of the kitchen scene (cheeseburger, rule-based user, oracle assistant) and measures:

- **seek**: from a click on the timeline to every view updated — timeline playhead,
  transcript, inspector — and to the MuJoCo frame of that tick painted (640×480, rendered on
  its own thread); random ticks, p50/p95 (goal p95 ≤ 100 ms for a recorded episode). *Cold*:
  straight after opening, the world replayed from the nearest stored snapshot; *warm* (the
  goal's figure): once the frame thread has replayed every tick into memory while idle
  (``prefetch_all_ticks_s`` after opening), so a seek restores and renders;
- **timeline**: frame time of the pyqtgraph timeline holding 100,000 items while panning
  (goal p95 ≤ 16 ms), beside the same timeline with one item per track in the same process;
- **live**: a live physics episode at 1× real time with the timeline following it: event-loop
  stalls (a 5 ms heartbeat's lateness; goal p99 ≤ 50 ms) and the real-time factor reached
  (goal ≥ 1.0 at Δ = 0.1 s);
- **fork seek**: the episode forked at its middle and paused; clicks on the timeline at random
  ticks before and after the fork tick, to the MuJoCo frame *of that tick* painted (goal p95
  ≤ 100 ms, as for a recorded episode);
- **idle CPU**: each workspace shown with nothing moving, CPU seconds per wall second of this
  process over a few seconds (goal ≤ 5 % of a core);
- **session memory** (``--minutes M``, default 15; 1.2 with ``--quick``): scripted use — seeks,
  live runs, forks, compares, workspace switches — in a loop; resident memory after the first
  minute and at the end (goal: growth ≤ 100 MB).

    python bench/gui_episode.py [--quick] [--minutes M]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.append(str(Path(__file__).resolve().parent))  # bench/_gui_session.py (last: bench/sim.py)


def stats(v: list[float]) -> dict[str, Any]:
    a = np.array(v, float) * 1000
    if not len(a):
        return {"n": 0}
    return {"n": len(a), "p50_ms": round(float(np.percentile(a, 50)), 1),
            "p95_ms": round(float(np.percentile(a, 95)), 1),
            "p99_ms": round(float(np.percentile(a, 99)), 1),
            "max_ms": round(float(a.max()), 1)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer seeks, shorter live run")
    ap.add_argument("--minutes", type=float, default=None, help="scripted session's length")
    args = ap.parse_args()
    minutes = args.minutes if args.minutes is not None else (1.2 if args.quick else 15.0)
    from PySide6.QtCore import QPoint, QPointF, Qt, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from app.gui._main_window import MainWindow
    from sim.episode import open_scenario
    from sim.interact import run_interactive
    from sim.review import Item
    from sim.users import PROFILES
    from storage import Project, load_settings

    tmp = Path(tempfile.mkdtemp())
    with Project.create(tmp / "p") as p:
        eid = run_interactive(bound=open_scenario("cheeseburger"), persona=PROFILES["balanced"],
                              project=p, mode="physics").episode_id  # fmt: skip
        assert eid is not None
    app = QApplication.instance() or QApplication(sys.argv[:1])
    w = MainWindow(load_settings())
    w.resize(1600, 960)
    w.show()
    w.open_project(tmp / "p")
    w.set_workspace("episode")
    ws = w.episode

    def pump_until(cond: Any, timeout: float = 60.0) -> float:
        start = time.perf_counter()
        while not cond():
            app.processEvents()
            if time.perf_counter() - start > timeout:
                raise TimeoutError("bench: waited too long")
            time.sleep(0.0005)
        return time.perf_counter() - start

    ws.open(eid)
    pump_until(lambda: ws.timeline is not None and ws.world.frame is not None)
    tl = ws.timeline
    assert tl is not None
    # ---- seek by clicking the timeline ------------------------------------------------------
    rng = random.Random(7)
    vb = ws.view.getPlotItem().vb
    row = ws.view.row_y(ws.view.tracks[-1]) + 0.45  # the edge of the lowest row: no item there

    def seeks(n: int) -> tuple[list[float], list[float]]:
        views, frames = [], []
        for _ in range(n):
            tick = rng.randrange(1, tl.ticks)
            pt = ws.view.mapFromScene(vb.mapViewToScene(QPointF(tick, row)))
            start = time.perf_counter()
            QTest.mouseClick(ws.view.viewport(), Qt.MouseButton.LeftButton,
                             pos=QPoint(pt.x(), pt.y()))  # fmt: skip
            target = ws.tick  # the click's own tick (a pixel is about a tick wide)
            pump_until(lambda t=target: ws.inspector.tick == t and ws.view.playhead.value() == t)
            views.append(time.perf_counter() - start)
            pump_until(lambda t=target: ws.world.frame is not None and ws.world.frame.tick == t)
            frames.append(time.perf_counter() - start)
        return views, frames

    # cold: straight after opening, while the frame thread still replays ticks into memory
    views, cold = seeks(10 if args.quick else 20)
    # warm: once every tick is in memory (a few seconds after opening)
    prefetch_s = pump_until(lambda: ws.world.frames.prefetched.is_set(), timeout=300)
    more_views, frames = seeks(10 if args.quick else 40)
    views += more_views
    # ---- a timeline with 100,000 items, panned ---------------------------------------------
    tracks = ("actions", "rejections", "user", "assistant", "replies", "events")
    items = []
    for k in range(100_000):
        track = tracks[k % len(tracks)]
        start_t = k // 2
        end_t = start_t + (3 if track in ("actions", "events") else 0)
        if track == "replies":
            end_t = start_t + 8
        items.append(Item(track, start_t, end_t, f"item {k}", "fresh" if k % 3 else "stale"))
    span = 2_000

    def pan(n: int) -> list[float]:
        app.processEvents()
        out = []
        for k in range(n):
            x0 = (k * 700) % (50_000 - span)
            ws.view.setXRange(x0, x0 + span, padding=0)
            start = time.perf_counter()
            ws.view.viewport().repaint()
            out.append(time.perf_counter() - start)
        return out

    # baseline in the same process: the same timeline with one item per track (axes, grid,
    # playhead: what any frame costs here), then with the 100,000 items
    ws.view.show_items(tracks, [Item(t, 0, 1, "one", "fresh") for t in tracks], 50_000)
    empty = pan(20 if args.quick else 60)
    ws.view.show_items(tracks, items, 50_000)
    paint = pan(20 if args.quick else 60)
    size = ws.view.viewport().size()
    ws.view.show_items(tl.tracks, tl.items, tl.ticks)
    # ---- live physics at 1× with the timeline following ------------------------------------
    panel = ws.live
    panel.scenario.setCurrentText("cheeseburger")
    panel.mode.setCurrentText("physics")
    panel.seat.setChecked(False)
    panel.start()
    stalls: list[float] = []
    last = [time.perf_counter()]

    def beat() -> None:
        now = time.perf_counter()
        stalls.append(max(0.0, now - last[0] - 0.005))
        last[0] = now

    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.timeout.connect(beat)
    assert panel.live is not None
    panel.live.play(1.0)
    timer.start(5)
    end = time.perf_counter() + (4.0 if args.quick else 10.0)
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.001)
    timer.stop()
    rtf = panel.live.rtf
    live_ticks = panel.live.tick
    panel.stop(quiet=True)
    from _gui_session import fork_seeks, idle_cpu, session_memory

    fork = fork_seeks(app, w, eid, pump_until, rng, 10 if args.quick else 40)
    idle = idle_cpu(app, w, 2.0 if args.quick else 5.0)
    memory = session_memory(app, w, eid, pump_until, rng, minutes)
    w.close()
    print(json.dumps({
        "bench": "gui_episode",
        "episode_ticks": tl.ticks,
        "seek_views": stats(views),
        "seek_with_mujoco_frame": stats(frames),
        "seek_with_mujoco_frame_cold": stats(cold),
        "prefetch_all_ticks_s": round(prefetch_s, 2),
        "timeline_px": [size.width(), size.height()],
        "timeline_1_per_track_paint": stats(empty),
        "timeline_100k_paint": stats(paint),
        "timeline_100k_over_baseline_p50": round(
            float(np.percentile(paint, 50) / np.percentile(empty, 50)), 2),
        "live": {"seconds": 4.0 if args.quick else 10.0, "ticks": live_ticks,
                 "rtf": None if rtf is None else round(rtf, 3), "stalls": stats(stalls)},
        "fork_seek_with_mujoco_frame": stats(fork),
        "idle_cpu_share": idle,
        "session": memory,
        "goals": {"seek_p95_ms": 100, "timeline_p95_ms": 16, "live_stall_p99_ms": 50,
                  "live_rtf": 1.0, "fork_seek_p95_ms": 100, "idle_cpu_share": 0.05,
                  "session_growth_mb": 100},
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
