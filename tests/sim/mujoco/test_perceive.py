"""Perception: relations and attributes read off MuJoCo state (contacts and geometry only)."""

from __future__ import annotations

import mujoco
import pytest

from sim.mujoco._perceive import perceive
from sim.mujoco._world import PhysicsWorld
from sim.world import GRIPPER, Layout, Placement, ground


def _world(family: str, *placements: Placement, **attrs: dict[str, object]) -> PhysicsWorld:
    w = PhysicsWorld(family, Layout(family, tuple(placements), attrs=attrs))  # type: ignore[arg-type]
    w.reset(0)
    return w


def test_brick_on_brick_and_on_table() -> None:
    w = _world(
        "stack",
        Placement("brick_blue", at=(-0.1, 0.0)),
        Placement("brick_red", on="brick_blue"),
    )
    g = w.graph
    assert g.holds("on", "brick_red", "brick_blue")
    assert g.holds("on", "brick_blue", "table")
    assert not g.holds("on", "brick_red", "table")
    assert g.nodes["brick_red"].pos[2] == pytest.approx(0.75 + 3 * 0.024, abs=2e-3)
    assert g.nodes["brick_red"].size == pytest.approx((0.024, 0.024, 0.024), abs=1e-3)
    assert g.stack_on("brick_blue") == ["brick_red"]


def test_absent_objects_are_parked_off_the_table_and_not_in_the_graph() -> None:
    w = _world("stack", Placement("brick_green", at=(0.0, 0.0)))
    assert set(w.graph.nodes) == {"brick_green", "table"}
    scene = w.scene
    for obj in ("brick_red", "brick_purple"):
        x, _, z = w.data.xpos[scene.body[scene.index(obj)]]
        assert x >= 3.0 and z < 0.1  # resting on the floor far away


def test_mug_in_open_drawer_is_in_and_visible() -> None:
    w = _world("tidy", Placement("mug_red", inside="drawer"), drawer={"open": 1.0})
    g = w.graph
    assert g.holds("open", "drawer")
    assert g.holds("in", "mug_red", "drawer")
    assert g.nodes["mug_red"].visible
    assert g.nodes["drawer"].attrs["open"] == pytest.approx(1.0, abs=0.02)
    assert ground("the red mug", g).id == "mug_red"


def test_mug_in_closed_drawer_is_not_visible() -> None:
    w = _world("tidy", Placement("mug_red", inside="drawer"), drawer={"open": 0.0})
    g = w.graph
    assert not g.holds("open", "drawer")
    assert g.holds("in", "mug_red", "drawer")
    assert not g.nodes["mug_red"].visible
    assert ground("the red mug", g).problem is not None
    assert g.holds("on", "drawer", "table")  # furniture stands on the table (from geometry)


def test_knob_turned_turns_the_burner_on() -> None:
    w = _world("kitchen", Placement("pan", on="burner"), burner={"on": False})
    assert w.graph.nodes["burner"].attrs["on"] is False
    assert w.graph.holds("on", "pan", "burner")
    scene, data = w.scene, w.data
    knob = mujoco.mj_name2id(w.model, mujoco.mjtObj.mjOBJ_JOINT, "burner_knob")
    data.qpos[w.model.jnt_qposadr[knob]] = 1.2
    mujoco.mj_forward(w.model, data)
    assert perceive(w.model, data, scene, 0).nodes["burner"].attrs["on"] is True
    data.qpos[w.model.jnt_qposadr[knob]] = 0.5
    mujoco.mj_forward(w.model, data)
    assert perceive(w.model, data, scene, 0).nodes["burner"].attrs["on"] is False


def test_layout_attrs_set_joints_and_carry_the_rest() -> None:
    w = _world(
        "kitchen",
        Placement("pan", on="burner"),
        Placement("patty", inside="pan"),
        burner={"on": True},
        patty={"cooked": 0.4},
    )
    g = w.graph
    assert g.nodes["burner"].attrs["on"] is True
    assert g.nodes["patty"].attrs["cooked"] == pytest.approx(0.4)
    assert g.holds("in", "patty", "pan") and g.holds("on", "patty", "pan")


def test_held_needs_two_fingers() -> None:
    """Not held on the table; held once the jaws close by hand on the brick between them."""
    w = _world("stack", Placement("brick_red", at=(0.0, 0.0)))
    scene, model, data = w.scene, w.model, w.data
    assert not w.graph.holds("held", "brick_red", GRIPPER)
    # put the brick between the pads (they sit around the tool site) and squeeze
    mujoco.mj_forward(model, data)
    tcp = data.site_xpos[scene.arm.site_id].copy()
    q = int(scene.free_qadr[scene.index("brick_red")])
    data.qpos[q : q + 3] = tcp
    for act, closed in zip(scene.arm.gripper_ids, scene.arm.gripper_closed, strict=True):
        data.ctrl[act] = closed
    for _ in range(150):
        data.qpos[q : q + 3] = tcp  # hold the brick in place while the jaws close
        data.qvel[int(scene.free_dadr[scene.index("brick_red")]) :][:6] = 0.0
        mujoco.mj_step(model, data)
    mujoco.mj_forward(model, data)
    g = perceive(model, data, scene, 0)
    assert g.holds("held", "brick_red", GRIPPER)
    assert g.held() == "brick_red"


def test_extra_attrs_and_absent_filtering() -> None:
    w = _world(
        "stack", Placement("brick_red", at=(0.0, 0.1)), Placement("brick_blue", at=(0, -0.1))
    )
    g = perceive(
        w.model,
        w.data,
        w.scene,
        7,
        {"brick_red": {"wet": True}},
        absent=frozenset({"brick_blue"}),
    )
    assert g.tick == 7
    assert "brick_blue" not in g.nodes
    assert all("brick_blue" not in r for r in g.relations)
    assert g.nodes["brick_red"].attrs == {"wet": True}
    assert g.workspace == w.scene.info.workspace
