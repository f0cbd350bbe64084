"""Scene files: every family loads, annotations parse, objects are sensible, bad files say why."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from sim.mujoco._annotations import SceneError, parse_annotation
from sim.mujoco._arm import WB6
from sim.mujoco._gripper import measure_gripper
from sim.mujoco._ik import Kinematics, down_rotation
from sim.mujoco._scene import FAMILIES, compiled, load_scene_info, read_scene, scene_path
from sim.world._graph import TAGS

KITCHEN = {"table", "burner", "pan", "patty", "bun", "cheese", "plate", "cutting_board"}
TIDY = {"table", "drawer", "cabinet", "bin", "mug_red", "mug_blue", "book", "box"}
BRICKS = {f"brick_{c}" for c in ("red", "green", "blue", "yellow", "orange", "purple")}


@pytest.mark.parametrize("family", FAMILIES)
def test_family_loads_with_table_workspace_and_cameras(family: str) -> None:
    info = load_scene_info(family)
    assert info.table == "table"
    assert info.table_top == pytest.approx(0.75)
    assert info.cameras == ("head", "wrist", "top", "front")
    xmin, xmax, ymin, ymax = info.workspace
    assert xmin < xmax and ymin < ymax
    for o in info.objects.values():
        assert o.tags <= TAGS
        if "container" in o.tags:
            assert o.interior is not None, o.id
        if "fixed" not in o.tags:  # loose objects start on the table in the MJCF
            assert o.pos[2] - o.half[2] >= info.table_top - 1e-3, o.id


def test_families_have_their_objects() -> None:
    assert set(load_scene_info("kitchen").objects) == KITCHEN
    assert set(load_scene_info("tidy").objects) == TIDY
    assert set(load_scene_info("stack").objects) == BRICKS | {"table"}
    kitchen = load_scene_info("kitchen").objects
    assert kitchen["burner"].tags == {"surface", "heater", "switchable", "fixed"}
    assert kitchen["burner"].attrs == {"on": False}
    assert kitchen["patty"].attrs == {"cooked": 0.0}
    assert "graspable" not in kitchen["pan"].tags
    assert kitchen["cutting_board"].type == "cutting_board"
    tidy = load_scene_info("tidy").objects
    assert tidy["drawer"].tags == {"container", "openable", "fixed"}
    assert (tidy["mug_red"].color, tidy["mug_blue"].color) == ("red", "blue")
    for brick in BRICKS:
        assert 0.045 <= 2 * load_scene_info("stack").objects[brick].half[0] <= 0.05


@pytest.mark.parametrize("family", FAMILIES)
def test_graspable_objects_fit_the_gripper(family: str) -> None:
    model, arm = compiled(family)
    gap = measure_gripper(model, arm).gap_open
    for o in load_scene_info(family).objects.values():
        if "graspable" in o.tags:
            assert 2 * min(o.half[0], o.half[1]) < gap - 0.015, o.id
            assert 2 * o.half[2] >= 0.03 - 1e-9, o.id
            assert 50 <= _mass_g(family, o.id) <= 300, o.id


@pytest.mark.parametrize("family", FAMILIES)
def test_arm_reaches_the_workspace_corners(family: str) -> None:
    """Top-down grasp poses at the workspace corners and centre solve within tolerance."""
    import mujoco

    model, arm = compiled(family)
    kin = Kinematics(model, arm)
    kin.load(mujoco.MjData(model))
    jaw = measure_gripper(model, arm).jaw
    xmin, xmax, ymin, ymax = load_scene_info(family).workspace
    for x, y in [(xmin, ymin), (xmin, ymax), (xmax, ymin), (xmax, ymax), (0.0, 0.0)]:
        for z in (0.78, 0.95):
            res = kin.solve(np.array(arm.home), np.array([x, y, z]), down_rotation(0.0, jaw))
            assert res.ok, (family, x, y, z, res.pos_err, res.rot_err)


def test_scene_path_rejects_unknown_family() -> None:
    with pytest.raises(SceneError, match="unknown scene family 'garage'"):
        scene_path("garage")


def test_annotation_format() -> None:
    note = parse_annotation(
        "drawer",
        "type=drawer;tags=container,openable,fixed;joint=slide;closed=0;open=0.2;"
        "interior=inside;handle=knob;attrs=dusty:true,label:top, weight:2",
        file="x.xml",
    )
    assert note.span == (0.0, 0.2)
    assert note.attrs == {"dusty": True, "label": "top", "weight": 2.0, "open": 0.0}
    assert (note.interior, note.handle, note.color) == ("inside", "knob", None)


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ("type=mug;tags=graspable,edible", "unknown tag"),
        ("type=mug;colour=red", "unknown key 'colour'"),
        ("tags=graspable", "missing type"),
        ("type=mug;graspable", "expected key=value"),
        ("type=drawer;tags=openable;joint=slide", "needs joint=, closed= and open="),
        ("type=bin;tags=container", "needs interior="),
        ("type=mug;attrs=cooked", "name:value"),
    ],
)
def test_bad_annotation_names_file_and_object(data: str, why: str) -> None:
    with pytest.raises(SceneError, match=why) as err:
        parse_annotation("mug_red", data, file="tidy.xml")
    assert "tidy.xml" in str(err.value) and "'mug_red'" in str(err.value)


def _scene_with(tmp_path: Path, body: str, custom: str) -> Path:
    shutil.copy(scene_path("stack").parent / "common.xml", tmp_path / "common.xml")
    path = tmp_path / "broken.xml"
    path.write_text(
        f"""<mujoco model="broken"><include file="common.xml"/>
        <worldbody>{body}</worldbody>
        <custom><numeric name="workspace" data="-0.3 0.3 -0.3 0.3"/>{custom}</custom>
        </mujoco>"""
    )
    return path


BRICK = '<body name="cube" pos="0 0 0.8"><freejoint/><geom type="box" size=".02 .02 .02"/></body>'


def test_scene_file_with_unknown_tag_names_file_and_object(tmp_path: Path) -> None:
    path = _scene_with(tmp_path, BRICK, '<text name="object:cube" data="type=brick;tags=shiny"/>')
    with pytest.raises(SceneError, match=r"broken\.xml: object 'cube': unknown tag\(s\) shiny"):
        read_scene(path)


def test_scene_file_checks_annotations_against_the_model(tmp_path: Path) -> None:
    path = _scene_with(tmp_path, BRICK, '<text name="object:cuber" data="type=brick"/>')
    with pytest.raises(SceneError, match="object 'cuber': there is no body of that name"):
        read_scene(path)
    path = _scene_with(tmp_path, BRICK, "")
    with pytest.raises(SceneError, match="body 'cube' moves freely but has no object:cube"):
        read_scene(path)
    fixed = '<text name="object:cube" data="type=brick;tags=fixed"/>'
    with pytest.raises(SceneError, match="tagged fixed but has a free joint"):
        read_scene(_scene_with(tmp_path, BRICK, fixed))


def test_good_standalone_scene_reads(tmp_path: Path) -> None:
    path = _scene_with(tmp_path, BRICK, '<text name="object:cube" data="type=brick;color=red"/>')
    _, notes, info = read_scene(path)
    assert set(notes) == {"cube", "table"}
    assert info.objects["cube"].half == pytest.approx((0.02, 0.02, 0.02))
    assert info.workspace == (-0.3, 0.3, -0.3, 0.3)


def _mass_g(family: str, obj: str) -> float:
    import mujoco

    model, _ = compiled(family, WB6)
    b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, obj)
    return float(model.body_subtreemass[b]) * 1000
