"""Storing an episode bundle: all or nothing, idempotent, and brief under the write lock.

Everything slow happens before the project's write lock is taken: reading and checking the
bundle (:func:`read_bundle`), hashing, checking and indexing its videos and copying them beside
their places in ``media/``, building every row. The rows then go in as
:class:`storage.EpisodeImport` describes: in chunks, each a brief transaction, the last one
adding the videos and the digest that marks the import done; a failure on the way deletes the
episode again. So another writer (an ``episode note``, a rater's answer) waits a moment, not
the length of the import, and a refused bundle leaves the project and ``media/`` as they were.

A bundle is recognised by its digest (the manifest, the stream and each video's sha256), kept
in the episode's ``config``: importing the same bundle again finds that episode, changes
nothing and says so, as case and work-bundle imports do. An imported episode has no scenario
file behind it: it is not replayed or forked, and says so.
"""

from __future__ import annotations

import hashlib
import json
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.review._bundle import MANIFEST, Bundle, BundleFormatError, Ev, read_bundle
from storage import (
    ActionRecord,
    ActionSource,
    ConditionRecord,
    EpisodeError,
    EpisodeImport,
    EventRecord,
    Project,
    StagedVideo,
    TickRecord,
    TurnRecord,
)
from storage.media import MediaError, file_sha256


@dataclass(frozen=True)
class BundleImport:
    """What importing a bundle did: the episode it is, and whether this import added it."""

    episode_id: str
    added: bool  # False: the same bundle was imported before, and nothing changed

    def summary(self, source: Path | str) -> str:
        if self.added:
            return f"episode {self.episode_id[:8]} imported from {source}"
        return (f"{source} was imported before, as episode {self.episode_id[:8]}; "
                "nothing changed")  # fmt: skip


def import_bundle(project: Project, root: Path) -> str:
    """Store the bundle's episode; returns its id (the earlier one if it was imported before)."""
    return import_episode_bundle(project, root).episode_id


def import_episode_bundle(project: Project, root: Path) -> BundleImport:
    """Store the bundle's episode unless the same bundle is already in the project (see the
    module docstring)."""
    b = read_bundle(root)
    shown = Path(root) / MANIFEST
    shas: dict[Path, str] = {}
    for k, (path, _v) in enumerate(b.videos):
        if path not in shas:
            try:
                shas[path] = file_sha256(path)
            except OSError as err:
                raise BundleFormatError(f"{shown}: videos.{k}.file: cannot be read "
                                        f"({err.strerror or err})") from None  # fmt: skip
    with EpisodeImport(project, _digest(b, shas)) as job:
        found = job.found()
        if found is not None:
            return BundleImport(found, added=False)
        rows = _Rows(b)
        b.lines.clear()  # now rows: the parsed lines need not stay in memory too
        staged = []
        for k, (path, v) in enumerate(b.videos):
            try:
                staged.append((v.camera, job.stage_video(path, shas[path])))
            except MediaError as err:
                raise BundleFormatError(f"{shown}: videos.{k}.file: {err}") from None
        try:
            return rows.store(project, job, staged)
        except EpisodeError as err:
            raise BundleFormatError(f"{Path(root)}: {err}") from None


def _digest(b: Bundle, shas: dict[Path, str]) -> str:
    """What makes two bundles the same: manifest, stream and every video's content."""
    h = hashlib.sha256(f"{b.meta.format}\0{b.manifest_sha256}\0{b.stream_sha256}".encode())
    for path, _v in b.videos:
        h.update(f"\0{shas[path]}".encode())
    return h.hexdigest()


