"""Seeded random panels shared by the agreement, bootstrap and leaderboard tests (no tests here)."""

from __future__ import annotations

import numpy as np

from annotation import Evaluator, Panel, final_from_axes

GENERATORS = ("Grok", "Seedance", "Kling", "Wan", "MiniMax", "Cosmos")


def random_panel(
    seed: int = 0,
    *,
    n_cases: int = 6,
    seeds: int = 2,
    n_human: int = 2,
    slots: int = 3,
    p_missing: float = 0.35,
    quantize: bool = True,
) -> tuple[Panel, Evaluator]:
    """A panel of ``n_cases`` cases (6 generators × ``seeds`` + ``n_human`` recordings each).

    Ratings follow a latent per-video quality plus rater noise; with ``quantize`` they sit on
    the rubric's grid (Task in ninths, Physics in twelfths of 100), so ties are common. About
    ``p_missing`` of the slots are empty and a few Physics ratings are N/A.
    """
    rng = np.random.default_rng(seed)
    vids: list[str] = []
    cases: list[str] = []
    models: list[str] = []
    roles: list[str] = []
    quality: list[float] = []
    for c in range(n_cases):
        for g_i, g in enumerate(GENERATORS):
            for s in range(seeds):
                vids.append(f"{g}__c{c}__seed_{s}")
                cases.append(f"c{c}")
                models.append(g)
                roles.append("generated")
                quality.append(80 - 12 * g_i + rng.normal(0, 15))
        for h in range(n_human):
            role = "human-success" if h % 2 == 0 else "human-failure"
            vids.append(f"{role}__c{c}__{h}")
            cases.append(f"c{c}")
            models.append(role)
            roles.append(role)
            quality.append(95.0 if role == "human-success" else 60 + rng.normal(0, 10))
    v = len(vids)
    q = np.array(quality)
    task = np.clip(q[:, None] + rng.normal(0, 12, (v, slots)), 0, 100)
    phys = np.clip(q[:, None] + rng.normal(0, 15, (v, slots)), 0, 100)
    ev_t = np.clip(q + 10 + rng.normal(0, 15, v), 0, 100)
    ev_p = np.clip(q + 20 + rng.normal(0, 15, v), 0, 100)
    if quantize:
        task, ev_t = (np.round(a / (100 / 9)) * (100 / 9) for a in (task, ev_t))
        phys, ev_p = (np.round(a / (100 / 12)) * (100 / 12) for a in (phys, ev_p))
    empty = rng.random((v, slots)) < p_missing
    task[empty] = np.nan
    phys[empty] = np.nan
    phys[rng.random((v, slots)) < 0.05] = np.nan
    ev_p[rng.random(v) < 0.05] = np.nan
    panel = Panel(tuple(vids), np.array(cases), np.array(models), np.array(roles), task, phys)
    return panel, Evaluator("Judge", ev_t, ev_p, final_from_axes(ev_t, ev_p))


def balanced_ratings(seed: int, n_videos: int = 30, k: int = 3) -> np.ndarray:
    """A complete (V, k) rating matrix with clearly positive between-video variance."""
    rng = np.random.default_rng(seed)
    b = rng.normal(0, 15, n_videos)
    return 50 + b[:, None] + rng.normal(0, 8, (n_videos, k))
