"""``workbench self-test``: prove, headless, that this install works before anyone sits down.

Each check runs what a real session runs, on throwaway files in a temporary folder, and says
what it found: which install this is (the source tree or a frozen bundle) and where it keeps
projects and settings; that its rubric, prompts and scenarios load; a video encoded and decoded
frame-exact; which OpenGL MuJoCo renders with and why that one; a MuJoCo scene loaded, stepped
and rendered; SQLite and a project created; the demo project generated; the model client
configured (no network call unless ``call`` is asked for); the demonstration export formats.
With a project, its file is checked page by page (``PRAGMA quick_check``), whatever its size:
``workbench self-test --project`` is where a damaged project is found even when no command has
touched the damaged page yet (the command checks it before anything else and stops there with
the damaged project's one message).
A check that raises fails with its message; the others still run. It opens no window, so it
runs where no display exists (the input-device check imports the teleop modules, which load Qt
but need no display).
"""

from __future__ import annotations

import platform
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    detail: str
    seconds: float
    required: bool = True  # a failed optional check (an input device) does not fail the test


@dataclass(frozen=True)
class Options:
    full_demo: bool = False  # the demo with its MuJoCo episodes (~1.5 min on 2 cores)
    project: Path | None = None  # check this project's model profiles too
    call: bool = False  # and call each profile's endpoint (GET /models, then the probe)


def bundle_root() -> Path | None:
    """The folder of a frozen bundle (PyInstaller's onedir), None in a source install."""
    if not getattr(sys, "frozen", False):
        return None
    return Path(sys.executable).resolve().parent


def _install(_tmp: Path, _opts: Options) -> str:
    from storage import load_settings

    settings = load_settings()
    root = bundle_root()
    where = (
        f"frozen bundle at {root}"
        if root
        else f"source install, Python {platform.python_version()}"
    )
    for folder in (settings.config_dir, settings.log_dir):
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".wb-self-test"
        probe.write_text("ok", "utf-8")
        probe.unlink()
        if root is not None and folder.resolve().is_relative_to(root):
            raise RuntimeError(
                f"user folder {folder} is inside the bundle: an upgrade would lose it"
            )
    version = metadata.version("rollout-workbench")
    return f"{version}, {where}; settings {settings.config_dir}, logs {settings.log_dir}"


def _resources(_tmp: Path, _opts: Options) -> str:
    from annotation import load_rubric
    from sim.episode import open_scenario
    from sim.scenario import shipped

    rubric = load_rubric()
    names = sorted(shipped())
    for name in names:
        open_scenario(name)  # parses, validates and binds it to its scene
    prompts = sum(1 for f in _walk(resources.files("resources.prompts")) if f.endswith(".md"))
    where = resources.files("resources")
    gates = sum(len(a.gates) for a in rubric.axes)
    return (
        f"rubric {rubric.id} v{rubric.version} ({gates} gates), {len(names)} scenarios, "
        f"{prompts} prompts, from {where}"
    )


def _walk(folder: Any) -> Iterator[str]:
    for item in folder.iterdir():
        if item.is_dir():
            yield from _walk(item)
        else:
            yield item.name


def _video(tmp: Path, _opts: Options) -> str:
    import numpy as np

    from sim.synthetic import encode_mp4
    from storage.media import FrameReader, index_video

    ramp = np.linspace(40, 200, 160, dtype=np.uint8)
    frames = []
    for k in range(24):  # a square moving over a ramp: every frame differs from its neighbours
        img = np.repeat(np.repeat(ramp[None, :, None], 120, 0), 3, 2)
        img[40:80, 5 * k : 5 * k + 40] = (230, 60, 40)
        frames.append(np.ascontiguousarray(img))
    path = tmp / "check.mp4"
    encode_mp4(frames, path, fps=24)
    ix = index_video(path)
    if ix.frame_count != len(frames):
        raise RuntimeError(f"{ix.frame_count} frames decoded of {len(frames)} encoded")
    with FrameReader(path, ix) as reader:
        errors = [float(np.abs(reader.read(i).astype(int) - frames[i]).mean()) for i in (0, 11, 23)]
    if max(errors) > 4:  # H.264 at the writer's quality stays well under this
        raise RuntimeError(
            f"decoded frames differ from the encoded ones (mean error {max(errors):.1f})"
        )
    size = f"{ix.codec} {ix.width}x{ix.height}"
    return f"{size}, {ix.frame_count} frames exact (error ≤ {max(errors):.1f}/255)"


