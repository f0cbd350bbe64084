"""Every file an MJCF makes MuJoCo read, checked before MuJoCo reads any of it.

An arm model comes from a lab we do not control, and MuJoCo reads whatever its XML names: an
``<include>`` or ``<model file>`` is read while parsing, a mesh, texture, height field or skin
while compiling. So the XML is walked here first, with ElementTree (no MuJoCo), and every file it
can name is checked:

- where it is: with ``root`` given, every file that exists where MuJoCo may look for it must
  resolve inside ``root`` (``storage.guard.inside``: no absolute path, no ``..`` out, no symlink
  out), so a model cannot bring a private file into a project;
- how big it is: an XML file at most ``LIMITS.mjcf_bytes``, a mesh or texture at most
  ``LIMITS.mesh_bytes``, a PNG at most that many bytes once decoded (its header says how big),
  so a 1 GB mesh is refused by its size instead of taking the machine's memory;
- how many bodies it declares (a ``<replicate count>`` multiplies what it holds): at most
  ``LIMITS.model_bodies``, as MuJoCo stops with a fatal error (its stack) long before the
  memory of a model that big is a question.

MuJoCo's own resolution of asset paths (``meshdir``, ``texturedir``, ``assetdir``, attached
models' own folders) is followed conservatively: each asset is looked for under every folder
its model names for its kind. Whatever this walk misses, the caller's check of the compiled
model's ``paths`` catches before anything is stored.
"""

from __future__ import annotations

import os
import re
import struct
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath

from sim.mujoco._arm import ArmSpecError
from storage.guard import LIMITS, LimitError, Limits, PathError, check_size, inside

_XML_REFS = {"include", "model"}  # elements whose ``file`` is another XML file (parse time)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_DIR_KINDS = {"meshdir": "mesh", "texturedir": "texture", "assetdir": "asset"}
_MULTIPLIERS = {"replicate"}  # elements whose ``count`` repeats what they hold
_GENERATORS = {"composite", "flexcomp"}  # elements that make ``count`` bodies by themselves
_PNG = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class MjcfFiles:
    """The files an MJCF reads (resolved), and the bodies it declares."""

    xml: tuple[Path, ...]  # the main file, its includes and attached models
    assets: tuple[Path, ...]  # meshes, textures, height fields, skins found on disk
    bodies: int


@dataclass
class _Model:
    """One model's files: the main MJCF or an attached one, with its includes."""

    folder: Path  # where its asset paths start
    trees: list[tuple[Path, ET.Element]] = field(default_factory=list)
    #: "mesh"/"texture"/"asset" → the (attribute, folder) pairs its <compiler> elements give
    dirs: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _absolute(text: str) -> bool:
    return PurePosixPath(text).is_absolute() or PureWindowsPath(text).is_absolute()


def _read_xml(path: Path, limits: Limits) -> ET.Element:
    check_size(path.stat().st_size, limits.mjcf_bytes, source=path.name, field="MJCF file")
    try:
        text = path.read_text(encoding="utf-8")
        # comments out: MuJoCo's parser takes "--" inside one (a command line in a comment),
        # the XML standard and ElementTree do not
        return ET.fromstring(_COMMENT.sub("", text))
    except (ET.ParseError, OSError, UnicodeDecodeError) as exc:
        raise ArmSpecError(f"{path.name}: {_one_line(exc)}") from None


def _checked(root: Path | None, path: Path, what: str, source: str) -> Path:
    """``path`` resolved; with a ``root``, refused unless it lies inside it."""
    if root is None:
        return path.resolve()
    base = root.resolve()
    # the folders resolved, the name itself not: inside() follows a symlink there and says
    # where it leads
    rel = os.path.relpath(path.parent.resolve() / path.name, base)
    return inside(base, rel, what=what, source=source)


def _walk_xml(main: Path, root: Path | None, limits: Limits) -> dict[Path, _Model]:
    """Every XML file MuJoCo parses for ``main`` (includes, attached models), by model."""
    models: dict[Path, _Model] = {}
    todo: list[tuple[Path, Path]] = [(main, main.parent)]  # (file, its model's folder)
    seen: set[Path] = set()
    while todo:
        path, folder = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        tree = _read_xml(path, limits)
        model = models.setdefault(folder, _Model(folder))
        model.trees.append((path, tree))
        for el in tree.iter():
            tag = str(el.tag)
            if tag == "compiler":
                for attr, kind in _DIR_KINDS.items():
                    if el.get(attr):
                        model.dirs.setdefault(kind, []).append((attr, str(el.get(attr))))
            ref = el.get("file") if tag in _XML_REFS else None
            if not ref:
                continue
            what = f"<{tag} file={ref!r}>"
            if _absolute(ref):
                raise PathError(
                    f"{path.name}: {what} is an absolute path; give it relative to the file, "
                    "so the arm can be copied with its files"
                )
            found = [p for p in (path.parent / ref, folder / ref) if p.is_file()]
            if not found:
                raise ArmSpecError(f"{path.name}: {what}: no such file")
            for p in found:
                real = _checked(root, p, what, path.name)
                # an attached model's own includes and assets are relative to its folder
                todo.append((real, real.parent if tag == "model" else folder))
    return models


