"""``workbench sim check``: the home it used, no false warnings, and the scenario table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ARMS = Path(__file__).parents[1] / "sim" / "mujoco" / "arms"
ZERO_OUTSIDE = [
    str(ARMS / "zero_outside.xml"), "--ee-site", "tool_tip",
    "--arm-joints", "j_yaw,j_shoulder,j_elbow,j_roll,j_pitch,j_flange",
    "--gripper", "m_jaw_a,m_jaw_b",
]  # fmt: skip
LAB7 = [
    str(Path(__file__).parents[2] / "resources" / "sim" / "arms" / "lab7.xml"),
    "--ee-site", "tool0", "--arm-joints", ",".join(f"link{i}_joint" for i in range(1, 8)),
    "--gripper", "finger_left_act,finger_right_act",
]  # fmt: skip


def check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "sim", "check", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_check_says_which_home_and_warns_of_nothing_false() -> None:
    out = check(*ZERO_OUTSIDE, "--trials", "1")
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[1].startswith("home: home keyframe (j_yaw 0.000, j_shoulder 0.200, j_elbow 1.600")
    assert not [ln for ln in lines if ln.startswith(("warning:", "error:"))], out.stdout
    assert out.stderr == ""  # nothing from MuJoCo or numpy between the lines


def test_check_scenarios_table_as_json_with_a_dry_run() -> None:
    out = check(*LAB7, "--trials", "0", "--scenarios", "patty-in-pan,stack-two", "--run", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["ok"] and report["home"]["source"] == "home keyframe"
    table = report["scenarios"]
    assert (table["can"], table["of"], table["agree"], table["ran"]) == (1, 2, 2, 2)
    patty, stack = table["rows"]
    assert patty["scenario"] == "patty-in-pan" and patty["can"] is False
    assert patty["why"][0].startswith("no grasp: patty 7.0 cm, jaws open ")
    assert [r["mode"] for r in patty["runs"]] == ["symbolic", "physics"]
    assert patty["runs"][1]["success"] is False and patty["agrees"] is True
    assert stack["can"] is True and stack["runs"][1]["success"] is True


def test_check_scenarios_table_in_text_and_bad_names() -> None:
    out = check(*LAB7, "--trials", "0", "--scenarios", "fetch-mug")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "scenarios: 0 of 1 within reach and grasp" in out.stdout
    assert "no grasp: mug_blue 6.8 cm" in " ".join(out.stdout.split())
    out = check(*LAB7, "--trials", "0", "--scenarios", "stack-fve")
    assert out.returncode == 2 and out.stderr.startswith("error: 'stack-fve' is neither")
    assert "Traceback" not in out.stderr
    out = check(*LAB7, "--trials", "0", "--run")
    assert out.returncode == 2 and "--run runs the scenarios' references" in out.stderr
