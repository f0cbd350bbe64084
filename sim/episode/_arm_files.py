"""Which files an arm's MJCF is made of: the file, what it includes and every asset it loads.

An arm profile copies these into the project, so they must be exactly the files MuJoCo reads.
Asset files (meshes, textures, height fields, skins) come from MuJoCo's own resolution: the
compiled model's ``paths`` are the files it opened, after ``meshdir``, ``texturedir``,
``assetdir`` and ``strippath``, including the assets of models attached with ``<attach>``. Two
kinds MuJoCo does not list there are found from the parsed spec and the XML: the six files of
a cube texture, and the XML files themselves (``<include file>`` and ``<model file>``, read at
parse time). For those, every place MuJoCo may look (the including file's folder and the main
file's folder, under the texture folder or not) is copied if a file is there; an extra copy is
harmless, a missing one is caught by :func:`check_copy`, which compiles the copy and requires
every file it reads to lie inside the copy.

Files keep their layout relative to the folder that holds them all, so relative references
(``../meshes/link1.stl``) read the same in the copy. A reference by absolute path cannot be
copied that way and is refused, naming the file.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mujoco  # type: ignore[import-untyped]


def ArmSpecError(message: str) -> Exception:  # noqa: N802  (reads as the error it makes)
    """The arm error, imported when needed: MuJoCo picks its OpenGL platform when first
    imported, and sim.mujoco must be the one to import it (see sim.gl)."""
    from sim.mujoco import ArmSpecError as Error

    return Error(message)


def _mujoco() -> Any:
    import mujoco

    import sim.mujoco  # noqa: F401  (chooses the GL platform before mujoco loads)

    return mujoco


_XML_REFS = {"include": "file", "model": "file"}  # elements that name another XML file
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


@dataclass(frozen=True)
class ArmFiles:
    """An MJCF and everything it reads, relative to ``root``."""

    root: Path
    mjcf: str  # the main file, relative to root
    files: tuple[str, ...]  # every file to copy, relative to root (the main one included)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _compile(path: Path) -> mujoco.MjModel:
    mujoco = _mujoco()
    try:
        return mujoco.MjSpec.from_file(str(path)).compile()
    except (ValueError, RuntimeError) as exc:
        raise ArmSpecError(f"{path.name}: {_one_line(exc)}") from exc


def _xml_files(main: Path) -> list[Path]:
    """The XML files MuJoCo parses for ``main``: includes and attached models, recursively."""
    out: list[Path] = []
    todo: list[tuple[Path, Path]] = [(main, main.parent)]  # (file, its model's folder)
    seen: set[Path] = set()
    while todo:
        path, model_dir = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        out.append(path)
        try:
            # comments out: MuJoCo's parser takes "--" inside one (a command line in a
            # comment), the XML standard and ElementTree do not
            root = ET.fromstring(_COMMENT.sub("", path.read_text(encoding="utf-8")))
        except (ET.ParseError, OSError, UnicodeDecodeError) as exc:
            raise ArmSpecError(f"{path.name}: {_one_line(exc)}") from exc
        for el in root.iter():
            attr = _XML_REFS.get(str(el.tag))
            ref = el.get(attr) if attr else None
            if not ref:
                continue
            if Path(ref).is_absolute():
                raise ArmSpecError(
                    f"{path.name}: <{el.tag} file={ref!r}> is an absolute path; give it "
                    "relative to the file, so the arm can be copied with its files"
                )
            found = [p for p in (path.parent / ref, model_dir / ref) if p.is_file()]
            if not found:
                raise ArmSpecError(f"{path.name}: <{el.tag} file={ref!r}>: no such file")
            for p in found:
                # an attached model's own includes and assets are relative to its folder
                todo.append((p.resolve(), p.parent if el.tag == "model" else model_dir))
    return out


def _cube_files(spec: mujoco.MjSpec, main: Path) -> list[Path]:
    """The six files of cube/skybox textures given face by face (absent from model.paths)."""
    base = Path(spec.modelfiledir or main.parent)
    out = []
    for tex in spec.textures:
        for name in tex.cubefiles:
            if not name:
                continue
            for folder in (base / spec.texturedir, base):
                if (folder / name).is_file():
                    out.append((folder / name).resolve())
    return out


def arm_files(mjcf: Path) -> ArmFiles:
    """The files of an arm MJCF (raises ArmSpecError for a file MuJoCo cannot load)."""
    main = Path(mjcf).expanduser()
    if main.is_dir():
        raise ArmSpecError(f"{main}: is a directory, not an MJCF file (give the .xml file)")
    if not main.is_file():
        raise ArmSpecError(f"{main.name}: no such file ({main})")
    main = main.resolve()
    model = _compile(main)
    spec = _mujoco().MjSpec.from_file(str(main))
    files = {main, *_xml_files(main), *_cube_files(spec, main)}
    for raw in bytes(getattr(model, "paths", b"")).split(b"\0"):
        if raw:
            files.add((main.parent / os.fsdecode(raw)).resolve())
    root = Path(os.path.commonpath([str(p.parent) for p in files]))
    rels = tuple(sorted(p.relative_to(root).as_posix() for p in files))
    return ArmFiles(root, main.relative_to(root).as_posix(), rels)


def check_copy(copy: Path, root: Path, source: Path) -> None:
    """Compile the copied MJCF and require every file it reads to be inside the copy."""
    model = _compile(copy)
    for raw in bytes(getattr(model, "paths", b"")).split(b"\0"):
        if not raw:
            continue
        path = (copy.parent / os.fsdecode(raw)).resolve()
        if not path.is_relative_to(root.resolve()):
            raise ArmSpecError(
                f"{source.name}: it loads {os.fsdecode(raw)} by an absolute path (meshdir, "
                "texturedir or the file name); give it relative to the MJCF, so the arm can "
                "be copied with its files"
            )
