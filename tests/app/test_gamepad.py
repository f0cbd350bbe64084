"""The gamepad path through real SDL (PySDL2 + the SDL2 of pysdl2-dll), no hardware: SDL's
virtual joysticks stand in for a pad. Needs no X server: SDL runs without its video subsystem.

The scripted operator of tests/sim/teleop/operator.py decides what to do; a translator turns
each of its commands into virtual stick and button positions, the :class:`Gamepad` reads them
back through SDL (screen axes: stick right is right, stick up is forward), and only what the
gamepad produced drives the arm, seen through a view whose axes are the world's."""

from __future__ import annotations

import ctypes
import importlib
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from app.devices import _gamepad
from app.devices._gamepad import (
    DEADZONE,
    NEUTRAL,
    PRECISION_SPEED,
    Gamepad,
    GamepadError,
    gamepads,
)
from sim.contracts import evaluate
from sim.episode import make_world, open_scenario
from sim.mujoco import PhysicsWorld
from sim.teleop import ALIGNED, SCREEN, Command, StepReport, Teleop, to_world
from tests.sim.teleop.operator import SLOW, Operator, pick_and_place

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # pysdl2 announces which SDL binary it loaded
    import sdl2

FULL = 32767


@pytest.fixture
def virtual() -> Iterator[list[int]]:
    """Attach virtual joysticks through the test (``attach_pad``/``attach_raw``); every one
    is detached at the end, so the next test starts with none."""
    assert _gamepad.available()
    attached: list[int] = []
    yield attached
    for instance_id in attached:
        for k in range(sdl2.SDL_NumJoysticks()):
            if sdl2.SDL_JoystickGetDeviceInstanceID(k) == instance_id:
                sdl2.SDL_JoystickDetachVirtual(k)
                break
    sdl2.SDL_JoystickUpdate()


def attach_pad(attached: list[int], name: bytes = b"Virtual pad") -> int:
    """A virtual game controller (SDL gives it a standard mapping); returns its device index."""
    desc = sdl2.SDL_VirtualJoystickDesc()
    desc.version = sdl2.SDL_VIRTUAL_JOYSTICK_DESC_VERSION
    desc.type = sdl2.SDL_JOYSTICK_TYPE_GAMECONTROLLER
    desc.naxes = sdl2.SDL_CONTROLLER_AXIS_MAX
    desc.nbuttons = sdl2.SDL_CONTROLLER_BUTTON_MAX
    desc.name = name
    index = int(sdl2.SDL_JoystickAttachVirtualEx(ctypes.byref(desc)))
    assert index >= 0, sdl2.SDL_GetError()
    attached.append(int(sdl2.SDL_JoystickGetDeviceInstanceID(index)))
    return index


def attach_raw(attached: list[int]) -> int:
    """A virtual joystick SDL has no mapping for: 4 axes, 8 buttons."""
    index = int(sdl2.SDL_JoystickAttachVirtual(sdl2.SDL_JOYSTICK_TYPE_UNKNOWN, 4, 8, 0))
    assert index >= 0, sdl2.SDL_GetError()
    attached.append(int(sdl2.SDL_JoystickGetDeviceInstanceID(index)))
    return index


class Pad:
    """The hands on a virtual pad: the SDL joystick behind an opened :class:`Gamepad`."""

    def __init__(self, pad: Gamepad) -> None:
        self.js: Any = sdl2.SDL_JoystickFromInstanceID(pad.info.instance_id)
        assert self.js

    def axis(self, axis: int, value: float) -> None:
        assert sdl2.SDL_JoystickSetVirtualAxis(self.js, axis, round(value * FULL)) == 0

    def button(self, button: int, down: bool) -> None:
        assert sdl2.SDL_JoystickSetVirtualButton(self.js, button, int(down)) == 0


@pytest.fixture(scope="module")
def bound():  # type: ignore[no-untyped-def]
    return open_scenario("stack-two")


def test_no_gamepad_is_listed_when_none_is_attached(virtual: list[int]) -> None:
    assert gamepads() == []
    index = attach_pad(virtual, b"Pad one")
    listed = gamepads()
    assert [(g.index, g.name, g.mapped) for g in listed] == [(index, "Pad one", True)]
    assert len(listed[0].guid) == 32 and listed[0].instance_id == virtual[0]
    with pytest.raises(GamepadError, match="no gamepad at index 5"):
        Gamepad.open(5)


def test_a_stick_drives_the_arm_to_stack_the_red_brick_on_the_blue(  # type: ignore[no-untyped-def]
    bound, virtual: list[int]
) -> None:
    world = make_world(bound, "physics", arm="wb6")
    assert isinstance(world, PhysicsWorld)
    world.reset(bound.scenario.seed)
    t = Teleop(world)
    pad = Gamepad.open(attach_pad(virtual), max_linear=t.max_linear, max_angular=t.max_angular)
    hands = Pad(pad)
    closed = False  # the gripper as the pad's A toggle has set it
    polled: list[Command] = []

    def through_the_pad(cmd: Command) -> StepReport:
        """Put the operator's intent on the sticks and buttons, then apply what SDL reads."""
        nonlocal closed
        vx, vy, vz = (v / t.max_linear for v in cmd.linear)
        hands.axis(sdl2.SDL_CONTROLLER_AXIS_LEFTX, vx)
        hands.axis(sdl2.SDL_CONTROLLER_AXIS_LEFTY, -vy)  # SDL's y axes point down
        hands.axis(sdl2.SDL_CONTROLLER_AXIS_RIGHTY, -vz)
        hands.axis(sdl2.SDL_CONTROLLER_AXIS_RIGHTX, -cmd.angular[2] / t.max_angular)
        hands.button(sdl2.SDL_CONTROLLER_BUTTON_RIGHTSHOULDER, cmd.speed == SLOW)
        want = closed if cmd.grip is None else cmd.grip > 0.5
        hands.button(sdl2.SDL_CONTROLLER_BUTTON_A, want != closed)  # a press flips it
        got = pad.poll()
        polled.append(got)
        if want != closed:
            assert got.grip == (1.0 if want else 0.0)
            closed = want
        else:
            assert got.grip is None
        assert got.linear == pytest.approx(cmd.linear, abs=1e-9)
        assert got.angular == pytest.approx(cmd.angular, abs=1e-9)
        assert got.speed == (PRECISION_SPEED if cmd.speed == SLOW else 1.0)
        assert got.clutch and got.frame == SCREEN
        # the pad gives screen axes; seen from -y looking along +y they are the world's own
        return t.apply(to_world(got, ALIGNED))

    assert not evaluate(bound.contract, t.world.graph, []).satisfied
    pick_and_place(Operator(t, through_the_pad), "brick_red", "brick_blue")
    assert evaluate(bound.contract, t.world.graph, []).satisfied
    assert t.world.graph.held() is None
    assert sum(c.grip is not None for c in polled) == 2  # one close, one open
    assert any(c.speed == PRECISION_SPEED for c in polled)
    pad.close()
    t.close()


