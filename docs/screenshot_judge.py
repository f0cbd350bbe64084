"""Regenerate docs/images/judge.png: the judge workspace on the demo project.

    xvfb-run -s "-screen 0 1600x1000x24" .venv/bin/python docs/screenshot_judge.py demo-project

Judges one demo video with a scripted model behind the loopback test server (no network, no
key), then shows the Judge workspace with its trace and the jobs panel.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.gui._main_window import MainWindow
from judge import ModelProfile, queue_judge, save_profile, scripted_judge
from judge.models.loopback import FakeServer
from judge.video.loopback import wire_responder
from storage import Project, load_settings, run_worker


def main() -> None:
    project = Path(sys.argv[1])
    out = Path(__file__).resolve().parent / "images" / "judge.png"
    judge = scripted_judge(
        task_subgoals=3, physics_windows=3, answers={"T3": {"S3": "no"}, "P1": {"S2": "no"}},
        inspections={"P1": 1}, inspect_args={"start_s": 3.0, "end_s": 4.5},
    )  # fmt: skip
    with FakeServer(wire_responder(judge)) as srv, Project.open(project) as p:
        save_profile(
            p.profiles,
            ModelProfile(
                name="demo-scripted",
                base_url=srv.base_url,
                model="scripted-vlm",
                api_key_env="",
                price_in_per_mtok=0.3,
                price_out_per_mtok=2.5,
            ),
        )
        video = p.videos("stack_blocks")[0]
        queue_judge(p, [video.id], profile="demo-scripted", batch="docs")
        run_worker(project, concurrency=1, drain=True, log=lambda _r: None)
    app = QApplication(sys.argv)
    w = MainWindow(load_settings())
    w.resize(1600, 960)
    w.show()
    w.open_project(project)
    assert w.state.project is not None
    w.annotate.open_video(w.state.project.video(video.id))
    w.set_workspace("judge")
    w.trace_view.refresh()
    QTimer.singleShot(2500, lambda: (w.grab().save(str(out)), app.quit()))
    app.exec()
    print(out)


if __name__ == "__main__":
    main()
