"""Run configuration of the staged judge, and the errors its stages raise."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

PROMPT_VERSION = "ego2act-judge@2"
"""Stored with every run and every call; bump it with any prompt or schema change."""

Mode = Literal["gated", "independent", "simple_vqa"]
MODES: tuple[str, ...] = get_args(Mode)

MAX_CONTINUITY_WINDOWS = 16
"""The most continuity windows a run may offer (as many as a Physics plan may have)."""


@dataclass(frozen=True)
class JudgeConfig:
    """Knobs of one judge run. Defaults follow spec ego2act.md §4.2 and §4.4.

    Attributes:
        task_frames: Initial uniform frames for the Task axis (and Simple VQA).
        physics_frames: Initial uniform frames for the Physics axis.
        max_side: Longest side of every image sent, in pixels.
        jpeg_quality: JPEG quality of every frame sent.
        inspect_default_frames: Frames an ``inspect_video`` call returns when it names none.
        inspect_max_frames: Most frames one inspection may return.
        context_inspection_frames: Inspection frames kept in context across gates (newest).
        max_inspections_per_gate: After this many inspections only ``submit_gate`` is offered.
        inspect_budget_share: Stop offering inspections once this share of the spend cap is
            spent, so the remaining gates can still be submitted.
        spend_cap_usd: Per-video spend cap; the model provider enforces it.
        max_physics_windows: Most windows a Physics plan may have.
        max_task_subgoals: Most subgoals a Task plan may have (a sanity bound: the spec sets no
            target count).
        reply_retries: How often a reply that is valid JSON but breaks a rule beyond the schema
            (ids not contiguous, a live subgoal missing ...) is asked again with the problem
            stated, before the run fails.
        continuity_windows: How many of the continuity scan's strongest candidate windows the
            Physics gates name as suggested places to inspect; 0 (the default) offers none, and
            the prompts are then exactly those of a run without the option.
    """

    task_frames: int = 8
    physics_frames: int = 24
    max_side: int = 512
    jpeg_quality: int = 90
    inspect_default_frames: int = 12
    inspect_max_frames: int = 24
    context_inspection_frames: int = 24
    max_inspections_per_gate: int = 4
    inspect_budget_share: float = 0.8
    spend_cap_usd: float = 2.0
    max_physics_windows: int = 16
    max_task_subgoals: int = 32
    reply_retries: int = 1
    continuity_windows: int = 0

    def with_overrides(self, overrides: Mapping[str, Any]) -> JudgeConfig:
        """A copy with some fields replaced; unknown names or wrong types raise ValueError."""
        fields = {f.name: f for f in dataclasses.fields(self)}
        clean: dict[str, Any] = {}
        for key, value in overrides.items():
            if key not in fields:
                raise ValueError(f"unknown judge setting {key!r} (known: {', '.join(fields)})")
            want = type(getattr(self, key))
            if want is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, want) or isinstance(value, bool):
                raise ValueError(f"judge setting {key!r} must be {want.__name__}, got {value!r}")
            clean[key] = value
        out = dataclasses.replace(self, **clean)
        out.check()
        return out

    def check(self) -> None:
        """Raise ValueError for settings no run could use."""
        if not 1 <= self.inspect_default_frames <= self.inspect_max_frames <= 24:
            raise ValueError("need 1 <= inspect_default_frames <= inspect_max_frames <= 24")
        for name in ("task_frames", "physics_frames", "max_side", "max_physics_windows"):
            if getattr(self, name) < 1:
                raise ValueError(f"judge setting {name!r} must be at least 1")
        if not 1 <= self.jpeg_quality <= 100:
            raise ValueError("jpeg_quality must be 1..100")
        if self.spend_cap_usd <= 0 or not 0 < self.inspect_budget_share <= 1:
            raise ValueError("spend_cap_usd must be > 0 and inspect_budget_share in (0, 1]")
        if not 0 <= self.continuity_windows <= MAX_CONTINUITY_WINDOWS:
            raise ValueError(f"continuity_windows must be 0..{MAX_CONTINUITY_WINDOWS}")

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class PipelineError(RuntimeError):
    """The model's replies could not be used (after the configured re-asks), or bad input."""


class JudgeCancelled(RuntimeError):  # noqa: N818 - it is a signal, not an error condition
    """The caller asked the run to stop (between calls)."""


class ReplyProblem(ValueError):  # noqa: N818 - it carries a message for the model
    """A schema-valid reply that breaks a rule beyond the schema; the message tells the model."""