def _opengl(_tmp: Path, _opts: Options) -> str:
    from sim.gl import describe, explain_choice, require_rendering

    chosen = require_rendering()
    why, found = explain_choice()
    return f"{describe(chosen)}; order: {why}; tried: {'; '.join(found) or 'nothing new'}"


def _mujoco(_tmp: Path, _opts: Options) -> str:
    import mujoco  # type: ignore[import-untyped]

    from sim.episode import make_world, open_scenario

    bound = open_scenario("stack-two")
    world: Any = make_world(bound, "physics")
    try:
        world.reset(bound.scenario.seed)
        for _ in range(5):
            world.tick()
        start = time.perf_counter()
        image = world.render("front", 320, 240)
        ms = (time.perf_counter() - start) * 1000
    finally:
        world.close()
    if image.shape != (240, 320, 3) or float(image.std()) < 5:
        raise RuntimeError(f"the rendered frame is blank or malformed ({image.shape})")
    return f"MuJoCo {mujoco.__version__}: stack-two stepped and rendered 320x240 in {ms:.0f} ms"


def _sqlite(tmp: Path, _opts: Options) -> str:
    from storage import Project

    with Project.create(tmp / "sqlite-check") as project:
        db = project.db
        mode = db.execute("PRAGMA journal_mode").fetchone()[0]
        check = db.execute("PRAGMA integrity_check").fetchone()[0]
    if check != "ok":
        raise RuntimeError(f"integrity check: {check}")
    return (
        f"SQLite {sqlite3.sqlite_version}, journal {mode}, a new project passes its integrity check"
    )


def _demo(tmp: Path, opts: Options) -> str:
    from sim import build_demo_project

    report = build_demo_project(tmp / "demo", simulate=opts.full_demo)
    summary = str(report.summary())
    if opts.full_demo:
        from storage import Project

        with Project.open(tmp / "demo") as project:
            summary += f"; {len(project.episodes.list())} MuJoCo episode(s)"
        return summary
    return summary + " (cases only; --full adds the MuJoCo episodes)"


def _project(_tmp: Path, opts: Options) -> str:
    """The project's file, every page (the command checked it first too, and stops there if it
    is damaged: a self-test of an install is no reason to run on a broken project)."""
    if opts.project is None:
        return "no project given"
    from storage import Project

    with Project.open(opts.project, readonly=True) as project:
        return project.check()


def _model_client(_tmp: Path, opts: Options) -> str:
    from judge import ModelProfile, OpenAIModel

    probe = ModelProfile(
        name="self-test", base_url="http://127.0.0.1:9/v1", model="any", api_key_env=""
    )
    OpenAIModel(probe).close()  # the client is built; nothing is sent
    if opts.project is None:
        return (
            "the OpenAI-compatible client builds (no project given: no profiles checked, no call)"
        )
    from storage import Project

    lines = []
    with Project.open(opts.project, readonly=True) as project:  # --call writes through its own
        names = project.profiles.list()
        for name in names:
            profile = ModelProfile.from_config(name, project.profiles.get(name))
            lines.append(f"{name}: {profile.model} at {profile.base_url}, {_key_source(profile)}"
                         + (f", {_call(opts.project, profile)}" if opts.call else ""))  # fmt: skip
    if not names:
        return f"the client builds; {opts.project} has no model profiles"
    return "; ".join(lines)