def test_the_deadzone_and_the_rescaled_stick(virtual: list[int]) -> None:
    pad = Gamepad.open(attach_pad(virtual), max_linear=0.25, max_angular=1.5)
    hands = Pad(pad)
    hands.axis(sdl2.SDL_CONTROLLER_AXIS_LEFTX, DEADZONE * 0.9)  # a stick resting off-centre
    hands.axis(sdl2.SDL_CONTROLLER_AXIS_RIGHTX, -DEADZONE * 0.9)
    assert pad.poll() == NEUTRAL
    # past the deadzone the output rises from 0, reaching the maximum only at full deflection
    edge = DEADZONE + (1 - DEADZONE) * 0.5
    hands.axis(sdl2.SDL_CONTROLLER_AXIS_LEFTX, edge)
    hands.axis(sdl2.SDL_CONTROLLER_AXIS_LEFTY, -1.0)
    cmd = pad.poll()
    assert cmd.linear[0] == pytest.approx(0.125, abs=1e-4)
    assert cmd.linear[1] == pytest.approx(0.25)
    hands.axis(sdl2.SDL_CONTROLLER_AXIS_LEFTY, 1.0)
    hands.axis(sdl2.SDL_CONTROLLER_AXIS_RIGHTX, 1.0)
    cmd = pad.poll()
    assert cmd.linear[1] == pytest.approx(-0.25)
    assert cmd.angular[2] == pytest.approx(-1.5)  # right stick right turns clockwise from above
    pad.close()


def test_a_toggles_the_gripper_on_the_press_edge_and_the_clutch_holds(
    virtual: list[int],
) -> None:
    pad = Gamepad.open(attach_pad(virtual))
    hands = Pad(pad)
    a = sdl2.SDL_CONTROLLER_BUTTON_A
    hands.button(a, True)
    assert pad.poll().grip == 1.0  # closes on the press
    assert pad.poll().grip is None  # held: no new edge
    hands.button(a, False)
    assert pad.poll().grip is None  # the release is not an edge
    # a tap between two polls still counts (SDL queued the button-down event)
    hands.button(a, True)
    sdl2.SDL_JoystickUpdate()
    hands.button(a, False)
    assert pad.poll().grip == 0.0
    # left bumper held: clutch released, the pad commands nothing and a press is dropped
    hands.button(sdl2.SDL_CONTROLLER_BUTTON_LEFTSHOULDER, True)
    hands.axis(sdl2.SDL_CONTROLLER_AXIS_LEFTX, 1.0)
    hands.button(a, True)
    cmd = pad.poll()
    assert not cmd.clutch and cmd.grip is None
    hands.button(a, False)
    hands.button(sdl2.SDL_CONTROLLER_BUTTON_LEFTSHOULDER, False)
    cmd = pad.poll()
    assert cmd.clutch and cmd.linear[0] > 0 and cmd.grip is None
    hands.button(a, True)
    assert pad.poll().grip == 1.0  # the toggle state did not change under the clutch
    pad.close()


def test_a_joystick_without_a_mapping_is_read_from_its_raw_axes(virtual: list[int]) -> None:
    index = attach_raw(virtual)
    (info,) = gamepads()
    assert info.index == index and not info.mapped
    pad = Gamepad.open(index, max_linear=0.25)
    hands = Pad(pad)
    hands.axis(0, 1.0)
    hands.axis(3, -1.0)  # raw right stick y, up
    hands.button(0, True)
    cmd = pad.poll()
    assert cmd.linear == pytest.approx((0.25, 0.0, 0.25)) and cmd.grip == 1.0
    pad.close()
    assert not pad.attached


def test_an_unplugged_pad_commands_nothing(virtual: list[int]) -> None:
    index = attach_pad(virtual)
    pad = Gamepad.open(index)
    Pad(pad).axis(sdl2.SDL_CONTROLLER_AXIS_LEFTX, 1.0)
    assert pad.poll().linear[0] > 0
    assert sdl2.SDL_JoystickDetachVirtual(index) == 0
    virtual.clear()
    assert pad.poll() == NEUTRAL and not pad.attached
    pad.close()


def test_without_sdl_the_module_imports_and_offers_no_gamepad(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = _gamepad.__name__
    monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "sdl2", None)  # `import sdl2` now raises ImportError
    fresh = importlib.import_module(name)
    assert fresh is not _gamepad
    assert not fresh.available()
    assert fresh.gamepads() == []
    with pytest.raises(fresh.GamepadError, match="SDL"):
        fresh.Gamepad.open(0)