def _asset_refs(model: _Model) -> Iterator[tuple[Path, str, str, list[tuple[str, str]]]]:
    """(XML file, ``<tag attr='value'>``, value, folders to look in) of every asset file."""
    for path, tree in model.trees:
        for el in tree.iter():
            tag = str(el.tag)
            if tag in _XML_REFS:
                continue
            kind = "texture" if tag == "texture" else "mesh"
            dirs = model.dirs.get(kind) or model.dirs.get("asset") or [("", "")]
            for attr, value in el.attrib.items():
                if attr.startswith("file") and value:
                    yield path, f"<{tag} {attr}={value!r}>", value, dirs


def _assets(models: dict[Path, _Model], root: Path | None, limits: Limits) -> list[Path]:
    out: list[Path] = []
    for model in models.values():
        for path, what, value, dirs in _asset_refs(model):
            for attr, folder in dirs:
                shown = f"{what} (with {attr}={folder!r})" if folder else what
                if root is not None and (_absolute(value) or _absolute(folder)):
                    raise PathError(
                        f"{path.name}: {shown} is an absolute path; give it relative to the "
                        "MJCF, so the arm can be copied with its files"
                    )
                candidate = model.folder / folder / value  # an absolute part starts afresh
                if not candidate.is_file():
                    continue  # MuJoCo will say it cannot open it, or looks elsewhere
                real = _checked(root, candidate, shown, path.name)
                _check_asset(real, limits, shown, path.name)
                out.append(real)
    return out


def _check_asset(path: Path, limits: Limits, what: str, source: str) -> None:
    """Refuse a mesh or texture bigger than ``LIMITS.mesh_bytes``, on disk or, for a PNG,
    decoded (a small PNG can declare an image of many gigabytes)."""
    size = path.stat().st_size
    check_size(size, limits.mesh_bytes, source=source, field=f"{what} ({path.name})")
    with path.open("rb") as f:
        head = f.read(24)
    if head.startswith(_PNG) and len(head) == 24:
        width, height = struct.unpack(">II", head[16:24])
        check_size(width * height * 4, limits.mesh_bytes, source=source,
                   field=f"{what} ({path.name}, {width}×{height} pixels decoded)")  # fmt: skip


def _count(value: str | None) -> int:
    """The product of a ``count`` attribute's numbers ("3", "4 4 1"); 1 if absent or not
    numbers (MuJoCo refuses those itself)."""
    try:
        numbers = [int(v) for v in (value or "").split()]
    except ValueError:
        return 1
    product = 1
    for n in numbers:
        product *= max(n, 0)
    return product if numbers else 1


def _bodies(models: dict[Path, _Model]) -> int:
    """Bodies the XML declares, each multiplied by the ``replicate`` counts around it."""
    total = 0
    for model in models.values():
        for _, tree in model.trees:
            stack: list[tuple[ET.Element, int]] = [(tree, 1)]
            while stack:
                el, times = stack.pop()
                tag = str(el.tag)
                if tag == "body":
                    total += times
                elif tag in _GENERATORS:
                    total += times * _count(el.get("count"))
                inner = times * _count(el.get("count")) if tag in _MULTIPLIERS else times
                stack.extend((child, inner) for child in el)
    return total


def check_bodies(bodies: int, source: str, limits: Limits = LIMITS) -> None:
    """Refuse a model with more than ``LIMITS.model_bodies`` bodies (the world body not
    counted): MuJoCo's stack runs out with a fatal error in the first collision step."""
    if bodies > limits.model_bodies:
        raise LimitError(
            f"{source}: the model has {bodies:,} bodies; the limit is {limits.model_bodies:,}"
        )


def scan_mjcf(main: Path, root: Path | None = None, *, limits: Limits = LIMITS) -> MjcfFiles:
    """Walk ``main`` and everything it names, refusing (before MuJoCo reads anything) a file
    outside ``root`` (when given), a file too big, or too many bodies.

    Raises ArmSpecError (unreadable XML, a missing include), PathError, LimitError; each a
    UserError naming the file and the attribute.
    """
    main = Path(main).expanduser()
    if main.is_dir():
        raise ArmSpecError(f"{main}: is a directory, not an MJCF file (give the .xml file)")
    if not main.is_file():
        raise ArmSpecError(f"{main.name}: no such file ({main})")
    main = _checked(root, main, "the MJCF", main.name)
    models = _walk_xml(main, root, limits)
    assets = _assets(models, root, limits)
    bodies = _bodies(models)
    check_bodies(bodies, main.name, limits)
    xml = tuple(path for model in models.values() for path, _ in model.trees)
    return MjcfFiles(xml, tuple(dict.fromkeys(assets)), bodies)
