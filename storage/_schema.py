"""The project schema as ordered migrations. Append a function to add a version; never edit one.

Tables (v1): meta, media, video_index, cases, videos, raters, subgoal_plans, subgoals, ratings,
gate_decisions, evidence_marks, history. See docs/architecture.md for what each holds.
"""

from __future__ import annotations

import sqlite_utils

from storage._db import Migration


def _v1(db: sqlite_utils.Database) -> None:
    db.table("meta").create({"key": str, "value": str}, pk="key")
    db.table("media").create(
        {
            "sha256": str,
            "kind": str,  # video | image
            "rel_path": str,  # under media/
            "bytes": int,
            "original_name": str,
            "imported_at": str,
        },
        pk="sha256",
        not_null={"kind", "rel_path", "bytes"},
    )
    db.table("video_index").create(
        {
            "sha256": str,
            "frame_count": int,
            "width": int,
            "height": int,
            "fps": float,
            "duration_s": float,
            "data": str,  # VideoIndex.to_json(): every frame's pts, keyframes, time base
        },
        pk="sha256",
        foreign_keys=[("sha256", "media", "sha256")],
    )
    db.table("cases").create(
        {
            "id": str,
            "goal": str,
            "domain": str,
            "clutter": str,
            "initial_image": str,
            "extra": str,  # JSON: optional Table 5 fields
            "imported_at": str,
        },
        pk="id",
        not_null={"goal", "domain", "clutter", "initial_image"},
        foreign_keys=[("initial_image", "media", "sha256")],
    )
    db.table("videos").create(
        {
            "id": str,  # anonymous id shown to raters
            "case_id": str,
            "media": str,
            "role": str,  # generated | human-success | human-failure
            "model": str,
            "seed": int,
            "source_name": str,  # file name in the case folder; never shown to raters
            "truth": str,  # JSON: demo ground truth, never shown to raters
            "imported_at": str,
        },
        pk="id",
        not_null={"case_id", "media", "role"},
        foreign_keys=[("case_id", "cases", "id"), ("media", "media", "sha256")],
    )
    db.table("videos").create_index(["case_id", "media"], unique=True)
    db.table("raters").create({"id": str, "name": str, "created_at": str}, pk="id")
    db.table("subgoal_plans").create(
        {"id": int, "case_id": str, "rater_id": str, "created_at": str},
        pk="id",
        foreign_keys=[("case_id", "cases", "id"), ("rater_id", "raters", "id")],
    )
    db.table("subgoal_plans").create_index(["case_id", "rater_id"], unique=True)
    db.table("subgoals").create(
        {
            "id": int,
            "plan_id": int,
            "position": int,
            "source": str,
            "target": str,
            "action": str,
            "end_state": str,
            "requires": str,  # JSON list of earlier subgoal ids
            "reason": str,
            "enabling": int,
        },
        pk="id",
        not_null={"plan_id", "position", "source", "action"},
        foreign_keys=[("plan_id", "subgoal_plans", "id")],
    )
    db.table("ratings").create(
        {
            "id": int,
            "video_id": str,
            "rater_id": str,
            "holistic_task": float,
            "holistic_physics": float,
            "created_at": str,
            "updated_at": str,
        },
        pk="id",
        foreign_keys=[("video_id", "videos", "id"), ("rater_id", "raters", "id")],
    )
    db.table("ratings").create_index(["video_id", "rater_id"], unique=True)
    db.table("gate_decisions").create(
        {
            "id": int,
            "rating_id": int,
            "subgoal_id": int,
            "gate": str,
            "answer": str,
            "note": str,
            "updated_at": str,
        },
        pk="id",
        not_null={"rating_id", "subgoal_id", "gate", "answer"},
        foreign_keys=[("rating_id", "ratings", "id"), ("subgoal_id", "subgoals", "id")],
    )
    db.table("gate_decisions").create_index(["rating_id", "subgoal_id", "gate"], unique=True)
    db.table("evidence_marks").create(
        {
            "id": int,
            "rating_id": int,
            "subgoal_id": int,
            "gate": str,
            "start_frame": int,
            "end_frame": int,
            "box": str,  # JSON [x, y, w, h] in 0..1 of the displayed frame, or NULL
            "note": str,
            "created_at": str,
        },
        pk="id",
        not_null={"rating_id", "start_frame", "end_frame"},
        foreign_keys=[("rating_id", "ratings", "id"), ("subgoal_id", "subgoals", "id")],
    )
    db.table("history").create(
        {
            "id": int,
            "scope": str,  # whose undo stack (the rater id)
            "label": str,  # "Answer T2 for S1", shown in the Edit menu
            "changes": str,  # JSON list of {table, id, before, after} row images
            "state": str,  # done | undone
            "created_at": str,
        },
        pk="id",
        not_null={"scope", "label", "changes", "state"},
    )
    db.table("history").create_index(["scope", "state", "id"])


MIGRATIONS: list[Migration] = [_v1]
