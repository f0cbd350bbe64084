"""bench/agreement: the agreement table with 1,000 case-bootstrap replicates, vectorised vs loop.

Builds a 600-video panel — 25 cases × 24 videos (6 generators × 3 seeds + 3 Human (+) and 3
Human (−) recordings per case) — rated by 3 raters, not all on every video (each video gets 1, 2
or 3 ratings; about 60 % have at least two), on the rubric's grid of levels, plus one evaluator.

- Vectorised: ``annotation.agreement_table`` with 1,000 replicates (point estimates included).
- Loop: the straightforward way — per replicate build the resampled DataFrame (every video of
  each drawn case, copies as separate videos), then call statsmodels MixedLM (REML ICC),
  ``krippendorff.alpha`` and scipy per figure. Both use the same seed, hence the same draws.
  The loop is too slow for 1,000 replicates, so it times the first ``LOOP_REPS`` and the total is
  extrapolated linearly (``loop_extrapolated``).
  ``loop_mixedlm_share`` is the part of the loop spent in MixedLM fits, and
  ``speedup_without_mixedlm`` the speedup if those cost nothing.
- Checks: the loop's point estimates and its replicates equal the vectorised ones. ICC figures
  are compared with a looser tolerance because MixedLM's optimiser stops at ~1e-5 relative.

Prints one JSON object on stdout; progress goes to stderr. Goal: speedup ≥ 5.

    python bench/agreement.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from typing import Any

import numpy as np

from annotation import CaseBootstrap, Evaluator, Panel, agreement_table, final_from_axes

GENERATORS = ("Grok-1.5", "Seedance-2.0", "Kling-v3-Pro", "Wan-2.7", "MiniMax-H3", "Cosmos-3")
QUALITY = (52.0, 64.0, 60.0, 45.0, 56.0, 6.0)  # rough human Agg of Table 2
N_BOOT = 1000
LOOP_REPS = 50
TOL = 1e-9
TOL_ICC = 1e-4
FIT_SECONDS = [0.0]  # time the loop spends in MixedLM fits (reported separately)


def log(msg: str) -> None:
    print(f"[bench/agreement] {msg}", file=sys.stderr, flush=True)


def make_panel(n_cases: int, seed: int = 0) -> tuple[Panel, Evaluator]:
    """Synthetic panel and one evaluator (biased upward, noisy) on the same videos."""
    rng = np.random.default_rng(seed)
    vids, cases, models, roles, quality = [], [], [], [], []
    for c in range(n_cases):
        difficulty = rng.normal(0, 10)
        for g, q in zip(GENERATORS, QUALITY, strict=True):
            for s in (101, 202, 303):
                vids.append(f"{g}__case{c:03d}__seed_{s}")
                cases.append(f"case{c:03d}")
                models.append(g)
                roles.append("generated")
                quality.append(q - difficulty + rng.normal(0, 20))
        for h in range(6):
            role = "human-success" if h < 3 else "human-failure"
            vids.append(f"{role}__case{c:03d}__{h}")
            cases.append(f"case{c:03d}")
            models.append(role)
            roles.append(role)
            quality.append(97.0 if h < 3 else 70 + rng.normal(0, 12))
    v = len(vids)
    q = np.array(quality)
    task = np.clip(q[:, None] + rng.normal(0, 14, (v, 3)), 0, 100)
    phys = np.clip(q[:, None] + rng.normal(0, 16, (v, 3)), 0, 100)
    task = np.round(task / (100 / 9)) * (100 / 9)  # 3 subgoals × levels 0..3
    phys = np.round(phys / (100 / 12)) * (100 / 12)  # 3 windows × levels 0..4
    n_ratings = rng.choice([1, 2, 3], size=v, p=[0.4, 0.4, 0.2])
    keep = np.zeros((v, 3), dtype=bool)
    for i, n in enumerate(n_ratings):
        keep[i, rng.choice(3, size=n, replace=False)] = True
    task[~keep] = np.nan
    phys[~keep] = np.nan
    phys[rng.random((v, 3)) < 0.05] = np.nan  # N/A
    ev_t = np.round(np.clip(q + 10 + rng.normal(0, 18, v), 0, 100) / (100 / 9)) * (100 / 9)
    ev_p = np.round(np.clip(q + 22 + rng.normal(0, 18, v), 0, 100) / (100 / 12)) * (100 / 12)
    ev_p[rng.random(v) < 0.03] = np.nan
    panel = Panel(tuple(vids), np.array(cases), np.array(models), np.array(roles), task, phys)
    return panel, Evaluator("Judge", ev_t, ev_p, final_from_axes(ev_t, ev_p))


# --- the straightforward loop --------------------------------------------------------------------


def g_final(t: Any, p: Any) -> Any:
    """The consensus Final rule on pandas columns: sqrt(T·P), T = 0 → 0, else missing."""
    out = np.sqrt(t * p)
    return out.where(~(out.isna() & (t == 0)), 0.0)


def loop_table(panel: Panel, ev: Evaluator, idx: np.ndarray) -> dict[tuple[str, ...], float]:
    """Every figure of the agreement table on the resample ``idx``, with pandas/scipy/etc."""
    import krippendorff
    import pandas as pd
    import statsmodels.formula.api as smf
    from scipy import stats

    df = pd.DataFrame(
        {
            "unit": np.arange(idx.size),
            "model": panel.models[idx],
            "role": panel.roles[idx],
            "ev_task": ev.task[idx],
            "ev_physics": ev.physics[idx],
            "ev_final": ev.final[idx],
        }
    )
    for j in range(panel.n_slots):
        df[f"t{j}"] = panel.task[idx, j]
        df[f"p{j}"] = panel.physics[idx, j]
        df[f"f{j}"] = g_final(df[f"t{j}"], df[f"p{j}"])
    slots = range(panel.n_slots)
    df["cons_task"] = df[[f"t{j}" for j in slots]].mean(axis=1)
    df["cons_physics"] = df[[f"p{j}" for j in slots]].mean(axis=1)
    df["cons_final"] = g_final(df["cons_task"], df["cons_physics"])
    out: dict[tuple[str, ...], float] = {}

    def pair(group: str, name: str, axis: str, x: Any, y: Any) -> None:
        ok = x.notna() & y.notna()
        a, b = x[ok].to_numpy(), y[ok].to_numpy()
        out[(group, name, axis, "r")] = stats.pearsonr(a, b).statistic
        out[(group, name, axis, "tau_b")] = stats.kendalltau(a, b).statistic
        cov = ((a - a.mean()) * (b - b.mean())).mean()
        out[(group, name, axis, "ccc")] = 2 * cov / (a.var() + b.var() + (a.mean() - b.mean()) ** 2)
        out[(group, name, axis, "mae")] = np.abs(a - b).mean()
        out[(group, name, axis, "rmse")] = np.sqrt(((a - b) ** 2).mean())
        out[(group, name, axis, "bias")] = (a - b).mean()

    prefix = {"task": "t", "physics": "p", "final": "f"}
    for axis, pre in prefix.items():
        wide = df[[f"{pre}{j}" for j in slots]]
        long = wide.assign(unit=df["unit"]).melt(id_vars="unit", value_name="y").dropna()
        long = long[long.groupby("unit")["y"].transform("size") >= 2].copy()
        long["y"] -= long["y"].mean()  # location-invariant; keeps the optimiser stable
        k = long.groupby("unit").size().mean()
        t_fit = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = smf.mixedlm("y ~ 1", long, groups=long["unit"]).fit(reml=True)
        FIT_SECONDS[0] += time.perf_counter() - t_fit
        sb, se = float(fit.cov_re.iloc[0, 0]), float(fit.scale)
        out[("human-human", "Human", axis, "icc_avg")] = sb / (sb + se / k)
        out[("human-human", "Human", axis, "icc_single")] = sb / (sb + se)
        out[("human-human", "Human", axis, "alpha")] = krippendorff.alpha(
            reliability_data=wide.to_numpy().T, level_of_measurement="interval"
        )

    for axis, pre in prefix.items():
        rows = []
        for j in slots:
            others = [m for m in slots if m != j]
            sub = df[[f"{pre}{j}"]].rename(columns={f"{pre}{j}": "x"})
            if axis == "final":
                # the others' mean Task and mean Physics over every rating they gave (§5.2)
                t = df[[f"t{m}" for m in others]].to_numpy()
                p = df[[f"p{m}" for m in others]].to_numpy()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows: no others
                    t_mean = np.nanmean(t, axis=1)
                    p_mean = np.nanmean(p, axis=1)
                sub["y"] = g_final(pd.Series(t_mean), pd.Series(p_mean)).to_numpy()
                sub["n"] = df[[f"f{m}" for m in slots]].notna().sum(axis=1)
            else:
                sub["y"] = df[[f"{pre}{m}" for m in others]].mean(axis=1)
                sub["n"] = df[[f"{pre}{m}" for m in slots]].notna().sum(axis=1)
            rows.append(sub[(sub["n"] >= 2) & sub["x"].notna()])
        loo = pd.concat(rows)
        pair("human-loo", "Human (leave-one-out)", axis, loo["x"], loo["y"])

    for axis in prefix:
        pair("alignment", ev.name, axis, df[f"ev_{axis}"], df[f"cons_{axis}"])
    gen = df[df["role"] == "generated"]
    order = list(dict.fromkeys(panel.models[panel.roles == "generated"]))
    h = gen.groupby("model")["cons_final"].mean().reindex(order)
    e = gen.groupby("model")["ev_final"].mean().reindex(order)
    out[("ranking", ev.name, "final", "spearman")] = stats.spearmanr(e, h).statistic
    out[("ranking", ev.name, "final", "tau_b")] = stats.kendalltau(e, h).statistic
    both = df[df["ev_final"].notna() & df["cons_final"].notna()]
    for g in order:
        within = both[(both["model"] == g) & (both["role"] == "generated")]
        rest = both[~((both["model"] == g) & (both["role"] == "generated"))]
        out[(f"within-generator:{g}", ev.name, "final", "r")] = stats.pearsonr(
            within["ev_final"], within["cons_final"]
        ).statistic
        out[(f"leave-one-generator-out:{g}", ev.name, "final", "r")] = stats.pearsonr(
            rest["ev_final"], rest["cons_final"]
        ).statistic
    return {k: float(v) for k, v in out.items()}


def max_diff(a: dict[tuple[str, ...], float], b: dict[tuple[str, ...], float], icc: bool) -> float:
    worst = 0.0
    for key, va in a.items():
        if (key[3].startswith("icc")) != icc:
            continue
        vb = b[key]
        if math.isnan(va) and math.isnan(vb):
            continue
        worst = max(worst, abs(va - vb)) if not (math.isnan(va) or math.isnan(vb)) else math.inf
    return worst


def run(quick: bool) -> dict[str, Any]:
    import krippendorff  # noqa: F401  (imports outside the timings, for both contenders)
    import pandas  # noqa: F401
    import statsmodels.formula.api  # noqa: F401
    from scipy import stats  # noqa: F401

    n_cases = 8 if quick else 25
    n_boot = 100 if quick else N_BOOT
    loop_reps = 3 if quick else LOOP_REPS
    panel, ev = make_panel(n_cases)
    n_multi = int((np.isfinite(panel.task).sum(axis=1) >= 2).sum())
    log(
        f"{panel.n_videos} videos, {n_multi} with ≥ 2 Task ratings; vectorised, {n_boot} replicates"
    )

    t0 = time.perf_counter()
    table = agreement_table(panel, [ev], n_boot=n_boot, seed=0, keep_replicates=True)
    vec_s = time.perf_counter() - t0
    assert table.replicates is not None
    keys = [(r.group, r.evaluator, r.axis, r.metric) for r in table.rows]
    vec_points = {k: r.estimate for k, r in zip(keys, table.rows, strict=True)}

    log(f"loop, {loop_reps} replicates")
    boot = CaseBootstrap.draw(panel.case_ids, n_boot, seed=0)
    FIT_SECONDS[0] = 0.0
    t0 = time.perf_counter()
    loop_reps_values = [loop_table(panel, ev, boot.expand(b)) for b in range(loop_reps)]
    loop_timed_s = time.perf_counter() - t0
    loop_fit_share = FIT_SECONDS[0] / loop_timed_s
    loop_points = loop_table(panel, ev, np.arange(panel.n_videos))
    loop_s = loop_timed_s * n_boot / loop_reps

    rep_diff, rep_diff_icc = 0.0, 0.0
    for b, reps in enumerate(loop_reps_values):
        vec_b = {k: float(table.replicates[i, b]) for i, k in enumerate(keys)}
        rep_diff = max(rep_diff, max_diff(vec_b, reps, icc=False))
        rep_diff_icc = max(rep_diff_icc, max_diff(vec_b, reps, icc=True))
    pt_diff = max_diff(vec_points, loop_points, icc=False)
    pt_diff_icc = max_diff(vec_points, loop_points, icc=True)
    return {
        "bench": "agreement",
        "quick": quick,
        "videos": panel.n_videos,
        "cases": n_cases,
        "raters": panel.n_slots,
        "evaluators": 1,
        "videos_with_2plus_task_ratings": n_multi,
        "figures": len(table.rows),
        "n_boot": n_boot,
        "vectorised_s": round(vec_s, 3),
        "loop_replicates_timed": loop_reps,
        "loop_timed_s": round(loop_timed_s, 3),
        "loop_s": round(loop_s, 2),
        "loop_extrapolated": loop_reps < n_boot,
        "loop_note": f"loop timed on {loop_reps} replicates, scaled linearly to {n_boot}",
        "loop_mixedlm_share": round(loop_fit_share, 3),
        "speedup": round(loop_s / vec_s, 1),
        "speedup_without_mixedlm": round(loop_s * (1 - loop_fit_share) / vec_s, 1),
        "speedup_goal": 5,
        "speedup_goal_met": loop_s / vec_s >= 5,
        "points_max_abs_diff": pt_diff,
        "points_max_abs_diff_icc": pt_diff_icc,
        "replicates_max_abs_diff": rep_diff,
        "replicates_max_abs_diff_icc": rep_diff_icc,
        "same_point_estimates": pt_diff <= TOL and pt_diff_icc <= TOL_ICC,
        "same_replicates": rep_diff <= TOL and rep_diff_icc <= TOL_ICC,
        "tolerance": TOL,
        "tolerance_icc": TOL_ICC,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 cases, 100 replicates, loop on 3")
    args = parser.parse_args()
    print(json.dumps(run(args.quick), indent=2))


if __name__ == "__main__":
    main()
