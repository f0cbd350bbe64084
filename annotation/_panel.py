"""The human panel as arrays, and its consensus (spec ego2act.md §3.2, §5.1–5.2).

A :class:`Panel` holds every video of the selected cases with its per-rater-slot ratings on the
0–100 scale (NaN = no rating, or Physics N/A). Slots are not linked to rater identities (the ICC is
one-way for that reason), but slot ``j`` of ``task`` and slot ``j`` of ``physics`` are the same
person's two ratings of that video, so a per-slot Final can be formed for reliability analysis.
An :class:`Evaluator` is an automated judge (or one scoring rule of it) on the same videos.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from annotation._scoring import PHYSICS_MAX, TASK_MAX, Score, geometric_final

FloatArray: TypeAlias = npt.NDArray[np.float64]
IntArray: TypeAlias = npt.NDArray[np.intp]
BoolArray: TypeAlias = npt.NDArray[np.bool_]
StrArray: TypeAlias = npt.NDArray[np.str_]

AXES: tuple[str, ...] = ("task", "physics", "final")
ROLES: tuple[str, ...] = ("generated", "human-success", "human-failure")
Axis = Literal["task", "physics", "final"]
HumanSuccessRule = Literal["rated", "max"]


def _floats(a: object, name: str, ndim: int) -> FloatArray:
    arr = np.array(a, dtype=np.float64)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    return arr


def _strings(a: object, name: str, n: int) -> StrArray:
    arr = np.asarray(a).astype(str)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {arr.shape}")
    return arr


# eq=False: numpy arrays make field-wise equality ambiguous and unhashable, so a panel compares
# (and hashes) by identity; it is still immutable as far as its attributes go.
@dataclass(frozen=True, eq=False)
class Panel:
    """Per-video, per-rater-slot human ratings on 0–100 (NaN = missing or N/A).

    Attributes:
        video_ids: The V video ids (unique).
        case_ids: (V,) case of each video; the unit the bootstrap resamples.
        models: (V,) generator name; human recordings carry their role as model name.
        roles: (V,) ``generated``, ``human-success`` or ``human-failure``.
        task: (V, R) Task ratings T100 per rater slot.
        physics: (V, R) Physics ratings P100 per rater slot.
        domains: Optional (V,) case domain.
    """

    video_ids: tuple[str, ...]
    case_ids: StrArray
    models: StrArray
    roles: StrArray
    task: FloatArray
    physics: FloatArray
    domains: StrArray | None = None

    def __post_init__(self) -> None:
        v = len(self.video_ids)
        if len(set(self.video_ids)) != v:
            raise ValueError("video_ids must be unique")
        set_ = object.__setattr__  # frozen: normalise dtypes once, here
        set_(self, "video_ids", tuple(str(x) for x in self.video_ids))
        set_(self, "case_ids", _strings(self.case_ids, "case_ids", v))
        set_(self, "models", _strings(self.models, "models", v))
        set_(self, "roles", _strings(self.roles, "roles", v))
        task = _floats(self.task, "task", 2)
        physics = _floats(self.physics, "physics", 2)
        if task.shape[0] != v or physics.shape != task.shape:
            raise ValueError(f"task {task.shape} and physics {physics.shape} must both be ({v}, R)")
        for name, arr in (("task", task), ("physics", physics)):
            fin = arr[np.isfinite(arr)]
            if fin.size and (fin.min() < 0 or fin.max() > 100):
                raise ValueError(f"{name} ratings must lie on 0–100")
        set_(self, "task", task)
        set_(self, "physics", physics)
        bad = sorted(set(self.roles.tolist()) - set(ROLES))
        if bad:
            raise ValueError(f"unknown roles {bad}; expected one of {ROLES}")
        if self.domains is not None:
            set_(self, "domains", _strings(self.domains, "domains", v))

    @property
    def n_videos(self) -> int:
        """Number of videos V."""
        return len(self.video_ids)

    @property
    def n_slots(self) -> int:
        """Number of rater slots R."""
        return int(self.task.shape[1])

    @classmethod
    def from_native(
        cls,
        video_ids: Sequence[str],
        case_ids: Sequence[str],
        models: Sequence[str],
        roles: Sequence[str],
        task_native: object,
        physics_native: object,
        domains: Sequence[str] | None = None,
    ) -> Panel:
        """Build a panel from native ratings (Task 0–3, Physics 0–4, NaN = missing/N/A)."""
        t = _floats(task_native, "task_native", 2)
        p = _floats(physics_native, "physics_native", 2)
        return cls(
            video_ids=tuple(video_ids),
            case_ids=np.asarray(case_ids),
            models=np.asarray(models),
            roles=np.asarray(roles),
            task=100.0 * t / TASK_MAX,
            physics=100.0 * p / PHYSICS_MAX,
            domains=None if domains is None else np.asarray(domains),
        )

    def take(self, indices: Sequence[int] | IntArray) -> Panel:
        """The panel restricted (or expanded) to ``indices``; repeated videos get ``#k`` ids."""
        idx = np.asarray(indices, dtype=np.intp)
        return Panel(
            video_ids=_unique_ids([self.video_ids[i] for i in idx]),
            case_ids=self.case_ids[idx],
            models=self.models[idx],
            roles=self.roles[idx],
            task=self.task[idx],
            physics=self.physics[idx],
            domains=None if self.domains is None else self.domains[idx],
        )


