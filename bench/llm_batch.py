"""bench/llm_batch: an episode batch with the LLM assistant through the workers, at concurrency 8.

A loopback OpenAI-compatible server answers every assistant call after a fixed latency (1 s by
default) with a valid structured reply; the simulated user is the rule-based one. The batch
(``--episodes`` planned episodes of cook-patty, measured timing so each reply lands
⌈latency/Δ⌉ ticks later) runs through ``storage.run_worker`` with ``--concurrency`` runner
threads, exactly as ``workbench batch run`` does.

Figures: the ideal wall time is calls × latency / concurrency (calls counted at the server:
each episode has one request in flight, so at most ``concurrency`` calls are outstanding);
``throughput_of_ideal`` = ideal / actual (the issue's goal: ≥ 0.8). ``peak_in_flight`` is the
most requests the server held at once; the stored episodes and calls are checked complete.

    python bench/llm_batch.py [--quick] [--latency 1.0] [--concurrency 8] [--episodes 16]

``--real URL`` runs against a real OpenAI-compatible server instead (``make test-real``'s
llama.cpp server: ``python -m tests.realserver.llama -- python bench/llm_batch.py --real
'$RW_REAL_SERVER_URL'``): a batch of the W2W tool agent on stack-two (a 135M model is too slow
for whole cook-patty episodes), reporting calls per episode, the share of replies repaired and
silenced, and the wall time against calls × measured latency ÷ concurrency.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import judge
from judge import ModelProfile, save_profile
from judge.models.loopback import Delay, FakeServer, Reply
from sim.batch import EPISODE_KIND, parse_manifest, queue_batch
from storage import Profiles, Project, run_worker


class Assistant:
    """Answers every assistant query after ``latency_s``: a short acknowledgement, no flag."""

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s
        self.arrivals: list[float] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any], n: int) -> Any:
        with self._lock:
            self.arrivals.append(time.monotonic())
        reply = Reply("respond", {
            "text": "" if n % 4 else "Looks good so far.", "flag": None,
            "progress": {"current": "cooking", "completed": []}, "goal_change": "",
            "note": f"call {n}",
        })  # fmt: skip
        return Delay(self.latency_s, reply) if self.latency_s > 0 else reply


def peak_in_flight(arrivals: list[float], latency_s: float) -> int:
    events = sorted([(t, 1) for t in arrivals] + [(t + latency_s, -1) for t in arrivals])
    now = peak = 0
    for _t, step in events:
        now += step
        peak = max(peak, now)
    return peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="8 episodes")
    ap.add_argument("--latency", type=float, default=1.0, help="seconds per call at the server")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--episodes", type=int, default=16)
    ap.add_argument("--real", metavar="URL", help="a real server's API root (see above)")
    ap.add_argument("--model", default="smollm2-135m", help="the real server's model name")
    args = ap.parse_args()
    if args.real:
        real(args.real, args.model, 2 if args.quick else min(args.episodes, 4), args.concurrency)
        return
    episodes = 8 if args.quick else args.episodes
    responder = Assistant(args.latency)
    with tempfile.TemporaryDirectory() as tmp, FakeServer(responder) as srv:
        root = Path(tmp) / "p"
        with Project.create(root) as p:
            save_profile(Profiles(p.db), ModelProfile(
                name="loop", base_url=srv.base_url, model="fake-model", api_key_env="",
                max_retries=2, timeout_s=max(30.0, 10 * args.latency),
            ))  # fmt: skip
            manifest = parse_manifest({
                "format": "workbench-batch/1", "name": "llm-bench", "scenarios": ["cook-patty"],
                "personas": ["balanced"], "timing": ["measured"], "runs": episodes,
                "assistants": [{"name": "llm", "kind": "llm", "options": {"profile": "loop"}}],
            })  # fmt: skip
            batch_id, _jobs = queue_batch(p, manifest)
        print(f"llm_batch: {episodes} episodes, {args.latency:g} s per call, "
              f"concurrency {args.concurrency}", file=sys.stderr)  # fmt: skip
        start = time.monotonic()
        stats = run_worker(root, concurrency=args.concurrency, drain=True, kinds=[EPISODE_KIND],
                           kind_modules=["judge", "sim.batch"], log=lambda _r: None)  # fmt: skip
        wall = time.monotonic() - start
        with Project.open(root) as p:
            stored = p.batches.status(batch_id)["stored"]
            exchanges = sum(
                len(p.episodes.exchanges(str(c.episode_id), party="assistant"))
                for c in p.batches.cells(batch_id)
            )
        calls = len(srv.chat_requests)
    ideal = calls * args.latency / args.concurrency
    print(json.dumps({
        "bench": "llm_batch",
        "episodes": episodes, "stored": stored, "done": stats.done, "failed": stats.failed,
        "latency_s": args.latency, "concurrency": args.concurrency,
        "calls": calls, "assistant_exchanges_stored": exchanges,
        "calls_per_episode": round(calls / max(1, episodes), 1),
        "wall_s": round(wall, 2), "ideal_s": round(ideal, 2),
        "throughput_of_ideal": round(ideal / wall, 3) if wall > 0 else None,
        "peak_in_flight": peak_in_flight(responder.arrivals, args.latency),
    }, indent=2))  # fmt: skip


def real(url: str, model: str, episodes: int, concurrency: int) -> None:
    """The tool agent's batch against a real server (module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "p"
        with Project.create(root) as p:
            save_profile(Profiles(p.db), ModelProfile(
                name="real", base_url=url, model=model, api_key_env="", max_retries=2,
                timeout_s=120.0, max_output_tokens=96,
            ))  # fmt: skip
            judge.probe_and_save(p, "real")
            batch_id, _jobs = queue_batch(p, parse_manifest({
                "format": "workbench-batch/1", "name": "llm-bench-real", "scenarios": ["stack-two"],
                "personas": ["novice"], "runs": episodes,
                "agents": [{"name": "tool-agent", "kind": "llm", "options": {"profile": "real"}}],
            }))  # fmt: skip
        start = time.monotonic()
        stats = run_worker(root, concurrency=concurrency, drain=True, kinds=[EPISODE_KIND],
                           kind_modules=["judge", "sim.batch"], log=lambda _r: None)  # fmt: skip
        wall = time.monotonic() - start
        with Project.open(root) as p:
            ids = [str(c.episode_id) for c in p.batches.cells(batch_id) if c.episode_id]
            totals = p.episodes.call_totals_by_episode(ids)
            latencies = [x.latency_s for eid in ids for x in p.episodes.exchanges(eid)
                         if x.latency_s]  # fmt: skip
            statuses = [p.episodes.get(eid).status.value for eid in ids]
    replies = sum(t.replies for t in totals.values())
    mean_latency = sum(latencies) / len(latencies) if latencies else 0.0
    ideal = len(latencies) * mean_latency / concurrency
    print(json.dumps({
        "bench": "llm_batch_real", "server": url, "model": model,
        "episodes": episodes, "done": stats.done, "failed": stats.failed, "statuses": statuses,
        "calls": len(latencies), "calls_per_episode": round(len(latencies) / max(1, episodes), 1),
        "replies": replies,
        "repaired_share": round(sum(t.repaired for t in totals.values()) / max(1, replies), 3),
        "silenced_share": round(sum(t.silenced for t in totals.values()) / max(1, replies), 3),
        "tokens_out": sum(t.tokens_out for t in totals.values()),
        "mean_call_latency_s": round(mean_latency, 2), "concurrency": concurrency,
        "wall_s": round(wall, 2), "ideal_s": round(ideal, 2),
        "throughput_of_ideal": round(ideal / wall, 3) if wall > 0 else None,
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