class _Rows:
    """Every row of the episode, built before the write lock."""

    def __init__(self, b: Bundle) -> None:
        m = self.meta = b.meta
        self.ticks = [TickRecord(t, hashlib.sha256(text.encode()).hexdigest(), graph_json=text)
                      for t, text in b.states]  # fmt: skip
        self.beliefs = b.beliefs
        self.actions: list[ActionRecord] = []
        for x in b.of("action", "rejected"):
            accepted = x.type == "action"
            self.actions.append(ActionRecord(
                idx=len(self.actions), tick=x.tick,
                source=ActionSource(x.source if accepted else "agent"),
                text=x.text, action_json=json.dumps({"verb": "say", "text": x.text}),
                accepted=accepted,
                failed_json="[]" if accepted else json.dumps(
                    [{"name": "rejected", "message": r} for r in x.reasons]),
                outcome=x.outcome if accepted else None,
                finished_tick=(x.end_tick if x.end_tick is not None else x.tick)
                if accepted else None,
            ))  # fmt: skip
        self.turns = [TurnRecord(k, x.tick, x.speaker, x.text, "say", x.flag)
                      for k, x in enumerate(b.of("say"))]  # fmt: skip
        self.events = _events(list(b.of("event")))
        self.contract = json.dumps([g.text for g in m.goal])
        self.conditions = [ConditionRecord(k, json.dumps({"text": g.text}), g.text,
                                           "T" if g.true_since is not None else "F",
                                           g.true_since) for k, g in enumerate(m.goal)]  # fmt: skip
        self.metrics = {} if m.success is None else {"success": float(m.success)}
        self.config: dict[str, Any] = {
            "imported": True, "bundle": str(b.root),
            "videos": [v.model_dump() for _p, v in b.videos],
        }  # fmt: skip

    def store(self, project: Project, job: EpisodeImport,
              videos: list[tuple[str, StagedVideo]]) -> BundleImport:  # fmt: skip
        """Write the episode in brief transactions (see :class:`storage.EpisodeImport`); if
        anything fails, or another import of the same bundle finished first, delete it again."""
        m, eps = self.meta, project.episodes
        eid = eps.create(
            scenario=m.scenario, scenario_sha=hashlib.sha256(m.scenario.encode()).hexdigest(),
            family=m.family, mode="symbolic", agent=m.agent, seed=m.seed, delta=m.tick_s,
            contract_json=self.contract,
            contract_hash=hashlib.sha256(self.contract.encode()).hexdigest(), config=self.config,
        )  # fmt: skip
        try:
            n = job.chunk
            for a in range(0, max(len(self.ticks), len(self.actions), len(self.turns)), n):
                eps.append(eid, ticks=self.ticks[a : a + n], actions=self.actions[a : a + n],
                           turns=self.turns[a : a + n])  # fmt: skip
            job.add_beliefs(eid, self.beliefs)
            eps.set_events(eid, self.events)
            with project.transaction():
                found = job.found()  # the same bundle, imported meanwhile by another
                if found is not None:
                    eps.delete(eid)
                    return BundleImport(found, added=False)
                eps.finish(eid, status=m.status, ticks=m.ticks, t_ref=None,
                           conditions=self.conditions, metrics=self.metrics,
                           end_reason=m.end_reason)  # fmt: skip
                job.complete(eid, videos)  # last: files move into media/ after every row
        except BaseException:
            with suppress(Exception):  # the error that got us here is the one to report
                eps.delete(eid)
            raise
        return BundleImport(eid, added=True)


def _events(lines: list[Ev]) -> list[EventRecord]:
    by_id: dict[str, dict[str, Any]] = {}
    for x in lines:
        e = by_id.setdefault(x.id, {"category": x.category, "kind": x.kind})
        e[x.what] = x.tick
        if x.resolution:
            e["resolution"] = x.resolution
    out = []
    for k, (eid, e) in enumerate(by_id.items()):
        out.append(EventRecord(
            idx=k, event_id=eid, category=e["category"], type=e["kind"],
            spec_json=json.dumps({"id": eid, "category": e["category"]}),
            status="resolved" if "resolve" in e else ("active" if "trigger" in e else "pending"),
            trigger_tick=e.get("trigger"), commit_tick=e.get("commit"),
            resolve_tick=e.get("resolve"), resolution=e.get("resolution"),
        ))  # fmt: skip
    return out
