"""Regenerate docs/images/episode-belief.png and episode-mujoco.png: the Episode workspace on a
failed imported episode at its failing tick (world against belief) and on a physics episode
(the MuJoCo view), and episode-3d.png: that tick in the 3D scene (the arm's path, contacts).

    xvfb-run -s "-screen 0 1600x1000x24" .venv/bin/python docs/screenshot_episode.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtWidgets import QApplication

from app.gui._main_window import MainWindow
from sim.episode import open_scenario
from sim.interact import run_interactive
from sim.review import import_bundle
from sim.users import PROFILES
from storage import Project, load_settings

HERE = Path(__file__).resolve().parent


def main() -> None:
    tmp = Path(tempfile.mkdtemp())
    bundle = tmp / "bundle"
    subprocess.run([sys.executable, str(HERE / "examples" / "episode_bundle.py"), str(bundle)],
                   check=True)  # fmt: skip
    with Project.create(tmp / "p") as p:
        imported = import_bundle(p, bundle)
        physics = run_interactive(bound=open_scenario("cheeseburger"), persona=PROFILES["expert"],
                                  project=p, mode="physics", timing="measured",
                                  assistant_options={"latency_s": 0.8}).episode_id  # fmt: skip
    app = QApplication(sys.argv)
    w = MainWindow(load_settings())
    w.resize(1600, 960)
    w.show()
    w.open_project(tmp / "p")
    w.set_workspace("episode")

    def pump(s: float) -> None:
        end = time.monotonic() + s
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.01)

    for eid, tick, name in ((imported, 40, "episode-belief"), (physics, None, "episode-mujoco")):
        w.episode.open(str(eid))
        pump(2)
        tl = w.episode.timeline
        assert tl is not None
        if tick is None:  # the cheese-first mistake, the moment the assistant flags it
            tick = next(i.start for i in tl.items if i.kind == "flag" and i.start > 300)
        w.episode.seek(tick)
        pump(2)
        w.grab().save(str(HERE / "images" / f"{name}.png"))
        print("saved", name, "at tick", tick)
    # the same tick in the 3D scene: the arm's path so far and the contacts
    w.episode.tabs.setCurrentWidget(w.episode.scene3d)
    pump(3)
    w.grab().save(str(HERE / "images" / "episode-3d.png"))
    print("saved episode-3d at tick", w.episode.tick)
    if len(sys.argv) > 1:  # also at a small screen, for a look (not in the docs)
        w.resize(1366, 768)
        pump(2)
        w.grab().save(sys.argv[1])


if __name__ == "__main__":
    main()
