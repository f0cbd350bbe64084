"""Frames asked for in `ready` arrive as base64 PNG of what the render callable drew."""

from __future__ import annotations

import base64
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from sim.external import ExternalAgent, ExternalAgentError
from sim.world import World
from tests.sim.external.helpers import Recorded, run, script, stack_two

ASK_FRAMES = """
sys.stdin.readline()
send({"type": "ready", "protocol": "workbench-agent/1", "agent": {"name": "eyes"},
      "frames": {"cameras": [%r], "width": 32, "height": 24}})
sys.stdin.readline()
send({"type": "done"})
sys.stdin.readline()
"""
rendered: list[tuple[str, int, int]] = []


def _render(camera: str, width: int = 640, height: int = 480) -> npt.NDArray[np.uint8]:
    rendered.append((camera, width, height))
    img = np.zeros((height, width, 3), np.uint8)
    img[:, : width // 2, 0] = 200  # left half red: a channel swap would show
    return img


def _agent(camera: str, log: Recorded) -> Any:
    def make(b: Any, world: World) -> ExternalAgent:
        return ExternalAgent.spawn(script(ASK_FRAMES % camera), b, world, render=_render,
                                   cameras=("front",), record=lambda *r: log.append(r))  # fmt: skip

    return make


def test_frames_are_png_of_the_render() -> None:
    log: Recorded = []
    runner, _ = run(stack_two(), _agent("front", log))
    assert runner.result is not None and runner.result.status == "completed"
    hello = log[0][2]
    assert hello["cameras"] == ["front"] and hello["frames"]["available"] is True
    obs = next(m for _, _, m in log if m["type"] == "observation")
    png = base64.b64decode(obs["frames"]["front"])
    bgr = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    assert bgr is not None
    rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
    assert np.array_equal(rgb, _render("front", 32, 24))
    assert rendered[0] == ("front", 32, 24)


def test_unknown_camera_is_refused() -> None:
    with pytest.raises(ExternalAgentError, match=r"field 'frames\.cameras\[0\]'.*'top'"):
        run(stack_two(), _agent("top", []))


def test_symbolic_world_has_no_frames_to_send() -> None:
    log: Recorded = []

    def make(b: Any, world: World) -> ExternalAgent:
        return ExternalAgent.spawn(script(ASK_FRAMES % "front"), b, world,
                                   record=lambda *r: log.append(r))  # fmt: skip

    runner, _ = run(stack_two(), make)
    assert runner.result is not None and runner.result.status == "completed"
    assert "no cameras" in log[0][2]["frames"]["reason"]
    assert all("frames" not in m for _, _, m in log if m["type"] == "observation")