def _key_source(profile: Any) -> str:
    import os

    from judge import resolve_api_key

    if not profile.api_key_env:
        return "no key needed"
    if os.environ.get(profile.api_key_env, "").strip():
        return f"key from ${profile.api_key_env}"
    try:
        resolve_api_key(profile)
        return "key from the OS keyring"
    except Exception:
        return f"NO KEY (set ${profile.api_key_env} or store one in the keyring)"


def _call(project_root: Path, profile: Any) -> str:
    """List the endpoint's models, then probe what it honours and keep that with the profile
    (one short call per feature), saying whether it can be the video judge."""
    import openai

    from judge import probe_and_save, resolve_api_key, video_judge_refusal
    from storage import Project

    client = openai.OpenAI(base_url=profile.base_url, api_key=resolve_api_key(profile),
                           timeout=15.0, max_retries=0)  # fmt: skip
    try:
        models = [m.id for m in client.models.list()]
    finally:
        client.close()
    listed = "listed" if profile.model in models else "NOT listed"
    with Project.open(project_root) as project:
        probed = probe_and_save(project, profile.name)
    assert probed.capabilities is not None
    refusal = video_judge_refusal(probed)
    judge = f"NOT usable as the video judge: {refusal}" if refusal else "can judge videos"
    return (f"endpoint answered: {len(models)} models, {profile.model} {listed}; "
            f"{probed.capabilities.summary()}; {judge}")  # fmt: skip


def _formats(tmp: Path, _opts: Options) -> str:
    import h5py  # type: ignore[import-untyped]
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"frame_index": np.arange(4)}), tmp / "t.parquet")
    back = pq.read_table(tmp / "t.parquet").column("frame_index").to_pylist()
    with h5py.File(tmp / "t.hdf5", "w") as f:
        f["data/demo_0/actions"] = np.ones((4, 7))
    with h5py.File(tmp / "t.hdf5", "r") as f:
        shape = f["data/demo_0/actions"].shape
    if back != [0, 1, 2, 3] or shape != (4, 7):
        raise RuntimeError("a parquet or HDF5 file did not read back as written")
    versions = f"pyarrow {pa.__version__}, h5py {h5py.__version__}"
    return f"LeRobot parquet and robomimic HDF5 write and read ({versions})"


def _devices(_tmp: Path, _opts: Options) -> str:
    from app.devices import gamepads, sdl_available, spacemice

    pads = len(gamepads()) if sdl_available() else None
    mice = len(spacemice())
    sdl = "SDL unavailable" if pads is None else f"SDL: {pads} gamepad(s)"
    return f"{sdl}; hidapi: {mice} SpaceMouse(s) (none is fine: the keyboard always drives)"


CHECKS: tuple[tuple[str, Callable[[Path, Options], str], bool], ...] = (
    ("install", _install, True),
    ("opengl", _opengl, True),  # first: before anything imports mujoco, every platform can be tried
    ("resources", _resources, True),
    ("video", _video, True),
    ("mujoco", _mujoco, True),
    ("sqlite", _sqlite, True),
    ("demo project", _demo, True),
    ("project", _project, True),
    ("model client", _model_client, True),
    ("export formats", _formats, True),
    ("input devices", _devices, False),
)


@contextmanager
def _scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="wb-self-test-") as tmp:
        yield Path(tmp)


def run_self_test(
    opts: Options = Options(), on_result: Callable[[CheckResult], None] | None = None
) -> list[CheckResult]:
    """Every check in order; ``on_result`` hears each as it finishes."""
    out = []
    with _scratch() as tmp:
        for name, fn, required in CHECKS:
            start = time.perf_counter()
            try:
                detail, ok = fn(tmp, opts), True
            except Exception as err:  # a failed check is reported, never raised
                detail, ok = f"{type(err).__name__}: {err}", False
            from annotation import redact  # an endpoint's refusal may quote the key it was sent

            result = CheckResult(name, ok, redact(detail), time.perf_counter() - start, required)
            out.append(result)
            if on_result is not None:
                on_result(result)
    return out


def passed(results: list[CheckResult]) -> bool:
    return all(r.ok for r in results if r.required)
