"""Checks of schema-valid replies against the rules the schema cannot express.

A broken rule raises :class:`ReplyProblem` whose message is written for the model (the session
asks again with it). Rules the spec resolves itself are applied instead of refused: an NA
outside P1 becomes an unresolved answer, and evidence ids the model never saw are kept but
flagged in the row's note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judge.video._config import ReplyProblem
from judge.video._frames import Roi, Window, check_window
from storage import RunAnswer, RunSubgoal
from storage.media import VideoIndex

PIPELINE_NOTE = "[pipeline]"


def _check_ids(ids: Sequence[str], what: str) -> None:
    expected = [f"S{k}" for k in range(1, len(ids) + 1)]
    if list(ids) != expected:
        raise ReplyProblem(
            f"{what} ids must be {', '.join(expected)} in this order; got {', '.join(ids)}"
        )


def _check_requires(sid: str, requires: Sequence[str], earlier: Sequence[str]) -> None:
    bad = [r for r in requires if r not in earlier]
    if bad:
        raise ReplyProblem(
            f"{sid} requires {', '.join(bad)}, but requires may name only earlier ids "
            f"({', '.join(earlier) or 'none before ' + sid})"
        )
    if len(set(requires)) != len(requires):
        raise ReplyProblem(f"{sid} lists the same prerequisite twice")


def parse_plan(args: Mapping[str, Any], axis: str, reason_key: str) -> tuple[RunSubgoal, ...]:
    """A Task plan (``reason``) or Physics plan (``rationale``) as subgoal records."""
    items: list[Mapping[str, Any]] = list(args["subgoals"])
    ids = [str(i["id"]) for i in items]
    _check_ids(ids, "subgoal")
    out = []
    for k, item in enumerate(items):
        sid = ids[k]
        requires = [str(r) for r in item["requires"]]
        _check_requires(sid, requires, ids[:k])
        for key in ("source", "action"):
            if not str(item[key]).strip():
                raise ReplyProblem(f"{sid} has an empty {key}")
        target = item.get("target")
        out.append(
            RunSubgoal(
                axis,
                sid,
                str(item["source"]),
                None if target is None else str(target),
                str(item["action"]),
                str(item["end_state"]),
                tuple(requires),
                str(item[reason_key]),
            )
        )
    return tuple(out)


def parse_dependencies(
    args: Mapping[str, Any], windows: Sequence[RunSubgoal]
) -> tuple[RunSubgoal, ...]:
    """Review rows (axis ``physics_review``): the same ids in order, earlier prerequisites."""
    rows: list[Mapping[str, Any]] = list(args["rows"])
    ids = [str(r["id"]) for r in rows]
    want = [w.sid for w in windows]
    if ids != want:
        raise ReplyProblem(f"give one row per window in order: {', '.join(want)}")
    out = []
    for k, row in enumerate(rows):
        requires = [str(r) for r in row["requires"]]
        _check_requires(ids[k], requires, ids[:k])
        out.append(
            RunSubgoal(
                "physics_review", ids[k], requires=tuple(requires), reason=str(row["reason"])
            )
        )
    return tuple(out)


def parse_gate(
    args: Mapping[str, Any], *, axis: str, gate: str, live: Sequence[str], seen: set[str]
) -> tuple[RunAnswer, ...]:
    """Gate rows, one per live id in plan order (NA outside P1 → unresolved, noted)."""
    if args["gate"] != gate:
        raise ReplyProblem(f"this call is for gate {gate}, not {args['gate']}")
    rows: list[Mapping[str, Any]] = list(args["rows"])
    ids = [str(r["id"]) for r in rows]
    if sorted(ids) != sorted(live):
        raise ReplyProblem(f"give exactly one row for each of {', '.join(live)}")
    by_id = dict(zip(ids, rows, strict=True))
    out = []
    for sid in live:
        row = by_id[sid]
        answer = str(row["answer"])
        unresolved = bool(row["unresolved"])
        flags = []
        if answer == "NA" and gate != "P1":
            unresolved = True
            flags.append(f"NA is allowed only at P1; recorded as unresolved at {gate}")
        cited = tuple(str(e) for e in row["evidence_ids"])
        unknown = [e for e in cited if e not in seen]
        if unknown:
            flags.append(f"evidence ids not shown to the model: {', '.join(unknown)}")
        note = str(row["note"])
        if flags:
            note = f"{note} {PIPELINE_NOTE} {'; '.join(flags)}".strip()
        stamps = tuple(float(t) for t in row["timestamps_s"])
        out.append(RunAnswer(axis, gate, sid, answer, unresolved, cited, stamps, note))
    return tuple(out)


@dataclass(frozen=True)
class InspectRequest:
    window: Window
    question: str
    expected_evidence: str
    requested_frames: int


def parse_inspect(
    args: Mapping[str, Any], index: VideoIndex, *, default_frames: int, max_frames: int
) -> InspectRequest:
    """An inspection request, clamped to the video (never refused, see ``check_window``)."""
    raw = args.get("roi")
    roi: Roi | None = None
    if raw is not None:
        roi = (float(raw["x"]), float(raw["y"]), float(raw["w"]), float(raw["h"]))
    n = int(args.get("n_frames", default_frames))
    window = check_window(
        index, float(args["start_s"]), float(args["end_s"]), roi, n, max_frames=max_frames
    )
    return InspectRequest(window, str(args["question"]), str(args["expected_evidence"]), n)


@dataclass(frozen=True)
class VqaAnswer:
    """The Simple VQA control's reply."""

    task: int
    physics: int | None
    reasoning: str
    task_windows: tuple[tuple[float, float, str], ...]
    physics_windows: tuple[tuple[float, float, str], ...]

    def as_dict(self) -> dict[str, Any]:
        def win(ws: tuple[tuple[float, float, str], ...]) -> list[dict[str, Any]]:
            return [{"start_s": a, "end_s": b, "evidence": e} for a, b, e in ws]

        return {"task": self.task, "physics": self.physics, "reasoning": self.reasoning,
                "task_windows": win(self.task_windows),
                "physics_windows": win(self.physics_windows)}  # fmt: skip


def parse_vqa(args: Mapping[str, Any]) -> VqaAnswer:
    def windows(key: str) -> tuple[tuple[float, float, str], ...]:
        out = []
        for w in args[key]:
            a, b = sorted((float(w["start_s"]), float(w["end_s"])))
            out.append((a, b, str(w["evidence"])))
        return tuple(out)

    physics = args["physics"]
    return VqaAnswer(
        int(args["task"]),
        None if physics is None else int(physics),
        str(args["reasoning"]),
        windows("task_windows"),
        windows("physics_windows"),
    )
