"""MuJoCo's own warnings during an arm check, reported once each, in the check's words.

MuJoCo prints a warning ("WARNING: Nan, Inf or huge value in QACC at DOF 18. The simulation is
unstable. Time = 0.0460.") straight to the terminal, the first time it happens in each
simulation. A check runs several simulations (every trial), so one stiff joint printed the same
line once per trial, in MuJoCo's terms (a DOF number), between the report's lines. Instead,
while the check runs MuJoCo's warning hook collects them (the previous hook is restored after),
and each kind becomes one line of the report: what happened, where (the joint, not the DOF),
in how many trials, and what to change. The hook is process-wide: a simulation running on
another thread during a check would have its warnings collected here too.

Python warnings raised while the check runs (a numpy "invalid value" from arithmetic on an
unlimited joint's infinite bounds, say) are collected the same way: the causes we know are
fixed at their source, and anything else becomes one line of the report, not a traceback-like
print between its lines.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import mujoco  # type: ignore[import-untyped]

from sim.mujoco._arm import ArmSpec
from sim.mujoco._compose import ARM_PREFIX
from sim.mujoco._index import scene_index


@dataclass
class Heard:
    stage: str = "setup"  # what the check is doing: "setup", then "trial 0", "trial 1", ...
    items: list[tuple[str, str]] = field(default_factory=list)  # (stage, MuJoCo's message)
    python: list[warnings.WarningMessage] = field(default_factory=list)


@contextmanager
def mujoco_warnings() -> Iterator[Heard]:
    """Collect MuJoCo's and Python's warnings (instead of printing them) while the block runs."""
    heard = Heard()
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda msg: heard.items.append((heard.stage, str(msg))))
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                yield heard
            finally:
                heard.python.extend(caught)
    finally:
        mujoco.set_mju_user_warning(previous)


def python_lines(heard: Heard) -> list[str]:
    """One ``warning: ...`` line per distinct Python warning (message and place)."""
    seen: dict[tuple[str, str, int], None] = {}
    for w in heard.python:
        seen.setdefault((str(w.message), w.filename, w.lineno), None)
    return [
        f"warning: a numerical problem came up while checking ({msg}, at "
        f"{file.rsplit('/', 1)[-1]}:{line}); figures computed there may be off"
        for msg, file, line in seen
    ]


_BAD_STATE = re.compile(r"Nan, Inf or huge value in (QPOS|QVEL|QACC) at DOF (\d+)")
_BAD_CTRL = re.compile(r"Nan, Inf or huge value in CTRL at ACTUATOR (\d+)")
_INERTIA = re.compile(r"Inertia matrix is too close to singular.* at DOF (\d+)")
_QUANTITY = {"QPOS": "positions", "QVEL": "velocities", "QACC": "accelerations"}


def _dof_place(scene: mujoco.MjModel, dof: int) -> str:
    if not 0 <= dof < scene.nv:
        return f"DOF {dof}"
    joint = mujoco.mj_id2name(scene, mujoco.mjtObj.mjOBJ_JOINT, int(scene.dof_jntid[dof])) or ""
    if joint:
        return f"joint {joint.removeprefix(ARM_PREFIX)!r}"
    body = mujoco.mj_id2name(scene, mujoco.mjtObj.mjOBJ_BODY, int(scene.dof_bodyid[dof])) or ""
    return f"the joint of body {body.removeprefix(ARM_PREFIX)!r}" if body else f"DOF {dof}"


def _actuator(scene: mujoco.MjModel, act: int) -> str:
    name = ""
    if 0 <= act < scene.nu:
        name = mujoco.mj_id2name(scene, mujoco.mjtObj.mjOBJ_ACTUATOR, act) or ""
    return f"actuator {name.removeprefix(ARM_PREFIX)!r}" if name else f"actuator {act}"


def _kind_and_line(scene: mujoco.MjModel, message: str) -> tuple[str, str]:
    """(grouping kind, the sentence saying what happened and what to change)."""
    if m := _BAD_STATE.search(message):
        return "unstable", (
            f"the simulation became unstable (NaN or huge {_QUANTITY[m[1]]}, first at "
            f"{_dof_place(scene, int(m[2]))}) {{where}}; MuJoCo reset it. The servo gains are "
            "likely too stiff, or damping or armature too low, for the 2 ms timestep"
        )
    if m := _BAD_CTRL.search(message):
        return "ctrl", (
            f"{_actuator(scene, int(m[1]))} was sent a NaN or huge command {{where}}; "
            "check its ctrlrange"
        )
    if m := _INERTIA.search(message):
        return "inertia", (
            f"the inertia at {_dof_place(scene, int(m[1]))} is too close to singular {{where}}; "
            "give the links realistic masses and inertias, or the joint some armature"
        )
    if "Too many contacts" in message or "Insufficient arena memory" in message:
        return "memory", (
            "the simulation ran out of memory for contacts and constraints {where}; "
            'raise <size memory="..."/> in the arm file'
        )
    text = re.sub(r"\s*Time = [-\d.e+]+\.?$", "", " ".join(message.split()))
    return text, f"MuJoCo warned {{where}}: {text}"


def _where(stages: list[str], trials: int) -> str:
    ran = sorted(set(stages))
    in_trials = [s for s in ran if s.startswith("trial ")]
    if in_trials and len(in_trials) == len(ran):
        return f"in {len(in_trials)} of {trials} trials"
    return "while " + ("loading and checking the arm" if ran == ["setup"] else "checking the arm")


def explain_warnings(heard: Heard, scene: mujoco.MjModel, *, trials: int) -> list[str]:
    """One ``warning: ...`` line per kind of MuJoCo warning heard (``scene``: the check table
    with the arm, whose DOF and actuator numbers the trials share)."""
    groups: dict[str, tuple[str, list[str]]] = {}
    for stage, message in heard.items:
        kind, line = _kind_and_line(scene, message)
        groups.setdefault(kind, (line, []))[1].append(stage)
    return [
        "warning: " + line.format(where=_where(stages, trials)) for line, stages in groups.values()
    ] + python_lines(heard)


@contextmanager
def scenario_warnings(spec: ArmSpec, family: str, name: str, messages: list[str]) -> Iterator[None]:
    """Collect warnings, as in the arm check, while the block works on scenario ``name`` (in
    scene ``family`` with arm ``spec``); add them to ``messages`` as lines that name it."""
    with mujoco_warnings() as heard:
        heard.stage = name
        yield
    if heard.items or heard.python:
        model = scene_index(family, spec).model
        for line in explain_warnings(heard, model, trials=0):
            messages.append(line.replace("warning: ", f"warning: {name}: ", 1))
