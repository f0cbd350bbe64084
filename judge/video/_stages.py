"""The stages of spec §4.6: plans before the video, then gates with optional inspection.

Gate semantics (spec §4.5): one call per gate covers every live subgoal; only ``yes`` stays
live; NA at P1 leaves the window out of P; any unresolved answer withholds the axis, so the
gated walk stops asking on that axis. In ``independent`` mode every gate is asked of every
subgoal (minus windows NA at P1, which stay excluded under both rules) and the same answers are
scored both ways. Inspection stops being offered after the per-gate limit, once the budget share
is spent, or after the provider refused an inspecting call for the spend cap; none of those ever
turns an answer into NA or a pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from annotation import PHYSICS_GATES, TASK_GATES
from judge.models import FrameImage, SpendCapReached, ToolCall
from judge.video._context import EvidenceContext, InspectionBlock
from judge.video._frames import FrameSampler
from judge.video._prompts import gate_messages, plan_messages, review_messages
from judge.video._replies import (
    InspectRequest,
    parse_dependencies,
    parse_gate,
    parse_inspect,
    parse_plan,
)
from judge.video._result import GateResult
from judge.video._schemas import (
    INSPECT,
    dependencies_tool,
    gate_tool,
    inspect_tool,
    plan_physics_tool,
    plan_task_tool,
)
from judge.video._session import Session
from storage import RunAnswer, RunSubgoal
from storage.media.continuity import Window as ScanWindow


def plan_task(s: Session, goal: str, f1: FrameImage) -> tuple[RunSubgoal, ...]:
    """(a) Decompose the goal from the goal and f₁ alone, before any frame of the video."""
    tool = plan_task_tool(s.config.max_task_subgoals)
    msgs = plan_messages("task_plan", goal, f1, tool=tool.name, max_windows=0)
    return s.ask("plan_task", msgs, [tool], lambda c: parse_plan(c.arguments, "task", "reason"))


def plan_physics(s: Session, goal: str, f1: FrameImage) -> tuple[RunSubgoal, ...]:
    """(b) Plan 1..16 Physics windows from the goal and f₁ alone."""
    n = s.config.max_physics_windows
    tool = plan_physics_tool(n)
    msgs = plan_messages("physics_plan", goal, f1, tool=tool.name, max_windows=n)
    return s.ask(
        "plan_physics", msgs, [tool], lambda c: parse_plan(c.arguments, "physics", "rationale")
    )


def review(
    s: Session, goal: str, f1: FrameImage, windows: Sequence[RunSubgoal]
) -> tuple[RunSubgoal, ...]:
    """(c) Keep only ordering constraints that are explicit or physically necessary."""
    tool = dependencies_tool([w.sid for w in windows])
    msgs = review_messages(goal, f1, windows, tool=tool.name)
    return s.ask("review", msgs, [tool], lambda c: parse_dependencies(c.arguments, windows))


@dataclass
class AxisInput:
    """What the gates of one axis work from."""

    axis: str  # task | physics
    goal: str
    f1: FrameImage
    plan: tuple[RunSubgoal, ...]
    initial: tuple[FrameImage, ...]
    independent: bool
    candidates: tuple[ScanWindow, ...] = ()  # continuity windows named at every gate call


class GateRunner:
    """Runs the gates of both axes for one video; numbers inspections run-wide."""

    def __init__(
        self, s: Session, sampler: FrameSampler, on_gate: Callable[[str], None] | None = None
    ) -> None:
        self.s = s
        self.sampler = sampler
        self.blocks: list[InspectionBlock] = []
        self._on_gate = on_gate or (lambda _g: None)
        self._cap_hit = False  # the provider refused an inspecting call: no more offers

    def run_axis(self, a: AxisInput) -> list[GateResult]:
        gates = TASK_GATES if a.axis == "task" else PHYSICS_GATES
        ctx = EvidenceContext(a.initial, self.s.config.context_inspection_frames)
        live = [p.sid for p in a.plan]
        out: list[GateResult] = []
        for gate in gates:
            if not live:
                break  # every subgoal already exited: later gates are "not reached"
            self._on_gate(gate)
            result = self._gate(a, ctx, gate, live)
            out.append(result)
            rows = {r.sid: r for r in result.rows}
            if a.independent:
                # Ask everything again, except windows with nothing to inspect (NA at P1).
                live = [sid for sid in live if not _na_at_p1(rows[sid])]
                continue
            if any(r.unresolved for r in result.rows):
                break  # the axis is withheld; asking further gates cannot change that
            live = [sid for sid in live if rows[sid].answer == "yes"]
        return out

    def _gate(self, a: AxisInput, ctx: EvidenceContext, gate: str, live: list[str]) -> GateResult:
        cfg = self.s.config
        limit = cfg.max_inspections_per_gate
        used: list[int] = []
        cut = ""
        submit = gate_tool(gate, live)
        inspect = inspect_tool(cfg.inspect_max_frames, cfg.inspect_default_frames)

        def parse(call: ToolCall) -> tuple[RunAnswer, ...] | InspectRequest:
            if call.name == INSPECT:
                return parse_inspect(
                    call.arguments,
                    self.sampler.index,
                    default_frames=cfg.inspect_default_frames,
                    max_frames=cfg.inspect_max_frames,
                )
            return parse_gate(call.arguments, axis=a.axis, gate=gate, live=live, seen=ctx.seen_ids)

        while True:
            if not cut and len(used) >= limit:
                cut = f"inspection limit of {limit} per gate reached"
            elif not cut and self._cap_hit:
                cut = "spend cap: inspection no longer affordable"
            elif not cut and not self.s.inspection_affordable():
                cut = f"{cfg.inspect_budget_share:.0%} of the spend cap spent"
            offer = not cut
            msgs = gate_messages(
                axis=a.axis, gate=gate, goal=a.goal, f1=a.f1, plan=a.plan, live=live,
                initial=a.initial, inspections=ctx.retained(), used=len(used), limit=limit,
                can_inspect=offer, duration_s=self.sampler.index.duration_s,
                candidates=a.candidates,
            )  # fmt: skip
            try:
                reply = self.s.ask(
                    f"gate:{gate}", msgs, [submit, inspect] if offer else [submit], parse
                )
            except SpendCapReached:
                if not offer:
                    raise
                self._cap_hit = True
                self.s.notes.append(f"{a.axis} {gate}: spend cap refused an inspecting call")
                continue
            if isinstance(reply, InspectRequest):
                used.append(self._inspect(a.axis, gate, ctx, reply))
                continue
            return GateResult(a.axis, gate, tuple(live), reply, tuple(used), cut)

    def _inspect(self, axis: str, gate: str, ctx: EvidenceContext, req: InspectRequest) -> int:
        number = len(self.blocks) + 1
        frames = self.sampler.window(req.window, number)
        block = InspectionBlock(
            number, axis, gate, req.window, req.question, req.expected_evidence,
            req.requested_frames, frames,
        )  # fmt: skip
        ctx.add(block)
        self.blocks.append(block)
        return number


def _na_at_p1(row: RunAnswer) -> bool:
    return row.gate == "P1" and row.answer == "NA" and not row.unresolved
