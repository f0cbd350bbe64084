"""``workbench sim``: run, replay, fork, list, check — as a user runs them (subprocesses)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import av

from sim.mujoco import LAB7, WB6
from storage import Project


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "sim", *args], capture_output=True, text=True, check=False
    )


def test_run_with_video_then_replay_and_fork(tmp_path: Path) -> None:
    project = tmp_path / "p"
    out = run("run", "stack-two", "--project", str(project), "--video", "head", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["status"] == "completed" and result["success"] is True
    assert result["conditions"] == [{"text": "brick_red on brick_blue", "value": "T"}]
    sha = result["videos"]["head"]
    video = next((project / "media").rglob(f"{sha}*"))
    with av.open(str(video)) as container:
        frames = sum(1 for _ in container.decode(video=0))
    assert frames == result["ticks"] + 1  # tick 0 and one frame after every tick

    episode = result["episode"][:8]
    out = run("replay", episode, "--project", str(project))
    assert out.returncode == 0 and "identical" in out.stdout, out.stdout + out.stderr
    out = run("fork", episode, "20", "--project", str(project))
    assert out.returncode == 0 and "success" in out.stdout, out.stdout + out.stderr
    fork_id = out.stdout.split("episode ")[1][:8]
    out = run("replay", fork_id, "--project", str(project))
    assert out.returncode == 2 and f"is a fork of {episode}" in out.stderr
    out = run("episodes", "--project", str(project))
    assert out.stdout.count("stack-two") == 2


def test_symbolic_run_and_an_unmet_goal_is_reported(tmp_path: Path) -> None:
    scenario = json.loads(Path(
        "resources/sim/scenarios/stack-three.json").read_text())  # fmt: skip
    scenario["name"] = "wrong-order"
    scenario["reference"] = ["pick up the blue brick", "put the blue brick on the red brick"]
    path = tmp_path / "wrong-order.json"
    path.write_text(json.dumps(scenario))
    out = run("run", str(path), "--mode", "symbolic", "--project", str(tmp_path / "p"))
    assert out.returncode == 0, out.stderr
    assert "completed" in out.stdout and "goal not met" in out.stdout
    assert "GCR 0.00" in out.stdout and "validity 1.00" in out.stdout


def test_bad_scenarios_are_named_not_tracebacks(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x",\n "family": "stack",\n}')
    out = run("run", str(bad), "--project", str(tmp_path / "p"))
    assert out.returncode == 2 and f"{bad}: line 3" in out.stderr
    assert "Traceback" not in out.stderr
    doc = json.loads(Path("resources/sim/scenarios/stack-two.json").read_text())
    doc["layout"]["objects"][0]["id"] = "brick_pink"
    bad.write_text(json.dumps(doc))
    out = run("run", str(bad), "--project", str(tmp_path / "p"))
    assert out.returncode == 2 and "layout.objects[0].id: unknown object 'brick_pink'" in out.stderr
    out = run("run", "no-such-scenario", "--project", str(tmp_path / "p"))
    assert out.returncode == 2 and "neither a shipped scenario nor a file" in out.stderr
    assert not (tmp_path / "p").exists()  # nothing was created for a scenario that failed
    Project.create(tmp_path / "p").close()
    out = run("replay", "ffffffff", "--project", str(tmp_path / "p"))
    assert out.returncode == 2 and "no episode" in out.stderr


def test_list_shows_the_shipped_scenarios() -> None:
    out = run("list")
    assert out.returncode == 0 and "cheeseburger" in out.stdout and "mug-in-drawer" in out.stdout


def _check(spec_args: list[str]) -> subprocess.CompletedProcess[str]:
    return run("check", *spec_args, "--trials", "1")


def test_check_accepts_both_arms_and_names_what_is_wrong(tmp_path: Path) -> None:
    for arm in (WB6, LAB7):
        out = _check([str(arm.mjcf), "--ee-site", arm.ee_site,
                      "--arm-joints", ",".join(arm.arm_joints),
                      "--gripper", ",".join(arm.gripper_actuators)])  # fmt: skip
        assert out.returncode == 0, out.stdout + out.stderr
        assert "ok:" in out.stdout and "1/1" in out.stdout
    out = _check([str(LAB7.mjcf), "--ee-site", "tool0", "--arm-joints", "elbow",
                  "--gripper", "finger_left_act"])  # fmt: skip
    assert out.returncode == 2 and "lab7.xml: no joint named 'elbow'" in out.stderr
    broken = tmp_path / "broken.xml"
    broken.write_text(WB6.mjcf.read_text().replace("<joint name=", "<joint nme=", 1))
    out = _check([str(broken), "--ee-site", WB6.ee_site, "--arm-joints", "shoulder_pan",
                  "--gripper", "gripper"])  # fmt: skip
    assert out.returncode == 2 and "broken.xml" in out.stderr and "line" in out.stderr
    assert "Traceback" not in out.stderr


def test_check_errors_say_what_to_fix(tmp_path: Path) -> None:
    joints = ",".join(WB6.arm_joints)
    out = _check([str(WB6.mjcf), "--ee-site", WB6.ee_site, "--arm-joints", joints,
                  "--gripper", " , "])  # fmt: skip
    assert out.returncode == 2, out.stdout + out.stderr
    assert "wb6.xml: a gripper actuator is required" in out.stderr and "'gripper'" in out.stderr
    out = _check([str(tmp_path), "--ee-site", WB6.ee_site, "--arm-joints", joints,
                  "--gripper", "gripper"])  # fmt: skip
    assert out.returncode == 2 and f"{tmp_path}: is a directory, not an MJCF file" in out.stderr
    # a servo far too stiff: MuJoCo warns in every trial; the command says it once, its way
    xml = WB6.mjcf.read_text().replace('kp="2000"', 'kp="2e9"')
    stiff = tmp_path / "stiff.xml"
    stiff.write_text(xml.replace('forcerange="-250 250"', 'forcerange="-1e12 1e12"'))
    out = run("check", str(stiff), "--ee-site", WB6.ee_site, "--arm-joints", joints,
              "--gripper", "gripper", "--trials", "2")  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    assert "WARNING" not in out.stdout + out.stderr
    warned = [ln for ln in out.stdout.splitlines() if ln.startswith("warning:")]
    assert len(warned) == 1 and "became unstable" in warned[0] and "2 of 2 trials" in warned[0]
    assert "joint 'shoulder_pan'" in warned[0] and "not usable" in out.stdout
