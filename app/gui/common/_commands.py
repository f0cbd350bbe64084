"""Every menu action and shortcut, declared once as data (no Qt here).

The main window turns these into QActions; the help overlay and the shortcut editor list them;
users override keys in ``<config_dir>/shortcuts.json``. ``scope`` says where a key is live:
``global`` everywhere in the window, ``player``/``gates`` while the annotate workspace is shown.
Keys in overlapping scopes must differ; :func:`conflicts` finds those that do not.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Command:
    id: str
    title: str
    keys: tuple[str, ...]  # Qt key sequence strings, portable text form
    scope: str  # global | player | gates
    menu: str  # File | Edit | View | Play | Annotate | Judge | Results | Help
    help: str = ""


COMMANDS: tuple[Command, ...] = (
    # File
    Command("project.new", "&New Project…", ("Ctrl+N",), "global", "File"),
    Command("project.open", "&Open Project…", ("Ctrl+O",), "global", "File"),
    Command(
        "project.import",
        "&Import Cases…",
        ("Ctrl+I",),
        "global",
        "File",
        "Import a case folder or a folder of cases (you can also drop it on the window)",
    ),
    Command("project.export", "&Export Annotations…", ("Ctrl+E",), "global", "File"),
    Command("app.quit", "&Quit", ("Ctrl+Q",), "global", "File"),
    # Edit
    Command("edit.undo", "&Undo", ("Ctrl+Z",), "global", "Edit"),
    Command("edit.redo", "&Redo", ("Ctrl+Shift+Z", "Ctrl+Y"), "global", "Edit"),
    # View
    Command(
        "view.annotate",
        "&Annotate Workspace",
        ("Ctrl+1",),
        "global",
        "View",
        "Player, rubric and evidence: score videos by hand",
    ),
    Command(
        "view.judge",
        "&Judge Workspace",
        ("Ctrl+2",),
        "global",
        "View",
        "Player, judge trace and jobs: run and audit the VLM judge",
    ),
    Command(
        "view.results",
        "&Results Workspace",
        ("Ctrl+3",),
        "global",
        "View",
        "Leaderboard, agreement with CIs, judge vs human, disagreements",
    ),
    Command(
        "view.episode",
        "&Episode Workspace",
        ("Ctrl+4",),
        "global",
        "View",
        "A recorded episode on one playhead: timeline, transcript, state at the tick",
    ),
    Command(
        "view.teleop",
        "&Teleop Workspace",
        ("Ctrl+5",),
        "global",
        "View",
        "Drive the arm by hand and record demonstrations (keys work while the view has focus)",
    ),
    Command(
        "view.save_layout",
        "Save &Layout to File…",
        (),
        "global",
        "View",
        "Every workspace's dock arrangement, to hand to others",
    ),
    Command("view.load_layout", "Load Layout from &File…", (), "global", "View"),
    # Play
    Command(
        "play.toggle",
        "Play / Pause",
        ("Space",),
        "player",
        "Play",
        "The video; in the Episode workspace the episode (a live run plays or pauses)",
    ),
    Command(
        "play.step_fwd",
        "Next Frame / Tick",
        ("Right",),
        "player",
        "Play",
        "One frame on; in the Episode workspace one tick (a paused live run steps)",
    ),
    Command("play.step_back", "Previous Frame / Tick", ("Left",), "player", "Play"),
    Command(
        "play.hop_fwd",
        "Hop Forward",
        ("Shift+Right",),
        "player",
        "Play",
        "Jump ahead by the hop size in frames or ticks (WB_HOP_FRAMES, default 10)",
    ),
    Command("play.hop_back", "Hop Back", ("Shift+Left",), "player", "Play", "Frames or ticks"),
    Command("play.first", "First Frame / Tick", ("Home",), "player", "Play"),
    Command("play.last", "Last Frame / Tick", ("End",), "player", "Play"),
    Command("play.slower", "Slower", ("-",), "player", "Play", "Playback speed down (0.1× min)"),
    Command("play.faster", "Faster", ("=",), "player", "Play", "Playback speed up (2× max)"),
    Command("play.mark_in", "Set Range Start", ("I",), "player", "Play"),
    Command("play.mark_out", "Set Range End", ("O",), "player", "Play"),
    Command("play.loop", "Loop Range", ("L",), "player", "Play", "Loop playback inside the range"),
    Command(
        "play.next_candidate",
        "Next Candidate Window",
        ("]",),
        "player",
        "Play",
        "Jump to the next window the continuity scan suggests looking at (a suggestion only)",
    ),
    Command("play.prev_candidate", "Previous Candidate Window", ("[",), "player", "Play"),
    Command("video.next", "Next Video", ("Ctrl+Down",), "global", "Annotate"),
    Command("video.prev", "Previous Video", ("Ctrl+Up",), "global", "Annotate"),
    # Annotate
    Command("gate.pass", "Answer Yes (pass)", ("Y",), "gates", "Annotate"),
    Command("gate.fail", "Answer No (fail)", ("N",), "gates", "Annotate"),
    Command("gate.na", "Answer N/A (P1 only)", ("A",), "gates", "Annotate"),
    Command("gate.unresolved", "Answer Unresolved", ("U",), "gates", "Annotate"),
    Command("gate.clear", "Clear Answer", ("Backspace",), "gates", "Annotate"),
    Command("gate.next", "Next Gate", ("J", "Down"), "gates", "Annotate"),
    Command("gate.prev", "Previous Gate", ("K", "Up"), "gates", "Annotate"),
    Command("subgoal.next", "Next Subgoal", ("PgDown",), "gates", "Annotate"),
    Command("subgoal.prev", "Previous Subgoal", ("PgUp",), "gates", "Annotate"),
    Command("subgoal.add", "Add Subgoal…", ("Ctrl+Shift+N",), "gates", "Annotate"),
    Command("subgoal.edit", "Edit Subgoal…", ("F2",), "gates", "Annotate"),
    Command("subgoal.delete", "Delete Subgoal", ("Ctrl+Shift+Delete",), "gates", "Annotate"),
    Command(
        "evidence.mark",
        "Mark Evidence",
        ("M",),
        "gates",
        "Annotate",
        "Mark the range (or the current frame) as evidence for the current gate",
    ),
    # Judge
    Command(
        "judge.run",
        "&Judge Videos…",
        ("Ctrl+J",),
        "global",
        "Judge",
        "Queue VLM judge jobs for this video, its case, or the whole project",
    ),
    Command(
        "jobs.workers",
        "Start / Stop Local &Worker",
        (),
        "global",
        "Judge",
        "Run queued jobs in a background worker process on this machine",
    ),
    Command("jobs.show", "Show &Jobs", ("Ctrl+Shift+J",), "global", "Judge"),
    # Results (blind mode of a shared project: app/gui/common/_roles.py)
    Command(
        "results.unlock",
        "&Unlock as Lead…",
        (),
        "global",
        "Results",
        "Show results, judge scores and generators in this window (the lead's passphrase)",
    ),
    Command(
        "results.lock",
        "&Lock (Rater View)",
        (),
        "global",
        "Results",
        "Hide results, judge scores and generators again until the passphrase is given",
    ),
    Command(
        "results.blind",
        "&Blind Mode…",
        (),
        "global",
        "Results",
        "Turn the project's blind mode on or off: while on, the project opens in the rater view",
    ),
    # Help
    Command("help.shortcuts", "Keyboard &Shortcuts", ("F1", "?"), "global", "Help"),
    Command("help.edit_shortcuts", "&Edit Shortcuts…", (), "global", "Help"),
    Command("help.about", "&About Rollout Workbench", (), "global", "Help"),
)

_OVERLAP = {("global", s) for s in ("global", "player", "gates")} | {
    ("player", "gates"),
    ("player", "player"),
    ("gates", "gates"),
}


def by_id() -> dict[str, Command]:
    return {c.id: c for c in COMMANDS}


def where(command_id: str) -> str:
    """Where a command is, for a sentence that tells the next step: its menu, its title and
    its default key, e.g. "Judge → Judge Videos… (Ctrl+J)"."""
    c = by_id()[command_id]
    key = f" ({c.keys[0]})" if c.keys else ""
    return f"{c.menu} → {c.title.replace('&', '')}{key}"


def effective_keys(overrides: Mapping[str, list[str]]) -> dict[str, tuple[str, ...]]:
    """Keys per command after the user's overrides (unknown ids are ignored)."""
    return {c.id: tuple(overrides.get(c.id, c.keys)) for c in COMMANDS}


