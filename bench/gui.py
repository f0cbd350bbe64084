"""bench/gui: the longest GUI event-loop stall while playing and scrubbing.

Opens the real workbench window (under the current X server; run with Xvfb in CI) on a project
holding one 854×480 H.264 clip with a 250-frame GOP and B-frames, then drives it the way a person
would: play at 1×, scrub the playhead across the clip at 30 updates/s, and step frame by frame.
A 5 ms heartbeat timer measures how late the event loop serves it; a stall is that lateness.
Prints one JSON object (goal: p99 stall ≤ 50 ms).

    python bench/gui.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _clips import make_clip


def make_project(root: Path, clip: Path) -> Path:
    from storage import Project, import_cases

    case = root / "cases" / "bench"
    (case / "videos").mkdir(parents=True)
    shutil.copyfile(clip, case / "videos" / "clip.mp4")
    subprocess.run(
        ["ffmpeg", "-loglevel", "error", "-y", "-i", str(clip), "-frames:v", "1",
         "-vf", "scale=512:-2", str(case / "initial.png")],
        check=True,
    )  # fmt: skip
    (case / "case.json").write_text(
        json.dumps(
            {
                "id": "bench",
                "goal": "Benchmark clip.",
                "domain": "others",
                "clutter": "none",
                "initial_image": "initial.png",
                "videos": [{"file": "videos/clip.mp4", "role": "human-success"}],
            }
        )
    )
    with Project.create(root / "project") as p:
        import_cases(p, case)
    return root / "project"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="short clip and phases (smoke test)")
    args = ap.parse_args()
    phase_s = 1.5 if args.quick else 5.0
    clip = make_clip(10 if args.quick else 60)

    from PySide6.QtCore import QElapsedTimer, QTimer
    from PySide6.QtWidgets import QApplication

    from app.gui._main_window import MainWindow
    from storage import load_settings

    app = QApplication.instance() or QApplication(sys.argv)
    with tempfile.TemporaryDirectory() as tmp:
        project = make_project(Path(tmp), clip)
        w = MainWindow(load_settings())
        w.show()
        w.open_project(project)
        st, player = w.state, w.annotate.player
        gaps: dict[str, list[float]] = {}
        phase = ["warmup"]
        clock = QElapsedTimer()
        clock.start()
        last = [clock.nsecsElapsed()]
        beat = QTimer()
        beat.setInterval(5)

        def on_beat() -> None:
            now = clock.nsecsElapsed()
            gaps.setdefault(phase[0], []).append(max(0.0, (now - last[0]) / 1e6 - 5.0))
            last[0] = now

        beat.timeout.connect(on_beat)
        beat.start()

        def run(name: str, seconds: float, step: object = None, hz: float = 30.0) -> None:
            phase[0] = name
            last[0] = clock.nsecsElapsed()
            end = time.perf_counter() + seconds
            next_t = time.perf_counter()
            while time.perf_counter() < end:
                app.processEvents()
                if step is not None and time.perf_counter() >= next_t:
                    step()  # type: ignore[operator]
                    next_t += 1.0 / hz
                time.sleep(0.001)

        rng = random.Random(0)
        n = st.frame_count
        run("warmup", 1.0)
        store_wait = time.perf_counter()
        feed = w.annotate.feed
        while (
            feed is not None
            and not feed.source.seekable_fast
            and time.perf_counter() - store_wait < 120
        ):
            run("indexing", 0.25)
        seek_ready_s = time.perf_counter() - store_wait
        player.play()
        run("play_1x", phase_s)
        player.pause()
        run("scrub", phase_s, lambda: st.seek(rng.randrange(n)))
        run("step_fwd", phase_s / 2, lambda: player.step(1), hz=20)
        run("step_back", phase_s / 2, lambda: player.step(-1), hz=20)
        beat.stop()
        w.close()

    def stats(v: list[float]) -> dict[str, float]:
        a = np.asarray(v or [0.0])
        return {
            "p50_ms": round(float(np.percentile(a, 50)), 2),
            "p99_ms": round(float(np.percentile(a, 99)), 2),
            "max_ms": round(float(a.max()), 2),
            "beats": int(a.size),
        }

    measured = [k for k in gaps if k not in ("warmup",)]
    allv = [x for k in ("play_1x", "scrub", "step_fwd", "step_back") for x in gaps.get(k, [])]
    print(
        json.dumps(
            {
                "bench": "gui",
                "clip": clip.name,
                "frames": n,
                "seek_cache_ready_s": round(seek_ready_s, 2),
                "phases": {k: stats(gaps[k]) for k in measured},
                "stall_p99_ms": stats(allv)["p99_ms"],
                "stall_max_ms": stats(allv)["max_ms"],
                "goal_p99_ms": 50,
            }
        )
    )


if __name__ == "__main__":
    main()
