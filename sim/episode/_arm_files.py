"""Which files an arm's MJCF is made of: the file, what it includes and every asset it loads.

An arm profile copies these into the project, so they must be exactly the files MuJoCo reads,
and all of them must come from the arm's folder: an MJCF from elsewhere could otherwise name
``../../outside/key.pem`` as a mesh and have it copied into the project. So before MuJoCo reads
anything, :func:`sim.mujoco.scan_mjcf` walks the XML (includes and attached models, followed
recursively) and refuses a file outside the folder (absolute, ``..`` out, a symlink out), a mesh
or texture too big, a model with too many bodies. The folder is the MJCF's own unless the caller
gives a wider one (``arm add --root``: a layout with ``../meshes`` beside the MJCF's folder).

Then MuJoCo compiles the file, and its own list of what it opened (the compiled model's
``paths``: meshes, textures, height fields, skins, after ``meshdir``, ``texturedir``,
``assetdir``, ``strippath`` and ``<attach>``) must lie inside the folder too; the walk already
found the XML files and the cube textures' six faces, which MuJoCo does not list there.
:func:`check_copy` compiles the copy and requires every file it reads to lie inside the copy.

Files keep their layout relative to the folder that holds them all, so relative references
(``../meshes/link1.stl``) read the same in the copy.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from storage.guard import inside

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


@dataclass(frozen=True)
class ArmFiles:
    """An MJCF and everything it reads, relative to ``root``."""

    root: Path
    mjcf: str  # the main file, relative to root
    files: tuple[str, ...]  # every file to copy, relative to root (the main one included)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _compile(path: Path) -> mujoco.MjModel:
    """The compiled model; MuJoCo's errors (a fatal one too) as one line naming the file."""
    mujoco = _mujoco()
    try:
        model = mujoco.MjSpec.from_file(str(path)).compile()
    except (ValueError, RuntimeError, mujoco.FatalError) as exc:
        raise ArmSpecError(f"{path.name}: {_one_line(exc)}") from None
    from sim.mujoco import check_bodies

    check_bodies(int(model.nbody) - 1, path.name)  # the walk's count missed generated ones
    return model


def arm_files(mjcf: Path, root: Path | None = None) -> ArmFiles:
    """The files of an arm MJCF, every one inside ``root`` (default: the MJCF's folder).

    Raises ArmSpecError for a file MuJoCo cannot load, PathError for a file outside ``root``,
    LimitError for a file too big or a model with too many bodies; nothing has been copied.
    """
    from sim.mujoco import scan_mjcf

    main = Path(mjcf).expanduser()
    # the folder the MJCF really is in (a symlinked MJCF's own folder is its target's)
    folder = Path(root).expanduser() if root is not None else main.resolve().parent
    scanned = scan_mjcf(main, folder)  # before MuJoCo reads any file
    main = scanned.xml[0]
    model = _compile(main)
    files = {*scanned.xml, *scanned.assets}
    for raw in bytes(getattr(model, "paths", b"")).split(b"\0"):
        if raw:
            name = os.fsdecode(raw)
            files.add(_inside(folder, main.parent / name, f"the file {name!r}", main.name))
    top = Path(os.path.commonpath([str(p.parent) for p in files]))
    rels = tuple(sorted(p.relative_to(top).as_posix() for p in files))
    return ArmFiles(top, main.relative_to(top).as_posix(), rels)


def _inside(folder: Path, path: Path, what: str, source: str) -> Path:
    base = folder.resolve()
    rel = os.path.relpath(path.parent.resolve() / path.name, base)
    return inside(base, rel, what=f"{what} (MuJoCo loads it)", source=source)


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
