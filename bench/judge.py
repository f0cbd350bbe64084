"""bench/judge: judge throughput against a loopback server, per-call overhead, frames decoded.

Builds a project of 64 cases, each with one 854×480 H.264 clip (4–6 s, cut with the bench clip
recipe of bench/_clips.py; the cases share a few distinct clips), one model profile pointing at
the loopback OpenAI-compatible server of tests/judge, and one ``judge.video`` job per video.
The server plays a consistent all-yes judge and answers every call after a fixed latency.

- Throughput: the jobs run in-process through ``run_worker`` (1 s per call, concurrency 8).
  The ideal time is calls × latency / concurrency (calls counted at the server); the figure is
  ideal / actual (goal ≥ 0.8). Where the rest went: the client's round trip per call (from the
  audit trail), a job's time outside its calls, and the CPU seconds the process used.
- Per-call overhead: a smaller batch at latency 0 and concurrency 1; wall time / calls covers
  frame extraction, JPEG encoding, the HTTP round trip on loopback, reply validation and the
  database writes (goal ≤ 50 ms at 480p). Its parts are timed directly as well, on runs of the
  real pipeline with an in-process scripted model (no HTTP, no database): the frame work is
  what happens before a run's first call (f1 and the 8 + 24 uniform frames, decoded, resized
  and encoded); then writing one call to the audit trail, and one finished run.
- Frames: decoded per video (sampler reads, from the stored run stats) against frames sent,
  and the frames FFmpeg's decoder actually output while sampling (references included).

Prints one JSON object on stdout; progress goes to stderr.

    python bench/judge.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The repository first: this file's folder (sys.path[0], where _clips comes from) would otherwise
# make this script, not the package, what `import judge` finds. It also holds tests/judge.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _clips import BFRAMES, GOP, make_cut

from judge import JudgeConfig, ModelProfile, queue_judge, run_worker, save_profile
from storage import JudgeRuns, Project, import_cases
from tests.judge.fakeserver import Action, Delay, FakeServer
from tests.judge.wire import wire_responder

PROFILE = "loopback"


@dataclass(frozen=True)
class Plan:
    videos: int  # judged in the throughput run
    latency_s: float  # per call, at the server
    concurrency: int
    overhead_videos: int  # judged again at latency 0, concurrency 1
    clips: tuple[tuple[int, int], ...]  # (start, seconds) cut from the recipe's test pattern
    direct_reps: int  # videos timed directly (frames, scripted pipeline, database writes)


FULL = Plan(64, 1.0, 8, 8, ((0, 5), (10, 4), (20, 6), (30, 5)), 8)
QUICK = Plan(8, 0.2, 4, 2, ((0, 5), (10, 4)), 1)


_T0 = time.perf_counter()


def log(msg: str) -> None:
    print(f"[bench/judge {time.perf_counter() - _T0:6.1f} s] {msg}", file=sys.stderr, flush=True)


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else 0.0


@contextmanager
def stopwatch() -> Iterator[list[float]]:
    """``with stopwatch() as t: ...`` leaves the elapsed seconds in ``t[0]``."""
    t = [0.0]
    t0 = time.perf_counter()
    try:
        yield t
    finally:
        t[0] = time.perf_counter() - t0


# ---- clips and project ---------------------------------------------------------------------


def link_or_copy(src: Path, dst: Path) -> None:
    """The importer only reads the case folders (and dedups media by sha): a link will do."""
    try:
        os.link(src, dst)
    except OSError:  # another file system
        shutil.copyfile(src, dst)


def make_project(root: Path, clips: list[Path], n_videos: int, base_url: str) -> Path:
    """n_videos cases, one video each (the clips in turn), and the loopback model profile."""
    stills = []
    for k, clip in enumerate(clips):
        still = root / f"initial_{k}.png"
        subprocess.run(
            ["ffmpeg", "-loglevel", "error", "-y", "-i", str(clip), "-frames:v", "1",
             "-vf", "scale=512:-2", str(still)],
            check=True,
        )  # fmt: skip
        stills.append(still)
    cases = root / "cases"
    for n in range(n_videos):
        case = cases / f"bench_{n:03d}"
        (case / "videos").mkdir(parents=True)
        link_or_copy(clips[n % len(clips)], case / "videos" / "clip.mp4")
        shutil.copyfile(stills[n % len(stills)], case / "initial.png")
        (case / "case.json").write_text(
            json.dumps(
                {
                    "id": f"bench_{n:03d}",
                    "goal": "Put the red block on the blue plate.",
                    "domain": "others",
                    "clutter": "none",
                    "initial_image": "initial.png",
                    "videos": [
                        {"file": "videos/clip.mp4", "role": "generated", "model": "bench",
                         "seed": n}
                    ],
                }
            )
        )  # fmt: skip
    project = root / "project"
    with Project.create(project) as p:
        import_cases(p, cases)
        save_profile(
            p.profiles,
            ModelProfile(name=PROFILE, base_url=base_url, model="fake-vlm", api_key_env="",
                         price_in_per_mtok=0.5, price_out_per_mtok=2.0),
        )  # fmt: skip
    return project


# ---- the loopback judge --------------------------------------------------------------------


class LoopbackJudge:
    """A FakeServer responder: the all-yes wire judge, answered after ``latency_s``."""

    def __init__(self) -> None:
        self.latency_s = 0.0
        self._reply = wire_responder()

    def __call__(self, body: dict[str, Any], n: int) -> Action:
        reply = self._reply(body, n)
        return Delay(self.latency_s, reply) if self.latency_s > 0 else reply


def peak_in_flight(arrivals: list[float], latency_s: float) -> int:
    """Most requests the server held at once (each is held latency_s after it arrives)."""
    events = sorted([(t, 1) for t in arrivals] + [(t + latency_s, -1) for t in arrivals])
    peak = held = 0
    for _, step in events:  # at equal times a departure (-1) sorts before an arrival
        held += step
        peak = max(peak, held)
    return peak


@dataclass
class JobLog:
    """The worker's log sink: job durations kept, warnings and errors passed on to stderr."""

    job_seconds: list[float] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, record: dict[str, Any]) -> None:
        if record.get("event") == "job.done":
            with self._lock:
                self.job_seconds.append(float(record["seconds"]))
        elif record.get("level") in ("warning", "error"):
            print(json.dumps(record, default=str), file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Batch:
    name: str
    job_ids: list[int]
    calls: int
    wall_s: float
    cpu_s: float  # this process, the loopback server's threads included
    arrivals: list[float]
    job_seconds: list[float]
    counts: dict[str, int]
    cost_usd: float


def judge_batch(
    project: Path,
    srv: FakeServer,
    judge: LoopbackJudge,
    video_ids: list[str],
    *,
    name: str,
    latency_s: float,
    concurrency: int,
) -> Batch:
    """Queue one job per video, then run a draining worker in-process and time it."""
    with Project.open(project) as p:
        _, job_ids = queue_judge(p, video_ids, profile=PROFILE, batch=name)
    judge.latency_s = latency_s
    before = len(srv.chat_requests)
    sink = JobLog()
    log(f"{name}: {len(video_ids)} videos, {latency_s:g} s per call, concurrency {concurrency}")
    cpu0 = time.process_time()
    with stopwatch() as wall:
        run_worker(project, concurrency=concurrency, drain=True, lease_s=60, log=sink)
    cpu_s = time.process_time() - cpu0
    requests = srv.chat_requests[before:]
    with Project.open(project) as p:
        counts = p.jobs.counts(batch=name)
        cost = sum(j.cost_usd for j in p.jobs.query(batch=name))
    log(f"{name}: {len(requests)} calls in {wall[0]:.1f} s; jobs {counts}")
    return Batch(name, job_ids, len(requests), wall[0], cpu_s, [r.at for r in requests],
                 sink.job_seconds, counts, cost)  # fmt: skip


def run_stats(project: Path, job_ids: list[int]) -> tuple[list[dict[str, Any]], float]:
    """The ``stats`` of the finished runs of these jobs (from ``judge_runs.scores``), and the
    mean round trip of their calls as the client timed it (``judge_calls.latency_s``)."""
    done = f"status = 'done' AND job_id IN ({','.join('?' * len(job_ids))})"
    with Project.open(project) as p:
        rows = p.db.execute(f"SELECT scores FROM judge_runs WHERE {done}", job_ids).fetchall()
        (latency,) = p.db.execute(
            "SELECT AVG(latency_s) FROM judge_calls "
            f"WHERE run_id IN (SELECT id FROM judge_runs WHERE {done})",
            job_ids,
        ).fetchone()
    return [dict(json.loads(r[0]).get("stats", {})) for r in rows], float(latency or 0.0)


# ---- direct timings --------------------------------------------------------------------------


@dataclass
class Direct:
    """The parts of the per-call overhead, timed one at a time on single videos."""

    frames_s: list[float] = field(default_factory=list)  # start of a run to its first call
    pipeline_s: list[float] = field(default_factory=list)  # a whole run, scripted model
    codec_frames: list[float] = field(default_factory=list)  # decoder output during a run
    encode_s: list[float] = field(default_factory=list)  # one 512 px JPEG
    record_call_s: list[float] = field(default_factory=list)  # one call into the audit trail
    finish_s: list[float] = field(default_factory=list)  # one finished run's results


@contextmanager
def counting_decoder() -> Iterator[list[int]]:
    """Count the frames FFmpeg's decoder outputs (every frame decoded, wanted or not)."""
    from storage.media import _av, _reader

    count = [0]
    original = _av.decode_packet

    def counted(stream: Any, packet: Any) -> Any:
        frames = original(stream, packet)
        count[0] += len(frames)
        return frames

    _av.decode_packet = _reader.decode_packet = counted
    try:
        yield count
    finally:
        _av.decode_packet = _reader.decode_packet = original


def time_direct(p: Project, video_id: str, out: Direct) -> None:
    """One run of the real pipeline with an in-process scripted model (no HTTP, no database):
    its frame work is everything before the first call (f1, the Task and Physics samples,
    decoded and encoded); then its calls and result are written as the job writes them."""
    from judge import PROMPT_VERSION, ScriptedModel, judge_video, perfect_judge
    from judge._api import CallRecord, Message, Tool, ToolCall
    from judge._pipeline import run_config
    from judge._pipeline._frames import encode_jpeg
    from judge._video_job import run_call
    from storage.media import FrameReader, read_image_rgb

    cfg = JudgeConfig()
    video = p.video(video_id)
    case = p.case(video.case_id)
    path, index = p.video_path(video), p.video_index(video)
    f1 = read_image_rgb(p.media_path(case.initial_image))
    play, first_call = perfect_judge(), []

    def respond(stage: str, messages: Sequence[Message], tools: Sequence[Tool]) -> ToolCall:
        first_call.append(first_call[0] if first_call else time.perf_counter())
        return play(stage, messages, tools)

    records: list[CallRecord] = []
    api = ScriptedModel(respond, recorder=records.append)
    with counting_decoder() as decoded:
        t0 = time.perf_counter()
        result = judge_video(api, path, index, case.goal, f1, config=cfg)
        out.pipeline_s.append(time.perf_counter() - t0)
    out.frames_s.append(first_call[0] - t0)
    out.codec_frames.append(decoded[0])

    with FrameReader(path, index) as reader:
        rgb = reader.read(index.frame_count // 2)
    with stopwatch() as t:
        for _ in range(result.frames_sent + 1):
            encode_jpeg(rgb, roi=None, max_side=cfg.max_side, quality=cfg.jpeg_quality)
    out.encode_s.append(t[0] / (result.frames_sent + 1))

    runs = JudgeRuns(p.db)
    run_id = runs.start(job_id=None, video_id=video_id, profile="scripted", model="scripted",
                        mode="gated", prompt_version=PROMPT_VERSION,
                        config=run_config(cfg, "gated"))  # fmt: skip
    for r in records:
        call = run_call(r)
        with stopwatch() as t:
            runs.record_call(run_id, call)
        out.record_call_s.append(t[0])
    with stopwatch() as t:
        runs.finish(run_id, result.to_run_result())
    out.finish_s.append(t[0])


# ---- the bench -------------------------------------------------------------------------------


def run(plan: Plan) -> dict[str, Any]:
    clips = [make_cut(start, seconds) for start, seconds in plan.clips]
    judge = LoopbackJudge()
    with tempfile.TemporaryDirectory() as tmp, FakeServer(judge) as srv:
        log(f"project: {plan.videos} videos from {len(clips)} clips")
        project = make_project(Path(tmp), clips, plan.videos, srv.base_url)
        with Project.open(project) as p:
            videos = [v.id for v in p.videos()]
            indexes = [p.video_index(v) for v in p.videos()]
        assert len(videos) == plan.videos, f"{len(videos)} videos imported"

        main = judge_batch(project, srv, judge, videos, name="throughput",
                           latency_s=plan.latency_s, concurrency=plan.concurrency)  # fmt: skip
        cold = judge_batch(project, srv, judge, videos[: plan.overhead_videos],
                           name="overhead", latency_s=0.0, concurrency=1)  # fmt: skip
        stats, call_s = run_stats(project, main.job_ids)

        log(f"direct timings on {plan.direct_reps} video(s)")
        d = Direct()
        with Project.open(project) as p:
            for vid in videos[: plan.direct_reps]:
                time_direct(p, vid, d)

    calls_per_video = main.calls / plan.videos
    ideal_s = main.calls * plan.latency_s / min(plan.concurrency, plan.videos)
    per_call_s = cold.wall_s / cold.calls
    frames_s = mean(d.frames_s) / calls_per_video
    db_s = mean(d.record_call_s) + mean(d.finish_s) / calls_per_video
    decoded = mean([float(s.get("frames_decoded", 0)) for s in stats])
    sent = mean([float(s.get("frames_sent", 0)) for s in stats])
    return {
        "bench": "judge",
        "videos": plan.videos,
        "clip": {
            "width": indexes[0].width,
            "height": indexes[0].height,
            "fps": round(indexes[0].fps, 3),
            "distinct_clips": len(clips),
            "seconds": [s for _, s in plan.clips],
            "gop": GOP,
            "bframes": BFRAMES,
        },
        "cpu_count": os.cpu_count(),
        "latency_s": plan.latency_s,
        "concurrency": plan.concurrency,
        "throughput": {
            "jobs": main.counts,
            "calls": main.calls,
            "calls_per_video": round(calls_per_video, 2),
            "wall_s": round(main.wall_s, 2),
            "ideal_s": round(ideal_s, 2),
            "throughput_fraction": round(ideal_s / main.wall_s, 3),
            "goal_throughput_fraction": 0.8,
            "server_peak_in_flight": peak_in_flight(main.arrivals, plan.latency_s),
            "job_s_mean": round(mean(main.job_seconds), 2),
            "job_s_ideal": round(calls_per_video * plan.latency_s, 2),
            # the client's round trip per call, and a job's time spent outside its calls
            "call_s_mean": round(call_s, 3),
            "outside_calls_s_per_job": round(mean(main.job_seconds) - calls_per_video * call_s, 2),
            "cpu_s": round(main.cpu_s, 1),
            "cpu_s_per_video": round(main.cpu_s / plan.videos, 2),
            "cpu_busy_fraction": round(main.cpu_s / (main.wall_s * (os.cpu_count() or 1)), 3),
            "cost_usd": round(main.cost_usd, 6),
        },
        "overhead": {
            "videos": plan.overhead_videos,
            "jobs": cold.counts,
            "calls": cold.calls,
            "wall_s": round(cold.wall_s, 2),
            "ms_per_call": ms(per_call_s),
            "goal_ms_per_call": 50,
            # ms_per_call in parts: frame extraction and encoding, the database writes (the
            # run's result amortised over its calls), and the rest: the OpenAI client, HTTP on
            # loopback with the server's side, reply validation, claiming and completing jobs
            "frames_ms_per_call": ms(frames_s),
            "db_ms_per_call": ms(db_s),
            "client_http_other_ms_per_call": ms(per_call_s - frames_s - db_s),
            "direct": {
                "videos": plan.direct_reps,
                "frames_ms_per_video": ms(mean(d.frames_s)),
                "encode_ms_per_image": ms(mean(d.encode_s)),
                "pipeline_scripted_ms_per_video": ms(mean(d.pipeline_s)),
                "db_record_call_ms": ms(mean(d.record_call_s)),
                "db_finish_run_ms": ms(mean(d.finish_s)),
            },
        },
        "frames": {
            "decoded_per_video": round(decoded, 2),
            "sent_per_video": round(sent, 2),
            "decoded_per_sent": round(decoded / sent, 3) if sent else None,
            "images_sent_per_video": round(
                mean([float(s.get("images_sent", 0)) for s in stats]), 2
            ),
            "codec_frames_decoded_per_video": round(mean(d.codec_frames), 1),
            "frames_in_clip_mean": round(mean([float(i.frame_count) for i in indexes]), 1),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 videos, 0.2 s per call, 4 lanes")
    args = parser.parse_args()
    print(json.dumps(run(QUICK if args.quick else FULL), indent=2))


if __name__ == "__main__":
    main()
