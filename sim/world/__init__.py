"""World vocabulary shared by every mode: scene graph, semantic actions, grounding, rules."""

from sim.world._actions import (
    DIRECTIONS,
    Action,
    ActionFormatError,
    Check,
    Grounded,
    Verb,
    Verdict,
    parse_command,
)
from sim.world._graph import GRIPPER, GraphDiff, Node, Relation, SceneGraph, diff
from sim.world._grounder import SYNONYMS, Resolution, ground
from sim.world._layout import (
    Layout,
    LayoutError,
    ObjectInfo,
    Placed,
    Placement,
    SceneInfo,
    sample_layout,
)
from sim.world._protocol import ANOMALY_KINDS, Anomaly, Outcome, TickReport, World
from sim.world._rules import (
    COOK_SECONDS,
    OPEN_AT,
    apply,
    check,
    free_spot,
    heat_step,
    symbolic_ticks,
    with_cooking,
)

__all__ = [
    "ANOMALY_KINDS",
    "COOK_SECONDS",
    "DIRECTIONS",
    "GRIPPER",
    "OPEN_AT",
    "SYNONYMS",
    "Action",
    "ActionFormatError",
    "Anomaly",
    "Check",
    "GraphDiff",
    "Grounded",
    "Layout",
    "LayoutError",
    "Node",
    "ObjectInfo",
    "Outcome",
    "Placed",
    "Placement",
    "Relation",
    "Resolution",
    "SceneGraph",
    "SceneInfo",
    "TickReport",
    "Verb",
    "Verdict",
    "World",
    "apply",
    "check",
    "diff",
    "free_spot",
    "ground",
    "heat_step",
    "parse_command",
    "sample_layout",
    "symbolic_ticks",
    "with_cooking",
]
