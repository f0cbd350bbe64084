"""Which OpenGL platform MuJoCo renders with, chosen before ``mujoco`` is imported.

MuJoCo reads ``MUJOCO_GL`` once, when ``mujoco`` is first imported, and on Linux defaults to
GLFW, which needs an X display: on a headless machine (a lab server, CI) every frame then fails.
So the platform is ours to pick, in this order:

- an explicit ``MUJOCO_GL`` wins, and is the only one tried;
- with a display (``DISPLAY``): GLFW (GLX), then EGL, then OSMesa;
- without one: EGL, then OSMesa.

It takes two steps because proving that a platform renders costs a process start (~0.3 s) and
most commands never render:

- :func:`prefer_platform` runs when ``sim.mujoco`` is imported, before anything imports
  ``mujoco``, and sets the first candidate whose libraries load: cheap, no context. A platform
  whose library is missing must never be set, because ``import mujoco`` itself then fails.
- :func:`require_rendering` runs in every command that renders, before it writes anything and
  before it imports ``sim.mujoco`` (the GUI's MuJoCo view, when it comes, must call it too):
  for each candidate in turn a child process opens a context and renders one frame, and the
  first that works is kept. When none does it raises :class:`RenderUnavailableError`, naming
  what to install; the answer, either way, holds for the rest of the process. A child process,
  because a broken driver can abort the process that tries it.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import threading
from collections.abc import Mapping

from annotation import UserError

#: what provides each platform on Debian/Ubuntu (the Makefile installs the EGL set)
INSTALL = {
    "glfw": "GLX for the X display (Debian: apt-get install libgl1 libglx-mesa0)",
    "egl": "EGL (Debian: apt-get install libegl1 libgl1-mesa-dri)",
    "osmesa": "OSMesa (Debian: apt-get install libosmesa6)",
}
# The shared libraries PyOpenGL loads for each headless platform (sonames first).
_LIBRARIES = {
    "egl": (("libEGL.so.1", "libEGL.so"), ("libOpenGL.so.0", "libGL.so.1", "libGL.so")),
    "osmesa": (("libOSMesa.so.8", "libOSMesa.so.6", "libOSMesa.so"),),
}
# One frame through mujoco.Renderer: the same context and calls a recorded episode uses.
_PROBE = """
import mujoco
m = mujoco.MjModel.from_xml_string("<mujoco/>")
r = mujoco.Renderer(m, 16, 16)
r.update_scene(mujoco.MjData(m))
r.render()
r.close()
print("rendered")
"""
_PROBE_TIMEOUT = 60.0  # software EGL starts in well under a second; a hung X server never does

_USER_CHOICE = os.environ.get("MUJOCO_GL")  # before prefer_platform can set it
_USER_PYOPENGL = os.environ.get("PYOPENGL_PLATFORM")  # before a mujoco backend sets it
_lock = threading.Lock()
_verified: str | None = None
_passed: dict[str, str] = {}  # every platform tried, in order: "" if it rendered, else why not
_refused: RenderUnavailableError | None = None


class RenderUnavailableError(UserError, RuntimeError):
    """No OpenGL platform can open a context here, so MuJoCo cannot render a frame."""


def candidates(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The platforms to try, in order (see the module docstring)."""
    env = os.environ if environ is None else environ
    explicit = env.get("MUJOCO_GL", "").strip().lower()
    if explicit:
        return (explicit,)
    if not sys.platform.startswith("linux"):
        return ("",)  # MuJoCo's own default (CGL on macOS, WGL on Windows) is the only one
    if env.get("DISPLAY"):
        return ("glfw", "egl", "osmesa")
    return ("egl", "osmesa")


def _missing(platform: str) -> str | None:
    """The first library ``platform`` needs that cannot be loaded (GLFW needs none to import)."""
    for alternatives in _LIBRARIES.get(platform, ()):
        for name in alternatives:
            try:
                ctypes.CDLL(name)
                break
            except OSError:
                continue
        else:
            return alternatives[0]
    return None


def prefer_platform() -> str | None:
    """Set ``MUJOCO_GL`` to the first candidate whose libraries load, unless it is set already
    or ``mujoco`` is already imported (then it is too late to matter). Returns what was set."""
    if os.environ.get("MUJOCO_GL", "").strip() or "mujoco" in sys.modules:
        return None
    for platform in candidates():
        if platform and _missing(platform) is None:
            os.environ["MUJOCO_GL"] = platform
            return platform
    return None  # nothing loads: MuJoCo's default imports fine and require_rendering explains


