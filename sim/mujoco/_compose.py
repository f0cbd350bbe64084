"""Put an arm into a scene: attach the arm's MJCF at the scene's mount site with MjSpec.

Both files are parsed with ``mujoco.MjSpec``; the arm's worldbody (its root body, e.g.
``wb6_base``) is attached at the scene site ``mount_site`` and every arm name gets ``prefix``
(``arm/`` by default), so two arms, or an arm and a scene that both name a body ``base``, do not
collide. The scene's ``<option>`` wins over the arm's: scenes must carry the physics options the
arm files document (timestep 0.002, implicitfast, elliptic cones, impratio 10).

Malformed files raise :class:`ArmSpecError` (a ``ValueError``) with the file name and
MuJoCo's own message, which carries the line number.
"""

from __future__ import annotations

from pathlib import Path

import mujoco  # type: ignore[import-untyped]

from sim.mujoco._arm import ArmBinding, ArmSpec, ArmSpecError
from sim.mujoco._bind import bind_arm

ARM_PREFIX = "arm/"  # the arm's names in a composed scene start with this


def _one_line(exc: Exception) -> str:
    """MuJoCo's message on one line (it keeps the line number: "... line 12")."""
    return " ".join(str(exc).split())


def _label(source: Path | str) -> str:
    if isinstance(source, Path):
        return source.name
    return "<scene xml>" if source.lstrip().startswith("<") else Path(source).name


def load_spec(source: Path | str) -> mujoco.MjSpec:
    """Parse an MJCF file (a Path or path string) or an XML string into an MjSpec."""
    label = _label(source)
    try:
        if isinstance(source, str) and source.lstrip().startswith("<"):
            return mujoco.MjSpec.from_string(source)
        path = Path(source)
        if path.is_dir():
            raise ArmSpecError(f"{path}: is a directory, not an MJCF file (give the .xml file)")
        if not path.is_file():
            raise ArmSpecError(f"{label}: no such file ({path})")
        return mujoco.MjSpec.from_file(str(path))
    except ArmSpecError:
        raise
    except (ValueError, RuntimeError, mujoco.FatalError) as exc:
        raise ArmSpecError(f"{label}: {_one_line(exc)}") from exc


def compile_spec(spec: mujoco.MjSpec, label: str) -> mujoco.MjModel:
    """Compile, turning MuJoCo's error into an ArmSpecError that names ``label``."""
    try:
        return spec.compile()
    except (ValueError, RuntimeError, mujoco.FatalError) as exc:
        raise ArmSpecError(f"{label}: {_one_line(exc)}") from exc


def compose_spec(
    scene_xml: Path | str,
    arm: ArmSpec,
    *,
    mount_site: str = "arm_mount",
    prefix: str = ARM_PREFIX,
) -> mujoco.MjSpec:
    """The scene with the arm attached, not yet compiled (so a caller can add to it)."""
    scene = load_spec(scene_xml)
    child = load_spec(arm.mjcf)
    if not child.worldbody.first_body():
        raise ArmSpecError(f"{arm.mjcf.name}: the worldbody has no body to attach")
    site = scene.site(mount_site)
    if site is None:
        sites = [s.name for s in scene.sites if s.name]
        raise ArmSpecError(
            f"{_label(scene_xml)}: no site named {mount_site!r} to mount the arm on "
            f"(sites: {', '.join(sites) or 'none'})"
        )
    scene.attach(child, site=site, prefix=prefix)
    return scene


def compose(
    scene_xml: Path | str,
    arm: ArmSpec,
    *,
    mount_site: str = "arm_mount",
    prefix: str = ARM_PREFIX,
) -> tuple[mujoco.MjModel, ArmBinding]:
    """Compile the scene with the arm attached at ``mount_site`` and bind the arm's names."""
    spec = compose_spec(scene_xml, arm, mount_site=mount_site, prefix=prefix)
    model = compile_spec(spec, f"{_label(scene_xml)} + {arm.mjcf.name}")
    return model, bind_arm(model, arm, prefix)
