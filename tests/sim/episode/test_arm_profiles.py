"""A lab's arm as a profile of the project: the files MuJoCo reads are the files copied, the
check runs on the copy, every path that builds a world resolves the arm the same way, and an
episode whose arm files changed is refused by replay, fork and review with the reason."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from sim.episode import (
    ArmCheckFailedError,
    add_arm,
    arm_files,
    fork_episode,
    make_world,
    open_scenario,
    replay_episode,
    resolve_arm,
    run_episode,
)
from sim.interact import replay_interactive, run_interactive
from sim.mujoco import WB6, ArmSpecError
from sim.review import WorldCursor, fork_build
from sim.scenario import ScenarioError, parse_scenario
from sim.users import PROFILES
from storage import ArmProfileError, EpisodeError, Project, files_digest, tree_digest
from storage.guard import PathError

WB6_TEXT = WB6.mjcf.read_text()
NAMES: dict[str, Any] = {
    "ee_site": WB6.ee_site,
    "arm_joints": WB6.arm_joints,
    "gripper_actuators": ("gripper",),
}
CUBE = """v -0.02 -0.02 0\nv 0.02 -0.02 0\nv 0.02 0.02 0\nv -0.02 0.02 0
v -0.02 -0.02 0.01\nv 0.02 -0.02 0.01\nv 0.02 0.02 0.01\nv -0.02 0.02 0.01
f 1 3 2\nf 1 4 3\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7
f 4 1 5\nf 4 5 8
"""
FACES = ("right", "left", "up", "down", "front", "back")


def png(rgb: tuple[int, int, int]) -> bytes:
    """A 2x2 PNG of one colour (the cube texture's faces)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    rows = b"".join(b"\x00" + bytes(rgb) * 2 for _ in range(2))
    header = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


def lab_arm(root: Path, *, mesh_dir: str = "../meshes") -> Path:
    """wb6 as a lab might lay it out: defaults in an included file, a mesh and a cube texture
    in folders beside the arm's (found through meshdir/texturedir), and a decoy file that is
    referenced by nothing."""
    start = WB6_TEXT.index("  <default>")
    end = WB6_TEXT.index("\n  </default>") + len("\n  </default>")
    (root / "arm" / "parts").mkdir(parents=True)
    (root / "arm" / "parts" / "defaults.xml").write_text(
        f"<mujoco>\n{WB6_TEXT[start:end]}\n</mujoco>\n"
    )
    (root / "meshes").mkdir()
    (root / "meshes" / "marker.obj").write_text(CUBE)
    (root / "textures").mkdir()
    for i, face in enumerate(FACES):
        (root / "textures" / f"{face}.png").write_bytes(png((40 * i, 90, 200)))
    (root / "arm" / "notes.txt").write_text("not part of the arm")
    cube = " ".join(f'file{face}="{face}.png"' for face in FACES)
    text = (
        WB6_TEXT[:start]
        + '  <include file="parts/defaults.xml"/>\n'
        + '  <asset>\n    <mesh name="lab_marker" file="marker.obj"/>\n'
        + f'    <texture name="lab_cube" type="cube" {cube}/>\n'
        + '    <material name="lab_paint" texture="lab_cube"/>\n  </asset>'
        + WB6_TEXT[end:]
    )
    text = text.replace(
        '<compiler angle="radian" autolimits="true"/>',
        f'<compiler angle="radian" autolimits="true" meshdir="{mesh_dir}" '
        'texturedir="../textures"/>',
    )
    text = text.replace(
        '<body name="wb6_base" childclass="wb6">',
        '<body name="wb6_base" childclass="wb6">\n      <geom type="mesh" mesh="lab_marker" '
        'material="lab_paint" contype="0" conaffinity="0" group="1" pos="0 0 0.065" mass="0"/>',
    )
    path = root / "arm" / "lab-arm.xml"
    path.write_text(text)
    return path


EXPECTED = {
    "arm/lab-arm.xml",
    "arm/parts/defaults.xml",
    "meshes/marker.obj",
    *(f"textures/{face}.png" for face in FACES),
}


def test_the_files_are_the_ones_mujoco_reads(tmp_path: Path) -> None:
    found = arm_files(lab_arm(tmp_path), tmp_path)  # the arm's folder is the one above arm/
    assert found.root == tmp_path.resolve() and found.mjcf == "arm/lab-arm.xml"
    assert set(found.files) == EXPECTED  # not the decoy
    # without it, the arm's folder is the MJCF's own, and ../meshes lies outside it
    with pytest.raises(PathError, match=r"lab-arm.xml: <mesh file='marker.obj'> \(with "
                       r"meshdir='../meshes'\) .* leads outside arm/"):  # fmt: skip
        arm_files(tmp_path / "arm" / "lab-arm.xml")


def test_an_attached_model_brings_its_own_files(tmp_path: Path) -> None:
    """A gripper attached with <model file> + <attach>, whose meshes are found through its own
    meshdir; a comment with "--" in it (MuJoCo reads it, strict XML does not)."""
    (tmp_path / "grip" / "assets").mkdir(parents=True)
    (tmp_path / "grip" / "assets" / "finger.obj").write_text(CUBE)
    (tmp_path / "grip" / "grip.xml").write_text(
        '<mujoco model="grip"><compiler meshdir="assets"/>'
        '<asset><mesh name="finger" file="finger.obj"/></asset><worldbody><body name="f">'
        '<joint name="fj" type="slide"/><geom type="mesh" mesh="finger"/></body></worldbody>'
        "</mujoco>"
    )
    (tmp_path / "arm.xml").write_text(
        "<!-- check it: workbench sim check arm.xml --ee-site s -->\n"
        '<mujoco><asset><model name="grip" file="grip/grip.xml"/></asset><worldbody>'
        '<body name="b"><joint name="j"/><geom size="0.1"/><site name="s"/>'
        '<attach model="grip" body="f" prefix="g/"/></body></worldbody></mujoco>'
    )
    found = arm_files(tmp_path / "arm.xml")
    assert set(found.files) == {"arm.xml", "grip/grip.xml", "grip/assets/finger.obj"}


def test_an_arm_with_includes_and_meshes_is_added_and_runs_from_its_copy(tmp_path: Path) -> None:
    source = lab_arm(tmp_path / "lab")
    with Project.create(tmp_path / "p") as project:
        added = add_arm(project, "ur-lab", source, trials=1, root=tmp_path / "lab", **NAMES)
        p = added.profile
        assert added.new and added.report.ok and p.label == "ur-lab@1"
        assert set(p.files) == EXPECTED and p.report["ok"] is True
        assert p.limits["shoulder_pan"] == [-2.9, 2.9] and len(p.home) == 6
        assert p.gripper_range["jaw_gap_cm"] == added.report.names["jaw_gap_cm"]
        arm = resolve_arm("ur-lab", project)
        assert arm.label == "ur-lab@1" and arm.digest == p.digest
        assert arm.spec.mjcf == project.root / p.folder / "arm" / "lab-arm.xml"
        # the lab's files may change or go: the project has its own copy
        for f in (tmp_path / "lab").rglob("*"):
            if f.is_file():
                f.unlink()
        ep = run_episode(open_scenario("stack-two"), mode="physics", arm="ur-lab",
                         project=project)  # fmt: skip
        assert ep.runner.result is not None and ep.runner.result.success
        assert ep.episode_id is not None
        stored = project.episodes.get(ep.episode_id)
        assert (stored.config["arm"], stored.config["arm_digest"]) == ("ur-lab@1", p.digest)
        assert replay_episode(project, ep.episode_id).identical


def test_a_file_by_absolute_path_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    source = lab_arm(tmp_path / "lab", mesh_dir=str(tmp_path / "lab" / "meshes"))
    with Project.create(tmp_path / "p") as project:
        with pytest.raises(PathError, match=r"lab-arm.xml: <mesh file='marker.obj'> \(with "
                           r"meshdir='/.*/meshes'\) is an absolute path"):  # fmt: skip
            add_arm(project, "ur-lab", source, trials=0, root=tmp_path / "lab", **NAMES)
        assert project.arms.list() == [] and not any((project.root / "arms").glob("*"))


def test_a_failing_check_stores_nothing_unless_forced(tmp_path: Path) -> None:
    narrow = tmp_path / "narrow.xml"  # jaws that open 2 cm: an error in the check
    narrow.write_text(WB6_TEXT.replace('range="0 0.045"', 'range="0 0.01"'))
    with Project.create(tmp_path / "p") as project:
        with pytest.raises(
            ArmCheckFailedError,
            match=r"narrow.xml: the arm check failed "
            r"\(the gripper opens only 2.0 cm\), so 'slim' was not added",
        ) as err:
            add_arm(project, "slim", narrow, trials=0, **NAMES)
        assert not err.value.report.ok
        with pytest.raises(ArmSpecError, match="no site named 'tcp'"):
            add_arm(project, "slim", narrow, trials=0, **(NAMES | {"ee_site": "tcp"}))
        with pytest.raises(ArmProfileError, match="'wb6' is a shipped arm"):
            add_arm(project, "wb6", narrow, trials=0, **NAMES)
        assert project.arms.list() == [] and list((project.root / "arms").iterdir()) == []
        forced = add_arm(project, "slim", narrow, trials=0, force=True, **NAMES)
        assert forced.profile.report["ok"] is False


def test_names_that_are_no_arm_say_what_there_is(tmp_path: Path) -> None:
    assert resolve_arm("lab7").label == "lab7"
    digest, _ = tree_digest(WB6.mjcf.parent, ["wb6.xml"])
    assert (
        resolve_arm("wb6").digest
        == digest
        == files_digest({"wb6.xml": tree_digest(WB6.mjcf.parent, ["wb6.xml"])[1]["wb6.xml"]})
    )
    with pytest.raises(ArmProfileError, match=r"--arm: 'ur-lab' is not a shipped arm \(wb6, "
                       r"lab7\); arm profiles belong to a project"):  # fmt: skip
        resolve_arm("ur-lab", where="--arm")
    with pytest.raises(ArmProfileError, match="'no good' is neither a shipped arm"):
        resolve_arm("no good")
    none = r"no arm 'ur-lab': not a shipped arm \(wb6, lab7\) nor an arm profile of this project"
    with Project.create(tmp_path / "p") as project, pytest.raises(ArmProfileError, match=none):
        resolve_arm("ur-lab", project)


def _scenario(tmp_path: Path, arm: object) -> Path:
    data = json.loads(Path("resources/sim/scenarios/stack-two.json").read_text())
    data["name"], data["arm"] = "stack-lab", arm
    path = tmp_path / "stack-lab.json"
    path.write_text(json.dumps(data))
    return path


def test_a_scenario_names_its_arm_and_the_command_can_override_it(tmp_path: Path) -> None:
    text = Path("resources/sim/scenarios/stack-two.json").read_text()
    plain = parse_scenario(text)
    assert plain.arm is None
    # a scenario without an arm keeps the digest it had before the field existed
    import hashlib

    old = json.dumps(plain.model_dump(mode="json", by_alias=True, exclude={"arm"}), sort_keys=True)
    assert plain.digest == hashlib.sha256(old.encode()).hexdigest()
    with pytest.raises(ScenarioError, match=r"stack-lab.json: arm: .*must name a shipped arm"):
        open_scenario(str(_scenario(tmp_path, "two words")))
    bound = open_scenario(str(_scenario(tmp_path, "lab7")))
    assert bound.scenario.arm == "lab7" and bound.scenario.digest != plain.digest
    with Project.create(tmp_path / "p") as project:
        ep = run_episode(bound, mode="symbolic", project=project)
        assert ep.episode_id is not None
        assert project.episodes.get(ep.episode_id).config["arm"] == "lab7"
        ep = run_episode(bound, mode="symbolic", project=project, arm="wb6")
        assert ep.episode_id is not None
        assert project.episodes.get(ep.episode_id).config["arm"] == "wb6"
        unknown = open_scenario(str(_scenario(tmp_path, "ur-lab")))
        with pytest.raises(ArmProfileError, match=r"stack-lab.json: arm: no arm 'ur-lab'"):
            run_episode(unknown, mode="symbolic", project=project)
    with pytest.raises(ArmProfileError, match=r"stack-lab.json: arm: 'ur-lab' is not a shipped "
                       r"arm \(wb6, lab7\); arm profiles belong to a project"):  # fmt: skip
        run_episode(unknown, mode="physics")
    with pytest.raises(ScenarioError, match=r"stack-lab.json: arm: 'ur-lab' is an arm profile"):
        make_world(unknown, "physics")


def _tamper(project: Project, episode_id: str) -> None:
    project.db.execute(
        "UPDATE sim_episodes SET config_json = json_set(config_json, '$.arm_digest', ?) "
        "WHERE id = ?",
        ["0" * 64, episode_id],
    )
    project.db.conn.commit()


def test_a_changed_shipped_arm_is_refused_on_every_replay_path(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as project:
        ep = run_episode(open_scenario("stack-two"), mode="physics", project=project)
        inter = run_interactive(bound=open_scenario("stack-two"), mode="physics",
                                persona=PROFILES["balanced"], project=project)  # fmt: skip
        assert ep.episode_id is not None and inter.episode_id is not None
        for eid in (ep.episode_id, inter.episode_id):
            config = project.episodes.get(eid).config
            assert (config["arm"], config["arm_digest"]) == ("wb6", resolve_arm("wb6").digest)
        assert replay_episode(project, ep.episode_id).identical
        assert replay_interactive(project, inter.episode_id).identical
        _tamper(project, ep.episode_id)
        _tamper(project, inter.episode_id)
        why = r"ran with arm wb6 \(digest 000000000000…\); this workbench's wb6.xml is not"
        with pytest.raises(EpisodeError, match=why):
            replay_episode(project, ep.episode_id)
        with pytest.raises(EpisodeError, match=why):
            fork_episode(project, ep.episode_id, 10)
        with pytest.raises(EpisodeError, match=why):
            WorldCursor(project, ep.episode_id)
        with pytest.raises(EpisodeError, match=why):
            replay_interactive(project, inter.episode_id)
        with pytest.raises(EpisodeError, match=why):  # a live fork, before anything runs
            fork_build(project, inter.episode_id, 5)


def test_an_episode_from_before_arm_digests_replays_as_before(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p") as project:
        ep = run_episode(open_scenario("stack-two"), mode="physics", project=project)
        assert ep.episode_id is not None
        project.db.execute(
            "UPDATE sim_episodes SET config_json = json_remove(config_json, '$.arm_digest', "
            "'$.arm') WHERE id = ?",
            [ep.episode_id],
        )
        project.db.conn.commit()
        assert replay_episode(project, ep.episode_id).identical