def _probe(platform: str, *, fresh: bool = False) -> str | None:
    """Render one frame with ``platform`` in a child process: None if it works, else why not."""
    env = dict(os.environ)
    if fresh and env.get("PYOPENGL_PLATFORM") != _USER_PYOPENGL:
        env.pop("PYOPENGL_PLATFORM", None)  # set by the loaded backend, not by the user
    if platform:
        env["MUJOCO_GL"] = platform
    else:
        env.pop("MUJOCO_GL", None)
    try:
        out = subprocess.run(
            [sys.executable, "-c", _PROBE],
            env=env,
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"no frame within {_PROBE_TIMEOUT:g} s"
    if out.returncode == 0 and "rendered" in out.stdout:
        return None
    lines = [ln.strip() for ln in out.stderr.splitlines() if ln.strip()]
    reason = lines[-1] if lines else f"exit status {out.returncode}"
    return reason if len(reason) <= 160 else reason[:157] + "..."


def loaded_platform() -> str | None:
    """The platform the imported ``mujoco`` uses (``""`` for its default), None if not imported."""
    if "mujoco" not in sys.modules:
        return None
    gl_context = sys.modules.get("mujoco.rendering.classic.gl_context")
    value = getattr(gl_context, "_MUJOCO_GL", None)  # what mujoco read at import
    if isinstance(value, str):
        return value
    return os.environ.get("MUJOCO_GL", "").strip().lower()


def _why_not(platform: str, *, fresh: bool = False) -> str | None:
    """None if ``platform`` renders here, else why not. ``fresh``: as in a process that has not
    imported mujoco (whose backend sets ``PYOPENGL_PLATFORM`` for itself when it loads)."""
    lib = _missing(platform)
    if lib is not None:
        return f"{lib} cannot be loaded"
    return _probe(platform, fresh=fresh)


def describe(platform: str) -> str:
    """How messages name a platform (``""`` is MuJoCo's own default)."""
    return f"MUJOCO_GL={platform}" if platform else "MuJoCo's default OpenGL platform"


def _refusal(tried: Mapping[str, str]) -> str:
    if len(tried) == 1:
        ((platform, reason),) = tried.items()
        hint = INSTALL.get(platform, "an OpenGL driver")
        return (
            f"MuJoCo cannot render: {describe(platform)} opens no OpenGL context here ({reason}); "
            f"install {hint}" + (", or unset MUJOCO_GL" if _USER_CHOICE else "")
        )
    names = ", ".join(f"{p or 'default'}: {r}" for p, r in tried.items())
    return (
        f"MuJoCo cannot render: no OpenGL platform works here ({names}); install "
        f"{INSTALL['egl']} or {INSTALL['osmesa']}"
    )


def _choose() -> str:
    loaded = loaded_platform()
    explicit = (_USER_CHOICE or "").strip().lower()
    if loaded is None:
        # explicit wins, even over what prefer_platform set; otherwise every candidate in turn
        todo = (explicit,) if explicit else candidates(_without_mujoco_gl())
        tried: dict[str, str] = {}
        for platform in todo:
            reason = _why_not(platform)
            _passed.update({platform: reason or ""})
            if reason is None:
                if platform:
                    os.environ["MUJOCO_GL"] = platform  # read when mujoco is imported
                return platform
            tried[platform] = reason
        raise RenderUnavailableError(_refusal(tried))
    # mujoco is loaded: its platform is fixed for this process, so only it can be used
    reason = _why_not(loaded)
    _passed[loaded] = reason or ""
    if reason is None:
        return loaded
    tried = {loaded: reason}
    if not explicit:  # it was imported before anything chose: say what would have worked
        for other in candidates(_without_mujoco_gl()):
            if other == loaded:
                continue
            why = _why_not(other, fresh=True)
            if why is None:
                raise RenderUnavailableError(
                    f"MuJoCo cannot render: it was imported with {describe(loaded)} before the "
                    f"workbench chose, and that opens no OpenGL context here ({reason}); "
                    f"{other} works: set MUJOCO_GL={other}"
                )
            tried[other] = why
    raise RenderUnavailableError(_refusal(tried))


def _without_mujoco_gl() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "MUJOCO_GL"}


def require_rendering() -> str:
    """Make sure MuJoCo can render in this process; returns the platform (``MUJOCO_GL``).

    Call it before writing anything a render would complete (a project, an episode, a video),
    and before anything imports ``mujoco``: then it picks the first candidate that renders and
    sets ``MUJOCO_GL`` to it. Once ``mujoco`` is imported only its platform can be checked.
    Raises :class:`RenderUnavailableError` (a ``UserError``: one line, what to install).
    """
    global _verified, _refused
    with _lock:
        if _refused is not None:  # the answer does not change within a process: no new probes
            raise RenderUnavailableError(str(_refused))
        if _verified is None:
            try:
                _verified = _choose()
            except RenderUnavailableError as err:
                _refused = err
                raise
        return _verified


def explain_choice(environ: Mapping[str, str] | None = None) -> tuple[str, list[str]]:
    """Why the platforms were tried in their order, and what each probe found (call after
    :func:`require_rendering`): e.g. ``("no display (DISPLAY unset): EGL, then OSMesa",
    ["egl: rendered"])``."""
    env = os.environ if environ is None else environ
    if (_USER_CHOICE or "").strip():
        why = f"MUJOCO_GL={_USER_CHOICE} was set before the workbench started: only it is tried"
    elif not sys.platform.startswith("linux"):
        why = f"{sys.platform}: MuJoCo's own default platform (WGL or CGL)"
    elif env.get("DISPLAY"):
        why = f"a display is set (DISPLAY={env['DISPLAY']}): GLFW, then EGL, then OSMesa"
    else:
        why = "no display (DISPLAY unset): EGL, then OSMesa"
    found = [f"{describe(p)}: {r or 'rendered'}" for p, r in _passed.items()]
    if not found and loaded_platform() is not None:
        found = [f"{describe(loaded_platform() or '')}: mujoco was imported before the choice"]
    return why, found


__all__ = [
    "INSTALL",
    "RenderUnavailableError",
    "candidates",
    "describe",
    "explain_choice",
    "loaded_platform",
    "prefer_platform",
    "require_rendering",
]


def release_thread() -> None:
    """Free this thread's EGL state before it ends (call on a thread that rendered).

    Destroying a context leaves EGL's per-thread state behind until ``eglReleaseThread``; a frame
    thread per opened episode then leaked about 2 MB each under Mesa (8–13 MB with the kitchen
    scene and multisampling): the GUI grew by hundreds of MB over a session. Other platforms
    keep no such state; without EGL loaded this does nothing."""
    if loaded_platform() != "egl" or "OpenGL.EGL" not in sys.modules:
        return
    try:
        sys.modules["OpenGL.EGL"].eglReleaseThread()
    except Exception:  # a thread that never made current has nothing to release
        return
