"""An arm model from elsewhere cannot bring a file from outside its folder into the project, nor
take the machine down: every file an MJCF names (includes, meshes, textures, height fields,
attached models, through meshdir/texturedir/assetdir, absolute paths and symlinks) must resolve
inside the arm's folder, files are sized and bodies counted before MuJoCo reads anything, and
MuJoCo's own errors are one line. Each refusal names the file and the attribute, and leaves the
project as it was."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from annotation import UserError
from sim.episode import add_arm, arm_files
from sim.mujoco import WB6, ArmSpecError, check_arm
from storage import Project
from tests.sim.episode.test_arm_profiles import CUBE, FACES, NAMES, png
from tests.storage.hostile import (
    GB,
    SECRET,
    assert_no_secret,
    files_under,
    one_line_error,
    row_counts,
    workbench,
)

WB6_TEXT = WB6.mjcf.read_text()
BASE = '<body name="wb6_base" childclass="wb6">'
COMPILER = '<compiler angle="radian" autolimits="true"/>'
JOINTS = ",".join(WB6.arm_joints)


def _arm(folder: Path, *, compiler: str = "", top: str = "", asset: str = "", geom: str = "",
         name: str = "arm.xml") -> Path:  # fmt: skip
    """wb6 with extra compiler attributes, top-level elements, assets and a geom on its base."""
    text = WB6_TEXT.replace(COMPILER, f'<compiler angle="radian" autolimits="true" {compiler}/>'
                            + top)  # fmt: skip
    if asset:
        text = text.replace("<worldbody>", f"<asset>{asset}</asset>\n  <worldbody>", 1)
    if geom:
        text = text.replace(BASE, BASE + geom, 1)
    path = folder / name
    path.write_text(text)
    return path


def _mesh_geom(mesh: str = "m") -> str:
    return (f'<geom type="mesh" mesh="{mesh}" contype="0" conaffinity="0" group="1" mass="0" '
            'pos="0 0 0.065"/>')  # fmt: skip


def _tex_geom() -> str:
    return ('<geom type="box" size="0.01 0.01 0.01" material="paint" contype="0" '
            'conaffinity="0" group="1" mass="0" pos="0 0 0.065"/>')  # fmt: skip


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    """``lab/arm/`` (the arm's folder) and ``outside/``: files that would compile, each holding
    the secret, so a copy of any of them in the project is caught."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "extra.xml").write_text(f"<mujoco><!-- {SECRET.decode()} --><default/></mujoco>")
    (outside / "grip.xml").write_text(
        f'<mujoco model="g"><!-- {SECRET.decode()} --><worldbody><body name="f">'
        '<geom size="0.01"/></body></worldbody></mujoco>'
    )
    (outside / "x.obj").write_text(f"# {SECRET.decode()}\n{CUBE}")
    (outside / "tex.png").write_bytes(png((200, 10, 10)) + SECRET)
    for face in FACES:
        (outside / f"{face}.png").write_bytes(png((10, 200, 10)) + SECRET)
    folder = tmp_path / "lab" / "arm"
    folder.mkdir(parents=True)
    return folder


Case = Callable[[Path], Path]
OUT = "../../outside"
CUBE_FACES = " ".join(f'file{face}="{OUT}/{face}.png"' for face in FACES)
TEXTURE = '<material name="paint" texture="t"/>'


def _symlinked_mesh(folder: Path) -> Path:
    (folder / "link.obj").symlink_to(folder.parents[1] / "outside" / "x.obj")
    return _arm(folder, asset='<mesh name="m" file="link.obj"/>', geom=_mesh_geom())


def _symlinked_folder(folder: Path) -> Path:
    (folder / "meshes").symlink_to(folder.parents[1] / "outside", target_is_directory=True)
    return _arm(folder, asset='<mesh name="m" file="meshes/x.obj"/>', geom=_mesh_geom())


def _nested_include(folder: Path) -> Path:
    (folder / "parts").mkdir()
    (folder / "parts" / "a.xml").write_text(f'<mujoco><include file="{OUT}/extra.xml"/></mujoco>')
    return _arm(folder, top='<include file="parts/a.xml"/>')


def _absolute(folder: Path) -> Path:
    return _arm(folder, asset=f'<mesh name="m" file="{folder.parents[1]}/outside/x.obj"/>',
                geom=_mesh_geom())  # fmt: skip


def _absolute_include(folder: Path) -> Path:
    return _arm(folder, top=f'<include file="{folder.parents[1]}/outside/extra.xml"/>')


HOSTILE: dict[str, tuple[Case, str]] = {
    "include": (lambda f: _arm(f, top=f'<include file="{OUT}/extra.xml"/>'),
                r"arm.xml: <include file='../../outside/extra.xml'> .*leads outside arm/"),
    "include in an include": (_nested_include,
                              r"a.xml: <include file='../../outside/extra.xml'> .*leads outside"),
    "absolute include": (_absolute_include, r"arm.xml: <include file='/.*'> is an absolute path"),
    "attached model": (lambda f: _arm(f, asset=f'<model name="g" file="{OUT}/grip.xml"/>'),
                       r"arm.xml: <model file='../../outside/grip.xml'> .*leads outside"),
    "mesh": (lambda f: _arm(f, asset=f'<mesh name="m" file="{OUT}/x.obj"/>', geom=_mesh_geom()),
             r"arm.xml: <mesh file='../../outside/x.obj'> .*leads outside arm/"),
    "meshdir": (lambda f: _arm(f, compiler=f'meshdir="{OUT}"', asset='<mesh name="m" '
                               'file="x.obj"/>', geom=_mesh_geom()),
                r"arm.xml: <mesh file='x.obj'> \(with meshdir='../../outside'\) .*leads outside"),
    "assetdir": (lambda f: _arm(f, compiler=f'assetdir="{OUT}"', asset='<mesh name="m" '
                                'file="x.obj"/>', geom=_mesh_geom()),
                 r"arm.xml: <mesh file='x.obj'> \(with assetdir='../../outside'\) .*outside"),
    "absolute mesh": (_absolute, r"arm.xml: <mesh file='/.*x.obj'> is an absolute path"),
    "symlinked mesh": (_symlinked_mesh, r"arm.xml: <mesh file='link.obj'> .*leads outside arm/"),
    "symlinked folder": (_symlinked_folder,
                         r"arm.xml: <mesh file='meshes/x.obj'> .*leads outside arm/"),
    "texture": (lambda f: _arm(f, asset=f'<texture name="t" type="2d" file="{OUT}/tex.png"/>'
                               + TEXTURE, geom=_tex_geom()),
                r"arm.xml: <texture file='../../outside/tex.png'> .*leads outside arm/"),
    "texturedir": (lambda f: _arm(f, compiler=f'texturedir="{OUT}"', asset='<texture name="t" '
                                  f'type="2d" file="tex.png"/>{TEXTURE}', geom=_tex_geom()),
                   r"<texture file='tex.png'> \(with texturedir='../../outside'\) .*outside"),
    "cube texture faces": (lambda f: _arm(f, asset=f'<texture name="t" type="cube" {CUBE_FACES}'
                                          f"/>{TEXTURE}", geom=_tex_geom()),
                           r"arm.xml: <texture fileright='../../outside/right.png'> .*outside"),
    "height field": (lambda f: _arm(f, asset=f'<hfield name="h" file="{OUT}/tex.png" '
                                    'size="1 1 1 1"/>'),
                     r"arm.xml: <hfield file='../../outside/tex.png'> .*leads outside arm/"),
}  # fmt: skip


@pytest.mark.parametrize("case", HOSTILE, ids=list(HOSTILE))
def test_a_file_from_outside_the_arm_folder_is_refused_and_nothing_is_stored(
    case: str, lab: Path, tmp_path: Path
) -> None:
    make, message = HOSTILE[case]
    mjcf = make(lab)
    with Project.create(tmp_path / "p") as project:
        before = row_counts(project.root)
        with pytest.raises(UserError, match=message):
            add_arm(project, "evil", mjcf, trials=0, **NAMES)
        assert row_counts(project.root) == before
        assert files_under(project.root / "arms") == []
    assert_no_secret(tmp_path / "p")
    with pytest.raises(UserError, match=message):  # what `arm add` checks before a project
        arm_files(mjcf)


def test_a_wider_root_is_the_lab_s_choice_and_still_a_boundary(lab: Path, tmp_path: Path) -> None:
    """``--root`` lets a ../meshes layout in; the folder above it is still outside."""
    (lab.parent / "meshes").mkdir()
    (lab.parent / "meshes" / "x.obj").write_text(CUBE)
    mjcf = _arm(lab, compiler='meshdir="../meshes"', asset='<mesh name="m" file="x.obj"/>',
                geom=_mesh_geom())  # fmt: skip
    assert set(arm_files(mjcf, lab.parent).files) == {"arm/arm.xml", "meshes/x.obj"}
    with pytest.raises(UserError, match=r"<mesh file='x.obj'> \(with meshdir='../meshes'\)"):
        arm_files(mjcf)
    evil = _arm(lab, compiler=f'meshdir="{OUT}"', asset='<mesh name="m" file="x.obj"/>',
                geom=_mesh_geom(), name="evil.xml")  # fmt: skip
    with pytest.raises(UserError, match="leads outside lab/"):
        arm_files(evil, lab.parent)


def _png_header(width: int, height: int) -> bytes:
    """A PNG that declares ``width`` × ``height`` pixels (its data need not follow)."""
    body = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    crc = zlib.crc32(b"IHDR" + body) & 0xFFFFFFFF
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + body + struct.pack(">I", crc)


def _huge_mesh(folder: Path) -> Path:
    with (folder / "huge.obj").open("wb") as f:  # sparse: 1 GB on paper, nothing on disk
        f.write(b"v 0 0 0\n")
        f.truncate(GB)
    return _arm(folder, asset='<mesh name="m" file="huge.obj"/>', geom=_mesh_geom())


def _bodies(folder: Path) -> Path:
    bodies = "".join(f'<body name="x{i}" pos="0 0 {i * 1e-3:.3f}"><geom size="0.001" '
                     'contype="0" conaffinity="0"/></body>' for i in range(10_000))  # fmt: skip
    return _arm(folder, geom=bodies)


def _replicated(folder: Path) -> Path:
    many = (
        '<replicate count="1000000000000000000000000000000" offset="0 0 0.001"><body '
        'name="r"><geom size="0.001" contype="0" conaffinity="0"/></body></replicate>'
    )
    return _arm(folder, geom=many)


def _png_bomb(folder: Path) -> Path:
    (folder / "bomb.png").write_bytes(_png_header(60_000, 60_000))
    return _arm(folder, asset=f'<texture name="t" type="2d" file="bomb.png"/>{TEXTURE}',
                geom=_tex_geom())  # fmt: skip


BIG: dict[str, tuple[Case, str]] = {
    "1 GB mesh": (_huge_mesh, "arm.xml: <mesh file='huge.obj'> (huge.obj) is 1,073,741,824 "
                              "bytes; the limit is"),
    "10,000 bodies": (_bodies, "arm.xml: the model has 10,009 bodies; the limit is 2,000"),
    "10^30 replicas": (_replicated, "arm.xml: the model has 1,000,000,000,000,000,000,000,000,"
                                    "000,009 bodies; the limit is 2,000"),
    "PNG of 60,000² pixels": (_png_bomb, "arm.xml: <texture file='bomb.png'> (bomb.png, "
                                         "60000×60000 pixels decoded) is 14,400,000,000 bytes"),
}  # fmt: skip


@pytest.mark.parametrize("case", BIG, ids=list(BIG))
def test_a_model_too_big_is_refused_by_sim_check_and_arm_add_in_little_memory(
    case: str, lab: Path, tmp_path: Path
) -> None:
    make, message = BIG[case]
    mjcf = str(make(lab))
    names = ["--ee-site", WB6.ee_site, "--arm-joints", JOINTS, "--gripper", "gripper",
             "--trials", "1"]  # fmt: skip
    add = ["arm", "add", "big", mjcf, *names, "--project", str(tmp_path / "p")]
    for args in (["sim", "check", mjcf, *names], add):
        ran = workbench(*args)
        line = one_line_error(ran)
        assert message in line, line
        assert ran.peak_bytes < GB, f"{args[:2]}: peak {ran.peak_bytes / 2**20:.0f} MB"
    assert not (tmp_path / "p").exists()  # a refused add made no project


def test_a_fatal_mujoco_error_is_one_line_naming_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    import mujoco  # type: ignore[import-untyped]

    import sim.mujoco._check as check

    def stack_overflow(*args: object, **kwargs: object) -> None:
        raise mujoco.FatalError("mj_stackAlloc: out of memory, stack overflow\n  max = 17825792")

    monkeypatch.setattr(check, "pick_place_trial", stack_overflow)
    with pytest.raises(ArmSpecError) as err:
        check_arm(WB6, trials=1)
    assert str(err.value) == "wb6.xml: MuJoCo stopped: mj_stackAlloc: out of memory, stack " \
        "overflow max = 17825792"  # fmt: skip