@dataclass(frozen=True, eq=False)
class Evaluator:
    """An automated judge (or one rule of it): per-video scores on 0–100, NaN = missing.

    Attributes:
        name: Label used in tables.
        task: (V,) T100.
        physics: (V,) P100.
        final: (V,) S.
    """

    name: str
    task: FloatArray
    physics: FloatArray
    final: FloatArray

    def __post_init__(self) -> None:
        t = _floats(self.task, "task", 1)
        shapes = {t.shape, np.shape(self.physics), np.shape(self.final)}
        if len(shapes) != 1:
            raise ValueError(f"task, physics and final must have one shape, got {shapes}")
        object.__setattr__(self, "task", t)
        object.__setattr__(self, "physics", _floats(self.physics, "physics", 1))
        object.__setattr__(self, "final", _floats(self.final, "final", 1))

    def axis(self, axis: str) -> FloatArray:
        """The (V,) scores of one axis (``task``, ``physics`` or ``final``)."""
        if axis not in AXES:
            raise ValueError(f"unknown axis {axis!r}")
        arr: FloatArray = getattr(self, axis)
        return arr

    @classmethod
    def from_scores(cls, name: str, scores: Sequence[Score | None]) -> Evaluator:
        """Build from per-video :class:`Score` objects (None, or a None field, is missing)."""

        def col(get: str) -> FloatArray:
            vals = [getattr(s, get) if s is not None else None for s in scores]
            return np.array([math.nan if v is None else v for v in vals], dtype=np.float64)

        return cls(name, col("t100"), col("p100"), col("s"))

    def take(self, indices: Sequence[int] | IntArray) -> Evaluator:
        """The evaluator restricted (or expanded) to ``indices``."""
        idx = np.asarray(indices, dtype=np.intp)
        return Evaluator(self.name, self.task[idx], self.physics[idx], self.final[idx])


def _unique_ids(ids: Sequence[str]) -> tuple[str, ...]:
    seen: dict[str, int] = {}
    out = []
    for i in ids:
        seen[i] = seen.get(i, 0) + 1
        out.append(i if seen[i] == 1 else f"{i}#{seen[i]}")
    return tuple(out)


def final_from_axes(t100: FloatArray, p100: FloatArray) -> FloatArray:
    """Vectorised :func:`annotation.geometric_final`: S = sqrt(T·P), T = 0 → 0, else missing.

    The arithmetic runs on whole arrays; the entries it leaves missing are passed through the
    scalar rule itself, so the special cases can never drift from the scoring library.
    """
    t = np.asarray(t100, dtype=np.float64)
    p = np.asarray(p100, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = np.sqrt(t * p)
    for i in zip(*np.nonzero(~np.isfinite(out)), strict=True):
        g = geometric_final(_opt(t[i]), _opt(p[i]))
        out[i] = math.nan if g is None else g
    return out


def _opt(x: np.float64) -> float | None:
    return None if math.isnan(x) else float(x)


def row_means(a: FloatArray, mask: BoolArray | None = None) -> FloatArray:
    """Row means over the entries in ``mask`` (default: the finite ones); NaN where a row has
    none."""
    ok = np.isfinite(a) if mask is None else mask
    n = ok.sum(axis=1)
    s = np.where(ok, a, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = np.where(n > 0, s / np.maximum(n, 1), math.nan)
    return out


def consensus(panel: Panel, *, human_success: HumanSuccessRule = "rated") -> dict[str, FloatArray]:
    """Per-video consensus on every axis (spec §3.2).

    Task and Physics are the means of the available ratings (Physics N/A is missing, not zero);
    Final is the geometric mean of those means, 0 when the mean Task is 0, missing when Physics
    is missing otherwise.

    Args:
        panel: The rated panel.
        human_success: ``rated`` uses the ratings of verified Human (+) recordings like any
            other video; ``max`` assigns them the rubric maximum 100/100/100 (as in Table 2).

    Returns:
        ``{"task": (V,), "physics": (V,), "final": (V,)}`` on 0–100, NaN = missing.
    """
    if human_success not in ("rated", "max"):
        raise ValueError(f"human_success must be 'rated' or 'max', got {human_success!r}")
    t = row_means(panel.task)
    p = row_means(panel.physics)
    if human_success == "max":
        top = panel.roles == "human-success"
        t = np.where(top, 100.0, t)
        p = np.where(top, 100.0, p)
    return {"task": t, "physics": p, "final": final_from_axes(t, p)}


def consensus_evaluator(panel: Panel, *, human_success: HumanSuccessRule = "rated") -> Evaluator:
    """The human consensus as an :class:`Evaluator` named ``Human`` (for tables)."""
    c = consensus(panel, human_success=human_success)
    return Evaluator("Human", c["task"], c["physics"], c["final"])


def rating_matrix(panel: Panel, axis: str) -> FloatArray:
    """Per-slot ratings of one axis; for ``final`` the slot's own S = G(T, P) with the T0 rule."""
    if axis == "task":
        return panel.task
    if axis == "physics":
        return panel.physics
    if axis == "final":
        return final_from_axes(panel.task, panel.physics)
    raise ValueError(f"unknown axis {axis!r}")