def conflicts(keys: Mapping[str, Iterable[str]]) -> list[tuple[str, str, str]]:
    """(key, command a, command b) for every key bound twice in overlapping scopes."""
    scope = {c.id: c.scope for c in COMMANDS}
    seen: dict[str, list[str]] = {}
    out = []
    for cid, ks in keys.items():
        for k in ks:
            norm = k.strip().lower()
            for other in seen.get(norm, []):
                pair = (scope[other], scope[cid])
                if pair in _OVERLAP or pair[::-1] in _OVERLAP:
                    out.append((k, other, cid))
            seen.setdefault(norm, []).append(cid)
    return out


def load_overrides(path: Path) -> dict[str, list[str]]:
    """Read the user's shortcut overrides; a broken file is reported, not fatal."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: cannot read shortcut overrides: {e}") from None
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise ValueError(f"{path}: expected {{command id: [keys]}}")
    known = by_id()
    unknown = [k for k in data if k not in known]
    if unknown:
        raise ValueError(f"{path}: unknown command id(s): {', '.join(unknown)}")
    return {k: [str(x) for x in v] for k, v in data.items()}


def save_overrides(path: Path, overrides: Mapping[str, list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(dict(overrides), indent=2, sort_keys=True), "utf-8")
    tmp.replace(path)
